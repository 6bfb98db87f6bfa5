"""Level 5: sweeps (a declarative grid of runs), schedules, cluster runs and compare. Imports
levels 0-4 (runs, never the reverse)."""
