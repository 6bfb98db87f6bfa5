"""The worker: claims jobs atomically, heartbeats while it runs them, fails orphans.

`redolab serve` runs one worker in a thread of its own; `redolab worker` runs more against
PostgreSQL. A job is claimed by exactly one worker; two jobs that share a host never run at once
(except the jobs of one run across several hops, queued together: the primary sends to each);
a job whose worker died is failed with a reason and never run again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import uuid
from datetime import timedelta

from sqlalchemy import and_, exists, or_, select, text, update
from sqlalchemy.orm import aliased, sessionmaker

from redolab.collect.execution import CollectionExecution
from redolab.collect.service import KIND as COLLECT_KIND
from redolab.collect.service import fail_orphaned_collection, fire_due_collections
from redolab.core.config import get_settings
from redolab.core.db import utcnow
from redolab.disktest.models import DiskTest
from redolab.disktest.service import DiskExecution
from redolab.jobs.models import Job, JobStatus
from redolab.redo import preview_jobs
from redolab.redo.imports import discard_orphan, execute_import
from redolab.redo.models import ImportStatus, RedoImport
from redolab.redo.service import discard_staged
from redolab.rehearsals.service import record_result
from redolab.runs.models import Run, RunStatus
from redolab.runs.runner import RunExecution
from redolab.runs.service import store_summary
from redolab.sweeps.clusters import record_together
from redolab.sweeps.models import Sweep
from redolab.sweeps.schedules import fire_due
from redolab.sweeps.sweeper import SweepExecution
from redolab.watches.notify import deliver_due
from redolab.watches.service import fire_due_watches, judge_run

log = logging.getLogger("redolab.worker")

HEARTBEAT_SECONDS = 2.0
STALE_SECONDS = 30.0
SCHEDULE_POLL_SECONDS = 5.0
STAGED_IMPORT_SECONDS = 3600.0  # an import staged in a request is long finished after this
ACTIVE = (JobStatus.queued, JobStatus.running)
CLAIM_LOCK_KEY = 7_284_019  # pg_advisory_xact_lock key serialising claims
_JOB_STATUS = {RunStatus.succeeded: JobStatus.done, RunStatus.cancelled: JobStatus.cancelled}


def claim_next(sessions: sessionmaker, worker_id: str) -> Job | None:
    """Claim the oldest queued job whose hosts are free; None when there is none."""
    with sessions() as session:
        postgres = session.bind.dialect.name == "postgresql"
        if postgres:  # claims are serialised so two workers cannot both take one host
            session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CLAIM_LOCK_KEY})
        busy = aliased(Job)
        hosts = [Job.client_host_id, Job.server_host_id]
        host_busy = exists().where(
            busy.status == JobStatus.running,
            or_(busy.client_host_id.in_(hosts), busy.server_host_id.in_(hosts)),
            # the jobs of one run across hops share the primary with each other, and with nothing else
            or_(busy.together.is_(None), Job.together.is_(None), busy.together != Job.together),
        )
        candidate = select(Job.id).where(Job.status == JobStatus.queued, ~host_busy).order_by(Job.id).limit(1)
        if postgres:
            candidate = candidate.with_for_update(skip_locked=True, of=Job)
        job_id = session.scalar(candidate)
        if job_id is None:
            session.rollback()
            return None
        now = utcnow()
        claimed = session.execute(
            update(Job)
            .where(and_(Job.id == job_id, Job.status == JobStatus.queued))
            .values(status=JobStatus.running, worker_id=worker_id, claimed_at=now, heartbeat_at=now)
        )
        session.commit()
        if claimed.rowcount != 1:
            return None
        return session.get(Job, job_id)


def fail_orphans(sessions: sessionmaker, *, older_than_seconds: float | None = STALE_SECONDS) -> int:
    """Fail running jobs whose worker stopped heartbeating (None: every running job)."""
    with sessions() as session:
        query = select(Job).where(Job.status == JobStatus.running)
        if older_than_seconds is not None:
            cutoff = utcnow() - timedelta(seconds=older_than_seconds)
            query = query.where(Job.heartbeat_at < cutoff)
        orphans = list(session.scalars(query))
        finished: list[Run] = []
        for job in orphans:
            job.status = JobStatus.failed
            job.finished_at = utcnow()
            runs = []
            _discard_orphaned_work(session, job)
            if job.run_id is not None:
                runs.append(session.get(Run, job.run_id))
            if job.sweep_id is not None:
                sweep = session.get(Sweep, job.sweep_id)
                runs.extend(sweep.runs)
                if not sweep.status.finished:
                    sweep.status = RunStatus.cancelled if sweep.cancel_requested else RunStatus.failed
                    sweep.finished_at = utcnow()
                    sweep.failure_reason = (
                        f"the worker running it ({job.worker_id}) stopped, e.g. redolab was restarted "
                        "mid-sweep; the runs finished so far are kept"
                    )
                    if sweep.kernel_original and sweep.kernel_restored is None:
                        sweep.kernel_restored = False
                        sweep.failure_reason += ". The original tcp_rmem/tcp_wmem were not put back: see below."
            for run in runs:
                if run is not None and not run.status.finished:
                    finished.append(run)
                    _end_orphaned_run(run, job.worker_id)
        session.commit()
        for run in finished:
            store_summary(session=session, run=run)
            _after_run(session, run)
        # an import staged in a request whose process stopped (large ones are jobs, handled above)
        cutoff = utcnow() - timedelta(seconds=STAGED_IMPORT_SECONDS)
        queued = select(Job.import_id).where(Job.import_id.is_not(None), Job.status.in_(ACTIVE))
        for import_id in session.scalars(
            select(RedoImport.id).where(
                RedoImport.status == ImportStatus.importing,
                RedoImport.created_at < cutoff,
                RedoImport.id.not_in(queued),
            )
        ).all():
            discard_staged(session=session, import_id=import_id)
        return len(orphans)


def _after_run(session, run: Run) -> None:
    """A run ended: a rehearsal's result is stored once its last run has, a watch's check is judged and
    a cluster's sum at once is stored once its last run has (none may fail the run)."""
    steps = (
        ("rehearsal", lambda: record_result(session=session, rehearsal_id=run.rehearsal_id)),
        ("watch check", lambda: judge_run(session=session, run_id=run.id)),
        ("cluster sum", lambda: record_together(session=session, cluster_id=run.cluster_id)),
    )
    for what, step in steps:
        try:
            step()
        except Exception:
            log.exception("after run %s: the %s step failed", run.id, what)
            session.rollback()


