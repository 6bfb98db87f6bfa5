"""The worker: claims jobs (jobs/claims.py), heartbeats while their handlers run them (handlers.py),
fails orphans and repeats the features' duties. `redolab serve` runs one in a thread of its own;
`redolab worker` runs more against PostgreSQL. It knows no feature's internals.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import uuid
from collections.abc import Mapping, Sequence

from sqlalchemy import update
from sqlalchemy.orm import sessionmaker

from redolab.core.db import utcnow
from redolab.handlers import DUTIES, HANDLERS
from redolab.jobs import claims
from redolab.jobs.handlers import Duty, JobContext, JobHandler, WorkerIdentity
from redolab.jobs.models import Job, JobStatus, WorkStatus

log = logging.getLogger("redolab.worker")

HEARTBEAT_SECONDS = 2.0
_JOB_STATUS = {WorkStatus.succeeded: JobStatus.done, WorkStatus.cancelled: JobStatus.cancelled}


def fail_orphans(sessions: sessionmaker, *, older_than_seconds: float | None = claims.STALE_SECONDS) -> int:
    """Fail running jobs whose worker stopped heartbeating (None: every running job)."""
    return claims.fail_orphans(sessions, handlers=HANDLERS, older_than_seconds=older_than_seconds)


class Worker:
    def __init__(
        self,
        sessions: sessionmaker,
        *,
        secret_key: str,
        worker_id: str | None = None,
        handlers: Mapping[str, JobHandler] = HANDLERS,
        duties: Sequence[Duty] = DUTIES,
    ) -> None:
        self.sessions, self.secret_key = sessions, secret_key
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.handlers = handlers
        reap = Duty("orphans", claims.STALE_SECONDS / 3, lambda _: claims.fail_orphans(sessions, handlers=handlers))
        self.duties = (reap, *duties)
        self.stopping = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None  # set from another thread: a job was queued here

    def wake(self) -> None:
        """A job was queued in this process: look now rather than at the next poll (thread-safe)."""
        if self._loop is not None and self._wake is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    def _heartbeat(self, job_id: int) -> None:
        with self.sessions() as session:
            session.execute(update(Job).where(Job.id == job_id).values(heartbeat_at=utcnow()))
            session.commit()

    async def run_job(self, job: Job) -> None:
        """Run a claimed job and mark how it ended. A job deleted meanwhile with its environment
        (a run's or import's rows go with it) ends quietly: its probes are stopped, nothing is marked."""
        last = [0.0]
        loop = asyncio.get_running_loop()

        def heartbeat() -> None:
            if loop.time() - last[0] >= HEARTBEAT_SECONDS:
                last[0] = loop.time()
                self._heartbeat(job.id)

        handler = self.handlers.get(job.kind)
        if handler is None:  # queued by a newer redolab, say: failed with the reason, never retried
            self._end(job, WorkStatus.failed, error=f"no handler for jobs of kind {job.kind!r} in this redolab")
            return
        context = JobContext(self.sessions, self.secret_key, heartbeat, self.stopping.is_set)
        try:
            status = await handler.execute(job, context)
            await asyncio.to_thread(handler.finished, self.sessions, job)
        except Exception:
            with self.sessions() as session:
                if session.get(Job, job.id) is not None:
                    raise
            status = None
        self._end(job, status)

    def _end(self, job: Job, status: WorkStatus | None, error: str | None = None) -> None:
        with self.sessions() as session:
            row = session.get(Job, job.id)
            if row is None or status is None:
                log.warning("job %s (%s) ended: it was deleted with its environment while it ran", job.id, job.kind)
                return
            row.status, row.finished_at = _JOB_STATUS.get(status, JobStatus.failed), utcnow()
            row.error = error or row.error
            session.commit()

    async def run_once(self) -> bool:
        """Run at most one job; True when one ran."""
        job = claims.claim_next(self.sessions, self.worker_id)
        if job is None:
            return False
        await self.run_job(job)
        return True

    async def run_forever(self, poll_seconds: float = 0.5) -> None:
        loop = asyncio.get_running_loop()
        self._loop, self._wake = loop, asyncio.Event()
        last_done = dict.fromkeys(self.duties, 0.0)
        beside: dict[Duty, asyncio.Task] = {}  # the duties that run in a thread: one of each at a time
        # Jobs run concurrently when their hosts differ; each claim checks the hosts are free.
        running: set[asyncio.Task] = set()
        while not self.stopping.is_set():
            for duty in self.duties:
                if loop.time() - last_done[duty] >= duty.every_seconds:
                    last_done[duty] = loop.time()
                    self._do(duty, beside)
            job = claims.claim_next(self.sessions, self.worker_id)
            if job is not None:
                task = asyncio.create_task(self.run_job(job))
                running.add(task)
                task.add_done_callback(running.discard)
                continue
            with contextlib.suppress(TimeoutError):  # jobs queued elsewhere are found by polling
                await asyncio.wait_for(self._wake.wait(), poll_seconds)
            self._wake.clear()
        await asyncio.gather(*running, *beside.values(), return_exceptions=True)

    def _do(self, duty: Duty, beside: dict[Duty, asyncio.Task]) -> None:
        if not duty.own_thread:
            self._guarded(duty)
        elif duty not in beside or beside[duty].done():
            beside[duty] = asyncio.create_task(asyncio.to_thread(self._guarded, duty))

    def _guarded(self, duty: Duty) -> None:
        """One round of a duty; a duty never stops the worker."""
        try:
            duty.run(WorkerIdentity(self.sessions, self.secret_key, self.worker_id))
        except Exception:
            log.exception("%s: a round failed", duty.name)

    def start_thread(self) -> threading.Thread:
        """Run in a daemon thread with its own event loop (the in-process worker of serve)."""
        thread = threading.Thread(target=lambda: asyncio.run(self.run_forever()), name="redolab-worker", daemon=True)
        thread.start()
        return thread
