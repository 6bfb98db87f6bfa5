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

from pydantic import AfterValidator, BaseModel, ConfigDict, field_validator
from pydantic_core import PydanticCustomError
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from redolab.core.db import get_or_404, utcnow
from redolab.core.fields import DurationSeconds, at_most, positive
from redolab.environments.models import Environment
from redolab.jobs.models import Job, JobStatus
from redolab.runs import service as run_service
from redolab.runs.models import Run, RunStatus
from redolab.runs.schemas import RunCreate
from redolab.sweeps import service as sweep_service
from redolab.sweeps.models import Schedule, ScheduleStatus, Sweep
from redolab.sweeps.schemas import SweepCreate

MIN_EVERY_SECONDS = 60
MAX_SKIPS_KEPT = 500


class Repeat(BaseModel):
    """How often and until when (UTC; a time without a zone is taken as UTC)."""

    model_config = ConfigDict(extra="forbid")

    every_seconds: Annotated[DurationSeconds, AfterValidator(positive), at_most(7 * 86400, "7 days")]
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
    *, session: Session, environment: Environment, item: RunCreate | SweepCreate, repeat: Repeat, requested_by: str
) -> Schedule:
    """Queue the first occurrence now (which checks the hosts and permissions) and keep the rest."""
    what = "sweep" if isinstance(item, SweepCreate) else "run"
    schedule = Schedule(
        environment_id=environment.id,
        what=what,
        template=item.model_dump(mode="json"),
        client_host_name="",
        server_host_name="",
        every_seconds=repeat.every_seconds,
        until=repeat.until,
        next_at=utcnow() + timedelta(seconds=repeat.every_seconds),
        label=item.label,
        requested_by=requested_by,
    )
    session.add(schedule)
    session.flush()
    first = _occurrence(session, environment, schedule)
    schedule.client_host_name, schedule.server_host_name = first.client_host_name, first.server_host_name
    if schedule.next_at > schedule.until:
        schedule.status = ScheduleStatus.finished
    session.commit()
    return schedule


def _occurrence(session: Session, environment: Environment, schedule: Schedule) -> Run | Sweep:
    by = f"{schedule.requested_by} (schedule #{schedule.id})"[:64]
    if schedule.what == "sweep":
        item = sweep_service.create_sweep(
            session=session, environment=environment, sweep_in=SweepCreate(**schedule.template), requested_by=by
        )
    else:
        item = run_service.create_run(
            session=session, environment=environment, run_in=RunCreate(**schedule.template), requested_by=by
        )
    item.schedule_id = schedule.id
    session.commit()
    return item


def _busy_with(session: Session, host_ids: list[int]) -> str | None:
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
                    {"at": due_at.isoformat(), "reason": f"{gone} occurrence(s) missed while redolab was not running"}
                )
                schedule.skipped = skips[-MAX_SKIPS_KEPT:]
                schedule.status = ScheduleStatus.finished
                session.commit()
                continue
            if missed:
                skips.append(
                    {"at": due_at.isoformat(), "reason": f"{missed} occurrence(s) missed while redolab was not running"}
                )
            environment = session.get(Environment, schedule.environment_id)
            template = schedule.template
            busy = _busy_with(session, [template["client_host_id"], template["server_host_id"]])
            if busy:
                skips.append({"at": now.isoformat(), "reason": f"skipped: the hosts were busy with {busy}"})
            else:
                try:
                    _occurrence(session, environment, schedule)
                    started += 1
                except Exception as error:  # a host deleted, permission withdrawn: say so, stop
                    session.rollback()
                    skips.append({"at": now.isoformat(), "reason": f"could not start: {error}; the schedule stopped"})
                    schedule.status = ScheduleStatus.stopped
            schedule.skipped = skips[-MAX_SKIPS_KEPT:]
            if following > schedule.until and schedule.status is ScheduleStatus.active:
                schedule.status = ScheduleStatus.finished
            session.commit()
    return started


def get_schedule(*, session: Session, schedule_id: int) -> Schedule:
    return get_or_404(session, Schedule, schedule_id, what="Schedule")


def list_schedules(*, session: Session, environment: Environment) -> list[Schedule]:
    query = select(Schedule).where(Schedule.environment_id == environment.id).order_by(Schedule.id.desc())
    return list(session.scalars(query))


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
