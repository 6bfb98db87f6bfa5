"""Background work of probe runs: one run between two hosts, and what follows a run's end (a
rehearsal's figures, a watch's judgement, a cluster's sum: steps the registry passes in, since their
features sit above this one)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from redolab.core.db import utcnow
from redolab.jobs.handlers import JobContext
from redolab.jobs.models import Job, WorkStatus
from redolab.runs.models import Run
from redolab.runs.runner import RunExecution
from redolab.runs.service import store_summary

log = logging.getLogger("redolab.runs")


@dataclass(frozen=True)
class AfterRun:
    """A step taken as each run ends (normally or orphaned); one failing step never fails the run."""

    what: str
    step: Callable[[Session, Run], object]


def after_run(session: Session, run: Run, steps: Sequence[AfterRun]) -> None:
    for after in steps:
        try:
            after.step(session, run)
        except Exception:
            log.exception("after run %s: the %s step failed", run.id, after.what)
            session.rollback()


def end_orphaned_runs(session: Session, runs: Iterable[Run | None], worker_id: str, steps: Sequence[AfterRun]) -> None:
    """Runs whose worker stopped: cancelled when the user had asked for it (a cancel is never turned
    into a failure by a worker that died before it could act), else failed; either way the
    measurements received so far are kept and the probes end by their own caps. Commits."""
    ended = [run for run in runs if run is not None and not run.status.finished]
    for run in ended:
        run.status = WorkStatus.cancelled if run.cancel_requested else WorkStatus.failed
        run.finished_at = utcnow()
        run.failure_reason = (
            ("cancelled; " if run.cancel_requested else "")
            + f"the worker running it ({worker_id}) stopped, e.g. redolab was restarted mid-run; the measurements "
            "received so far are kept, and the probes ended by their own --max-duration and --idle-timeout caps"
        )
    session.commit()
    for run in ended:
        store_summary(session=session, run=run)
        after_run(session, run, steps)


class RunHandler:
    kind = "run"

    def __init__(self, steps: Sequence[AfterRun] = ()) -> None:
        self.steps = tuple(steps)

    async def execute(self, job: Job, context: JobContext) -> WorkStatus:
        execution = RunExecution(
            context.sessions,
            context.secret_key,
            job.run_id,
            heartbeat=context.heartbeat,
            shutting_down=context.shutting_down,
        )
        status, _ = await execution.execute()
        return status

    def orphaned(self, session: Session, job: Job) -> None:
        end_orphaned_runs(session, [session.get(Run, job.run_id)], job.worker_id, self.steps)

    def finished(self, sessions: sessionmaker, job: Job) -> None:
        """A long rehearsal's figures read every line of its runs: the worker calls this in a thread."""
        with sessions() as session:
            run = session.get(Run, job.run_id)
            if run is not None:
                after_run(session, run, self.steps)
