"""One interface for background work: a handler per kind of job, and the duties a worker repeats.

The worker (redolab/worker.py) claims a job, heartbeats while it runs and hands it to the handler
registered for the job's kind (redolab/handlers.py, at the top); it knows no feature's internals. A
feature with background work has a `handler.py` of its own; a new kind of job is one handler and
one line in the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.orm import Session, sessionmaker

from redolab.jobs.models import Job, WorkStatus


@dataclass(frozen=True)
class JobContext:
    """What a handler gets from the worker besides its job."""

    sessions: sessionmaker
    secret_key: str
    heartbeat: Callable[[], None]  # call it while working: it writes at most every few seconds
    shutting_down: Callable[[], bool]  # the worker is stopping: end soon, keep what was done


@dataclass(frozen=True)
class WorkerIdentity:
    """Who repeats a duty: the worker's database, key and name (a claim of a shared row names it)."""

    sessions: sessionmaker
    secret_key: str
    worker_id: str


class JobHandler(Protocol):
    """Runs one kind of job. `execute` may block the event loop only briefly: blocking database or
    file work goes to a thread (`asyncio.to_thread`)."""

    kind: str

    async def execute(self, job: Job, context: JobContext) -> WorkStatus:
        """Do the job; how it ended (succeeded, failed or cancelled) marks the job's row."""
        ...

    def orphaned(self, session: Session, job: Job) -> None:
        """The worker running `job` stopped (the row is marked failed, not yet committed): end the
        job's work with a reason, keep what it measured. Commits when it has more to do afterwards."""
        ...

    def finished(self, sessions: sessionmaker, job: Job) -> None:
        """The job's row is marked: what follows its end (in a thread; must not raise)."""
        ...


class NothingAfter:
    """For a handler with nothing to do after its job, or when its worker stopped, beyond failing the job."""

    def orphaned(self, session: Session, job: Job) -> None:
        return None

    def finished(self, sessions: sessionmaker, job: Job) -> None:
        return None


@dataclass(frozen=True)
class Duty:
    """Work a worker repeats every `every_seconds` whatever jobs run (firing schedules, sending
    notifications). `own_thread`: it may wait on peers, so it runs beside the loop, one at a time."""

    name: str
    every_seconds: float
    run: Callable[[WorkerIdentity], object]
    own_thread: bool = False


def by_kind(handlers: Iterable[JobHandler]) -> dict[str, JobHandler]:
    """The registry's table; two handlers of one kind are a mistake found at import."""
    table: dict[str, JobHandler] = {}
    for handler in handlers:
        if handler.kind in table:
            raise ValueError(f"two job handlers for the kind {handler.kind!r}")
        table[handler.kind] = handler
    return table
