"""Telling a worker that a job was queued. Services queue jobs (a row in `jobs`); pages and the API
call this afterwards so the in-process worker of `redolab serve` starts at once instead of at its
next poll. Separate `redolab worker` processes find the row by polling."""

from __future__ import annotations


def wake_local_worker(app) -> None:
    """Wake the in-process worker of `redolab serve`, if this process has one."""
    worker = getattr(app.state, "worker", None)
    if worker is not None:
        worker.wake()