def _end_orphaned_run(run: Run, worker_id: str) -> None:
    """A run whose worker stopped: cancelled when the user had asked for it (a cancel is never turned
    into a failure by a worker that died before it could act), else failed; either way the
    measurements received so far are kept and the probes end by their own caps."""
    run.status = RunStatus.cancelled if run.cancel_requested else RunStatus.failed
    run.finished_at = utcnow()
    run.failure_reason = (
        ("cancelled; " if run.cancel_requested else "")
        + f"the worker running it ({worker_id}) stopped, e.g. redolab was restarted mid-run; the measurements "
        "received so far are kept, and the probes ended by their own --max-duration and --idle-timeout caps"
    )


def _discard_orphaned_work(session, job: Job) -> None:
    """What an orphaned import, preview or disk test leaves: removed or failed, the job says why."""
    if job.kind == "import":
        discard_orphan(session, job)
    if job.kind == preview_jobs.KIND:
        preview_jobs.discard_orphan(job)
    if job.kind == COLLECT_KIND:
        fail_orphaned_collection(session, job)
    if job.disk_test_id is not None:
        test = session.get(DiskTest, job.disk_test_id)
        if test is not None and test.status in ("queued", "running"):
            test.status, test.finished_at = "failed", utcnow()
            test.error = f"the worker running it ({job.worker_id}) stopped; the sizes measured so far are kept"


