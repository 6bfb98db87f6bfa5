"""Collection: redo history read from the database itself, over the host's SSH, by a fixed read-only
set of scripts (scripts.py, sql/), whose output (output.py) goes through the same import pipeline as an
upload. This package is pure: the SSH transport, the job and the page call it."""
