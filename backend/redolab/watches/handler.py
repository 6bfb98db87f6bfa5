"""Background work of watches: checks fired when due (they are runs), each judged as its last run
ends, and notifications sent (beside the worker's loop: a dead receiver never delays runs)."""

from __future__ import annotations

from redolab.core.config import get_settings
from redolab.jobs.handlers import Duty, WorkerIdentity
from redolab.runs.handler import AfterRun
from redolab.watches.delivery import deliver_due
from redolab.watches.service import fire_due_watches, judge_run


def _deliver(worker: WorkerIdentity) -> int:
    return deliver_due(  # wait=False: a receiver still sending is left to its thread, the next poll skips it
        worker.sessions, settings=get_settings(), secret_key=worker.secret_key, worker_id=worker.worker_id, wait=False
    )


JUDGE_CHECK = AfterRun("watch check", lambda session, run: judge_run(session=session, run_id=run.id))
DUE_WATCHES = Duty("watch checks", 5.0, lambda worker: fire_due_watches(worker.sessions))
DELIVERIES = Duty("notifications", 5.0, _deliver, own_thread=True)
