"""Background work of sweeps: a grid of runs on one host pair (and kernel buffer sweeps), the
schedules that queue runs and sweeps when due, and a cluster's sum once its last run ends."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from redolab.core.db import utcnow
from redolab.jobs.handlers import Duty, JobContext, NothingAfter
from redolab.jobs.models import Job, WorkStatus
from redolab.runs.handler import AfterRun, end_orphaned_runs
from redolab.sweeps.clusters import record_together
from redolab.sweeps.models import Sweep
from redolab.sweeps.schedules import fire_due
from redolab.sweeps.sweeper import SweepExecution


class SweepHandler(NothingAfter):
    kind = "sweep"

    def __init__(self, steps: Sequence[AfterRun] = ()) -> None:
        self.steps = tuple(steps)  # what follows each run's end, for runs a stopped worker left

    async def execute(self, job: Job, context: JobContext) -> WorkStatus:
        return await SweepExecution(
            context.sessions,
            context.secret_key,
            job.sweep_id,
            heartbeat=context.heartbeat,
            shutting_down=context.shutting_down,
        ).execute()

    def orphaned(self, session: Session, job: Job) -> None:
        """The runs finished so far are kept; kernel settings not put back are said so."""
        sweep = session.get(Sweep, job.sweep_id) if job.sweep_id is not None else None
        if sweep is None:
            return
        if not sweep.status.finished:
            sweep.status = WorkStatus.cancelled if sweep.cancel_requested else WorkStatus.failed
            sweep.finished_at = utcnow()
            sweep.failure_reason = (
                f"the worker running it ({job.worker_id}) stopped, e.g. redolab was restarted "
                "mid-sweep; the runs finished so far are kept"
            )
            if sweep.kernel_original and sweep.kernel_restored is None:
                sweep.kernel_restored = False
                sweep.failure_reason += ". The original tcp_rmem/tcp_wmem were not put back: see below."
        end_orphaned_runs(session, sweep.runs, job.worker_id, self.steps)


CLUSTER_SUM = AfterRun("cluster sum", lambda session, run: record_together(session=session, cluster_id=run.cluster_id))
DUE_SCHEDULES = Duty("schedules", 5.0, lambda worker: fire_due(worker.sessions))
