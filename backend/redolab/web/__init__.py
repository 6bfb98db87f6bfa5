"""Level 8: every HTML page and htmx fragment (workspace is the environment page), calling the
same services as the JSON API. Imports anything below; only main.py imports it."""
