"""Link watches: the requirement as a live objective (issue 37)."""
