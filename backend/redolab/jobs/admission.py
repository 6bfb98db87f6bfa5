"""Fair queues (issue 33): what one user or one host pair may have waiting, checked and written as
one serialised step, and where a waiting job stands in the queue.

Two requests at a cap must not both pass: the caller takes the queue lock first (PostgreSQL: an
advisory lock held to the commit; SQLite: its one write lock, which a write that changes nothing
takes), counts what is queued as committed now, then writes its rows and commits, which releases the
lock. A refusal (LimitReached, 429) comes before any row is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, false, func, or_, select, text, update
from sqlalchemy.orm import Session

from redolab.core.config import Settings, get_settings
from redolab.core.db import utcnow
from redolab.core.limits import LimitReached
from redolab.core.units import format_duration
from redolab.jobs.models import Job, JobStatus

QUEUE_LOCK_KEY = 7_284_033  # pg_advisory_xact_lock key serialising admissions to the queue
# What a run spends besides its test: connecting, deploying and checking the probe, capturing the
# hosts' settings, starting the server (a few seconds on a LAN; more over a slow link).
RUN_SETUP_SECONDS = 10.0
# A job with no planned time (a disk test, an import, or one queued before this was recorded).
UNKNOWN_JOB_SECONDS = 60.0


@dataclass(frozen=True)
class QueueCaps:
    """The caps of the settings (each named by its variable in the refusals)."""

    per_user: int = 20
    per_host_pair: int = 20
    active_schedules_per_user: int = 10
    sweep_seconds: int = 24 * 3600

    @classmethod
    def of(cls, settings: Settings) -> QueueCaps:
        return cls(
            per_user=settings.max_queued_per_user,
            per_host_pair=settings.max_queued_per_host_pair,
            active_schedules_per_user=settings.max_active_schedules_per_user,
            sweep_seconds=settings.max_sweep_seconds,
        )


def current_caps() -> QueueCaps:
    """The caps of this process's settings (what the worker and direct callers use)."""
    return QueueCaps.of(get_settings())


def hold_queue_lock(session: Session) -> None:
    """Take the queue lock in the session's transaction; its commit or rollback releases it."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": QUEUE_LOCK_KEY})
    else:  # every read after this write sees every commit before it (no older snapshot)
        session.execute(update(Job).where(false()).values(status=Job.status))


def _pair(client_host_id: int, server_host_id: int):
    """Jobs between the same two hosts, either way round."""
    return or_(
        and_(Job.client_host_id == client_host_id, Job.server_host_id == server_host_id),
        and_(Job.client_host_id == server_host_id, Job.server_host_id == client_host_id),
    )


def _queued(session: Session, *condition) -> int:
    return session.scalar(select(func.count(Job.id)).where(Job.status == JobStatus.queued, *condition)) or 0


def check_queue_caps(
    session: Session,
    *,
    owner: str,
    client_host_id: int,
    server_host_id: int,
    pair_name: str,
    caps: QueueCaps,
    adding: int = 1,
) -> None:
    """Refuse (429) a job that would take `owner` or the host pair past its cap of queued jobs
    (`adding`: the owner's jobs this request queues at once). Called with the queue lock held."""
    mine = _queued(session, Job.requested_by == owner)
    if mine + adding > caps.per_user:
        asks = f"; this asks for {adding} more" if adding > 1 else ""
        raise LimitReached(
            f"You have {mine} runs and sweeps queued{asks}, the most one user may have waiting "
            f"(REDOLAB_MAX_QUEUED_PER_USER={caps.per_user}): wait for some to start, or cancel some, "
            "then queue more.",
            status_code=429,
        )
    between = _queued(session, _pair(client_host_id, server_host_id))
    if between >= caps.per_host_pair:
        raise LimitReached(
            f"{pair_name} have {between} runs and sweeps queued, the most one host pair may have waiting "
            f"(REDOLAB_MAX_QUEUED_PER_HOST_PAIR={caps.per_host_pair}): wait for some to finish, or queue "
            "this between other hosts.",
            status_code=429,
        )


def check_sweep_time(planned_seconds: float, caps: QueueCaps) -> str | None:
    """Why a sweep planned to hold its hosts this long is refused (None: it fits the cap)."""
    if planned_seconds <= caps.sweep_seconds:
        return None
    return (
        f"This sweep is planned to hold its hosts for {format_duration(planned_seconds)} "
        f"({planned_seconds:,.0f} s: points x repetitions x (duration + {RUN_SETUP_SECONDS:g} s set-up)), "
        f"more than the {format_duration(caps.sweep_seconds)} a sweep may take (REDOLAB_MAX_SWEEP_SECONDS="
        f"{caps.sweep_seconds}): use fewer points or repetitions, or a shorter duration."
    )


@dataclass(frozen=True)
class QueuePlace:
    """Where a queued job stands: the queued jobs ahead of it on its hosts, and when it should
    start (the time left of the jobs running on its hosts, then the planned time of those ahead)."""

    jobs_ahead: int
    seconds_ahead: float
    estimated_start_at: datetime


def queue_place(session: Session, job: Job | None) -> QueuePlace | None:
    """The place of a queued job (None when it is not queued). Jobs ahead are counted as if they ran
    one after another: the estimate is an upper bound when some of them could run side by side."""
    if job is None or job.status is not JobStatus.queued:
        return None
    now = utcnow()
    shares = or_(
        Job.client_host_id.in_((job.client_host_id, job.server_host_id)),
        Job.server_host_id.in_((job.client_host_id, job.server_host_id)),
    )
    running = session.execute(
        select(Job.claimed_at, Job.planned_seconds).where(Job.status == JobStatus.running, shares)
    ).all()
    left = [
        max(0.0, (planned or UNKNOWN_JOB_SECONDS) - (now - (claimed or now)).total_seconds())
        for claimed, planned in running
    ]
    ahead = session.execute(
        select(func.count(Job.id), func.sum(func.coalesce(Job.planned_seconds, UNKNOWN_JOB_SECONDS))).where(
            Job.status == JobStatus.queued, Job.id < job.id, shares
        )
    ).one()
    seconds = max(left, default=0.0) + float(ahead[1] or 0.0)
    return QueuePlace(jobs_ahead=ahead[0], seconds_ahead=seconds, estimated_start_at=now + timedelta(seconds=seconds))