class Worker:
    def __init__(self, sessions: sessionmaker, *, secret_key: str, worker_id: str | None = None) -> None:
        self.sessions = sessions
        self.secret_key = secret_key
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.stopping = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    def wake(self) -> None:
        """A job was queued in this process: look now rather than at the next poll (thread-safe)."""
        if self._loop is not None and self._wake is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    def _heartbeat(self, job_id: int) -> None:
        with self.sessions() as session:
            session.execute(update(Job).where(Job.id == job_id).values(heartbeat_at=utcnow()))
            session.commit()

    def _job_gone(self, job_id: int) -> bool:
        with self.sessions() as session:
            return session.get(Job, job_id) is None

    async def run_job(self, job: Job) -> None:
        """Run a claimed job and mark how it ended. A job deleted meanwhile with its environment
        (a run's or import's rows go with it) ends quietly: its probes are stopped, nothing is marked."""
        last = [0.0]
        loop = asyncio.get_running_loop()

        def heartbeat() -> None:
            if loop.time() - last[0] >= HEARTBEAT_SECONDS:
                last[0] = loop.time()
                self._heartbeat(job.id)

        try:
            status = await self._execute(job, heartbeat)
        except Exception:
            if not self._job_gone(job.id):
                raise
            status = None
        with self.sessions() as session:
            row = session.get(Job, job.id)
            if row is None or status is None:
                (log.info if status else log.warning)(
                    "job %s (%s) ended: it was deleted with its environment while it ran", job.id, job.kind
                )
                return
            row.status = _JOB_STATUS.get(status, JobStatus.failed)
            row.finished_at = utcnow()
            session.commit()

    async def _execute(self, job: Job, heartbeat) -> RunStatus:
        if job.kind == "import":  # blocking database work: in a thread, off this loop
            done = await asyncio.to_thread(execute_import, self.sessions, job.id, heartbeat)
            status = RunStatus.succeeded if done else RunStatus.failed
        elif job.kind == preview_jobs.KIND:  # waits on the preview's child process: in a thread too
            done = await asyncio.to_thread(preview_jobs.execute_preview, self.sessions, job.id, heartbeat)
            status = RunStatus.succeeded if done else RunStatus.failed
        elif job.kind == "disk":
            succeeded = await DiskExecution(self.sessions, self.secret_key, job.disk_test_id, heartbeat).execute()
            status = RunStatus.succeeded if succeeded else RunStatus.failed
        elif job.kind == COLLECT_KIND:
            collection_id = int((job.options or {}).get("collection_id", 0))
            outcome = await CollectionExecution(
                self.sessions,
                self.secret_key,
                collection_id,
                heartbeat=heartbeat,
                shutting_down=self.stopping.is_set,
                upload_dir=(job.options or {}).get("upload_dir"),
            ).execute()
            status = {"succeeded": RunStatus.succeeded, "cancelled": RunStatus.cancelled}.get(outcome, RunStatus.failed)
        elif job.kind == "sweep":
            status = await SweepExecution(
                self.sessions, self.secret_key, job.sweep_id, heartbeat=heartbeat, shutting_down=self.stopping.is_set
            ).execute()
        else:
            execution = RunExecution(
                self.sessions,
                self.secret_key,
                job.run_id,
                heartbeat=heartbeat,
                shutting_down=self.stopping.is_set,
            )
            status, _ = await execution.execute()
            # in a thread: a long rehearsal's figures read every line of its runs, while other jobs' runs
            # stream on this loop
            await asyncio.to_thread(self._run_ended, job.run_id)
        return status

    def _run_ended(self, run_id: int) -> None:
        with self.sessions() as session:
            run = session.get(Run, run_id)
            if run is not None:
                _after_run(session, run)

    async def run_once(self) -> bool:
        """Run at most one job; True when one ran."""
        job = claim_next(self.sessions, self.worker_id)
        if job is None:
            return False
        await self.run_job(job)
        return True

    async def run_forever(self, poll_seconds: float = 0.5) -> None:
        last_reap = last_schedule = 0.0
        loop = asyncio.get_running_loop()
        self._loop, self._wake = loop, asyncio.Event()
        # Jobs run concurrently when their hosts differ; each claim checks the hosts are free.
        running: set[asyncio.Task] = set()
        delivering: asyncio.Task | None = None
        while not self.stopping.is_set():
            if loop.time() - last_reap > STALE_SECONDS / 3:
                fail_orphans(self.sessions)
                last_reap = loop.time()
            if loop.time() - last_schedule >= SCHEDULE_POLL_SECONDS:
                last_schedule = loop.time()
                try:
                    fire_due(self.sessions)
                    fire_due_collections(self.sessions)
                    fire_due_watches(self.sessions)
                except Exception:  # a schedule must never stop the worker
                    log.exception("firing schedules failed")
                if delivering is None or delivering.done():  # in a thread: a dead receiver never delays runs
                    delivering = asyncio.create_task(asyncio.to_thread(self._deliver))
            job = claim_next(self.sessions, self.worker_id)
            if job is not None:
                task = asyncio.create_task(self.run_job(job))
                running.add(task)
                task.add_done_callback(running.discard)
                continue
            with contextlib.suppress(TimeoutError):  # jobs queued elsewhere are found by polling
                await asyncio.wait_for(self._wake.wait(), poll_seconds)
            self._wake.clear()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        if delivering is not None:
            await asyncio.gather(delivering, return_exceptions=True)

    def _deliver(self) -> None:
        """Send the notifications that are due (a thread of their own; never raises)."""
        try:
            deliver_due(self.sessions, settings=get_settings(), secret_key=self.secret_key, worker_id=self.worker_id)
        except Exception:
            log.exception("delivering notifications failed")

    def start_thread(self) -> threading.Thread:
        """Run in a daemon thread with its own event loop (the in-process worker of serve)."""
        thread = threading.Thread(target=lambda: asyncio.run(self.run_forever()), name="redolab-worker", daemon=True)
        thread.start()
        return thread
