"""Claiming jobs from the job table, and failing those whose worker stopped.

Claims are atomic (on PostgreSQL serialised by an advisory lock, then SELECT ... FOR UPDATE SKIP
LOCKED); two jobs that share a host never run at once, except the jobs of one run across several
hops, queued together (the primary sends to each).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from sqlalchemy import and_, exists, or_, select, text, update
from sqlalchemy.orm import aliased, sessionmaker

from redolab.core.db import utcnow
from redolab.jobs.handlers import JobHandler
from redolab.jobs.models import Job, JobStatus

CLAIM_LOCK_KEY = 7_284_019  # pg_advisory_xact_lock key serialising claims
STALE_SECONDS = 30.0  # a running job's worker is taken for stopped after this long without a heartbeat


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


def fail_orphans(
    sessions: sessionmaker, *, handlers: Mapping[str, JobHandler], older_than_seconds: float | None = STALE_SECONDS
) -> int:
    """Fail running jobs whose worker stopped heartbeating (None: every running job); each job's
    handler ends its work with a reason."""
    with sessions() as session:
        query = select(Job).where(Job.status == JobStatus.running)
        if older_than_seconds is not None:
            query = query.where(Job.heartbeat_at < utcnow() - timedelta(seconds=older_than_seconds))
        orphans = list(session.scalars(query))
        for job in orphans:
            job.status, job.finished_at = JobStatus.failed, utcnow()
            if handler := handlers.get(job.kind):
                handler.orphaned(session, job)
            else:
                job.error = f"no handler for jobs of kind {job.kind!r} in this redolab"
            session.commit()
        return len(orphans)
