"""Schedules: a run or a sweep repeated every N until a date (oratcptest's -freq=1h/24h).

The first occurrence is queued when the schedule is made; the worker fires each later one when it
is due (`fire_due`). When either host is busy with another run or sweep, that occurrence is skipped
and the schedule says why; occurrences missed while redolab was down are skipped the same way. Each
occurrence is an ordinary run or sweep carrying schedule_id, so throughput over the day is a chart
of them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic_core import PydanticCustomError
from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from redolab.core.config import Settings
from redolab.core.db import get_or_404, utcnow
from redolab.core.fields import DurationSeconds, Positive, at_most
from redolab.core.limits import LimitReached
from redolab.core.units import format_count
from redolab.environments.models import Environment, Host
from redolab.jobs.admission import QueueCaps, current_caps, hold_queue_lock
from redolab.jobs.models import Job, JobStatus
from redolab.runs import service as run_service
from redolab.runs.models import Run, RunStatus
from redolab.runs.queueing import check_local_write_dir
from redolab.runs.schemas import RunCreate
from redolab.sweeps import service as sweep_service
from redolab.sweeps.models import Schedule, ScheduleStatus, Sweep
from redolab.sweeps.schemas import SweepCreate

MIN_EVERY_SECONDS = 60
MAX_SKIPS_KEPT = 500


class Repeat(BaseModel):
    """How often and until when (UTC; a time without a zone is taken as UTC)."""

    model_config = ConfigDict(extra="forbid")

    every_seconds: Annotated[DurationSeconds, Positive, at_most(7 * 86400, "7 days")]
    until: datetime

    @field_validator("every_seconds")
    @classmethod
    def _not_too_often(cls, value):
        if value is not None and value < MIN_EVERY_SECONDS:
            raise PydanticCustomError("too_often", "Repeat at most once a minute (e.g. 15 min, 1 h).")
        return value

    @field_validator("until")
    @classmethod
    def _in_the_future(cls, value: datetime):
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        now = utcnow()
        if value <= now:
            raise PydanticCustomError("past", "The end must be in the future (times are UTC).")
        if value > now + timedelta(days=366):
            raise PydanticCustomError("far", "The end must be within a year.")
        return value


def create_schedule(
    *,
    session: Session,
    environment: Environment,
    item: RunCreate | SweepCreate,
    repeat: Repeat,
    requested_by: str,
    caps: QueueCaps | None = None,
    settings: Settings | None = None,
) -> Schedule:
    """Check the item as each occurrence will be (hosts, permissions, a sweep's planned time, the
    write directory) and the owner's cap of active schedules (429), then queue the first occurrence
    now, unless its hosts are busy (it is skipped and says so), and keep the rest."""
    caps = caps or current_caps()
    client, server = _check_item(environment, item, caps, settings)
    hold_queue_lock(session)  # two schedules made at once at the cap: one is refused
    active = session.scalar(
        select(func.count(Schedule.id)).where(
            Schedule.status == ScheduleStatus.active, Schedule.requested_by == requested_by
        )
    )
    if active >= caps.active_schedules_per_user:
        raise LimitReached(
            f"You have {active} active schedules, the most one user may have (REDOLAB_MAX_ACTIVE_SCHEDULES_PER_USER="
            f"{caps.active_schedules_per_user}): stop one on its page first.",
            status_code=429,
        )
    schedule = Schedule(
        environment_id=environment.id,
        what="sweep" if isinstance(item, SweepCreate) else "run",
        template=item.model_dump(mode="json"),
        client_host_name=client.name,
        server_host_name=server.name,
        every_seconds=repeat.every_seconds,
        until=repeat.until,
        next_at=utcnow() + timedelta(seconds=repeat.every_seconds),
        label=item.label,
        requested_by=requested_by,
    )
    session.add(schedule)
    session.flush()
    busy = busy_with(session, [client.id, server.id])
    if busy:
        schedule.skipped = [{"at": utcnow().isoformat(), "reason": f"skipped: the hosts were busy with {busy}"}]
    else:
        _occurrence(session, environment, schedule, caps=caps, settings=settings)
    if schedule.next_at > schedule.until:
        schedule.status = ScheduleStatus.finished
    session.commit()
    return schedule


def _check_item(
    environment: Environment, item: RunCreate | SweepCreate, caps: QueueCaps, settings: Settings | None
) -> tuple[Host, Host]:
    if isinstance(item, SweepCreate):
        return sweep_service.check_sweep(environment=environment, sweep_in=item, caps=caps, settings=settings)
    client = run_service.host_in(environment, item.client_host_id, "client_host_id")
    server = run_service.host_in(environment, item.server_host_id, "server_host_id")
    check_local_write_dir(server=server, write_dir=item.write_dir, conns=item.conns, settings=settings)
    return client, server


def _occurrence(session: Session, environment: Environment, schedule: Schedule, **limits) -> Run | Sweep:
    """Queue one occurrence (`limits`: the caps and settings, else this process's)."""
    by = f"{schedule.requested_by} (schedule #{schedule.id})"[:64]
    if schedule.what == "sweep":
        sweep_in = SweepCreate(**schedule.template)
        item = sweep_service.create_sweep(
            session=session, environment=environment, sweep_in=sweep_in, requested_by=by, **limits
        )
    else:
        run_in = RunCreate(**schedule.template)
        item = run_service.create_run(
            session=session, environment=environment, run_in=run_in, requested_by=by, **limits
        )
    item.schedule_id = schedule.id
    session.commit()
    return item


def _own_earlier(session: Session, schedule: Schedule) -> str | None:
    """An earlier occurrence of this schedule whose job is still queued or running: "run #12"."""
    model, key = (Sweep, Job.sweep_id) if schedule.what == "sweep" else (Run, Job.run_id)
    earlier = session.scalar(
        select(model.id)
        .join(Job, key == model.id)
        .where(model.schedule_id == schedule.id, Job.status.in_((JobStatus.queued, JobStatus.running)))
        .limit(1)
    )
    return None if earlier is None else f"{schedule.what} #{earlier}"


def busy_with(session: Session, host_ids: list[int]) -> str | None:
    """What holds either host: "run #12" or "sweep #3" (None: both free)."""
    job = session.scalar(
        select(Job)
        .where(
            Job.status.in_((JobStatus.queued, JobStatus.running)),
            or_(Job.client_host_id.in_(host_ids), Job.server_host_id.in_(host_ids)),
        )
        .limit(1)
    )
    if job is None:
        return None
    return f"sweep #{job.sweep_id}" if job.sweep_id else f"run #{job.run_id}"


def fire_due(sessions: sessionmaker, now: datetime | None = None) -> int:
    """Start (or skip) every occurrence that is due; returns how many were started."""
    now = now or utcnow()
    started = 0
    with sessions() as session:
        due = list(
            session.scalars(select(Schedule).where(Schedule.status == ScheduleStatus.active, Schedule.next_at <= now))
        )
        for schedule in due:
            due_at, every = schedule.next_at, timedelta(seconds=schedule.every_seconds)
            missed = int((now - due_at) / every)  # whole periods already gone by: not caught up
            following = due_at + every * (missed + 1)
            claimed = session.execute(  # one worker fires an occurrence, however many run
                update(Schedule)
                .where(Schedule.id == schedule.id, Schedule.next_at == due_at)
                .values(next_at=following)
                .execution_options(synchronize_session=False)
            )
            session.commit()
            if claimed.rowcount != 1:
                continue
            session.refresh(schedule)
            skips = list(schedule.skipped or [])
            if now > schedule.until:  # redolab was down past the end: nothing more starts
                gone = int((schedule.until - due_at) / every) + 1
                skips.append(
                    {
                        "at": due_at.isoformat(),
                        "reason": f"{format_count(gone, 'occurrence')} missed while redolab was not running",
                    }
                )
                schedule.skipped = skips[-MAX_SKIPS_KEPT:]
                schedule.status = ScheduleStatus.finished
                session.commit()
                continue
            if missed:
                skips.append(
                    {
                        "at": due_at.isoformat(),
                        "reason": f"{format_count(missed, 'occurrence')} missed while redolab was not running",
                    }
                )
            started += _fire(session, schedule, now, skips)
            schedule.skipped = skips[-MAX_SKIPS_KEPT:]
            if following > schedule.until and schedule.status is ScheduleStatus.active:
                schedule.status = ScheduleStatus.finished
            session.commit()
    return started


def _fire(session: Session, schedule: Schedule, now: datetime, skips: list[dict]) -> int:
    """Queue one due occurrence, or note why not: an earlier one of its own still queued or
    running, the hosts busy, its owner or host pair at the queue cap (each skipped, not a failure);
    a host deleted or a permission withdrawn (the schedule stops). 1 when one was queued."""
    template = schedule.template
    busy = _own_earlier(session, schedule) or busy_with(
        session, [template["client_host_id"], template["server_host_id"]]
    )
    if busy:
        skips.append({"at": now.isoformat(), "reason": f"skipped: the hosts were busy with {busy}"})
        return 0
    try:
        _occurrence(session, session.get(Environment, schedule.environment_id), schedule)
        return 1
    except LimitReached as error:  # the queue is full: this occurrence waits for none
        session.rollback()
        skips.append({"at": now.isoformat(), "reason": f"skipped: {error.message}"})
    except Exception as error:  # a host deleted, permission withdrawn: say so, stop
        session.rollback()
        skips.append({"at": now.isoformat(), "reason": f"could not start: {error}; the schedule stopped"})
        schedule.status = ScheduleStatus.stopped
    return 0


def get_schedule(*, session: Session, schedule_id: int) -> Schedule:
    return get_or_404(session, Schedule, schedule_id, what="Schedule")


def list_schedules(*, session: Session, environment: Environment, limit: int = 100, offset: int = 0) -> list[Schedule]:
    """The environment's schedules, newest first, a page at a time."""
    query = select(Schedule).where(Schedule.environment_id == environment.id).order_by(Schedule.id.desc())
    return list(session.scalars(query.limit(limit).offset(offset)))


def count_schedules(*, session: Session, environment: Environment) -> int:
    return session.scalar(select(func.count(Schedule.id)).where(Schedule.environment_id == environment.id)) or 0


def stop_schedule(*, session: Session, schedule: Schedule) -> Schedule:
    """No further occurrence starts; one already running carries on (cancel it on its page)."""
    if schedule.status is ScheduleStatus.active:
        schedule.status = ScheduleStatus.stopped
        session.commit()
    return schedule


def occurrences(*, session: Session, schedule: Schedule) -> list[dict]:
    """Each occurrence in time order: when, what, status, and its throughput (a sweep: its best
    point's median)."""
    model = Sweep if schedule.what == "sweep" else Run
    items = session.scalars(select(model).where(model.schedule_id == schedule.id).order_by(model.id))
    result = []
    for item in items:
        if isinstance(item, Sweep):
            medians = [p["result"].median for p in sweep_service.sweep_points(item) if p["result"] is not None]
            rate = max(medians) if medians else None
        else:
            rate = item.bytes_per_second if item.status is RunStatus.succeeded else None
        result.append({"item": item, "at": item.started_at or item.created_at, "bytes_per_second": rate})
    return result
