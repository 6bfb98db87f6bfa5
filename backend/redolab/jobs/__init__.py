"""Level 3: the job table and the wake-up queue (the worker that runs jobs is redolab/worker.py, at
the top). Imports core only."""
