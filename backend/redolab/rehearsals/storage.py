"""What a rehearsal keeps, and who may keep how much: its schedule is stored once (the rehearsal and
each of its runs name it: a run replays all of it or some of its connections), each user's
stored schedules are capped (`rehearsal_schedules_per_user_bytes`), and a finished rehearsal can be
deleted by an admin (its runs are measurements: as for an environment's measured runs)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redolab.auth.models import Role
from redolab.core.config import Settings, get_settings
from redolab.core.errors import FieldError
from redolab.core.units import format_bytes, format_count
from redolab.rehearsals.models import Rehearsal
from redolab.rehearsals.schedule import Schedule
from redolab.runs.models import ReplaySchedule
from redolab.runs.queueing import owner_of


def stored_bytes(session: Session, owner: str) -> int:
    """The bytes of the schedules a user's rehearsals keep."""
    total = session.scalar(
        select(func.coalesce(func.sum(ReplaySchedule.text_bytes), 0)).where(ReplaySchedule.requested_by == owner)
    )
    return int(total or 0)


def check_room(session: Session, *, requested_by: str, settings: Settings | None, adding: int = 0) -> None:
    """413 when the user's stored schedules, with `adding` more bytes, would pass their cap: before a
    schedule is built (adding 0: already full) and again with its size, before it is written. Without
    `settings` (the CLI) the process's own, as the queue caps do: no caller goes uncapped."""
    owner, cap = owner_of(requested_by), (settings or get_settings()).rehearsal_schedules_per_user_bytes
    held = stored_bytes(session, owner)
    if (held + adding <= cap) if adding else (held < cap):
        return
    this = f" and this rehearsal's schedule is {format_bytes(adding)}" if adding else ""
    raise FieldError(
        "window",
        f"{owner}'s rehearsals keep {format_bytes(held)} of schedules{this}, over the "
        f"{format_bytes(cap)} a user may keep (REDOLAB_REHEARSAL_SCHEDULES_PER_USER_BYTES). Choose a shorter "
        "window or a coarser one, or ask an admin to delete rehearsals no longer needed "
        "(DELETE /api/v1/rehearsals/{id}).",
        413,
    )


def text_bytes(schedule: Schedule) -> int:
    """What keeping the schedule costs (its text is ASCII, but counted as stored: UTF-8 bytes)."""
    return len(schedule.text.encode())


def keep_schedule(session: Session, *, environment_id: int, schedule: Schedule, requested_by: str) -> ReplaySchedule:
    """The schedule's one stored copy (flushed: its id is known)."""
    row = ReplaySchedule(
        environment_id=environment_id,
        sha256=schedule.sha256,
        text=schedule.text,
        text_bytes=text_bytes(schedule),
        requested_by=owner_of(requested_by),
    )
    session.add(row)
    session.flush()
    return row


def delete_rehearsal(*, session: Session, rehearsal: Rehearsal, role: Role) -> None:
    """Delete a finished rehearsal, its runs (their events and summaries go with them) and its schedule:
    403 without the admin role (its runs are measurements), 409 while a run of it is queued or running."""
    if not role.allows(Role.admin):
        raise PermissionError(
            f"Rehearsal #{rehearsal.id} holds {format_count(len(rehearsal.runs), 'measured run')}: "
            "deleting it needs the admin role."
        )
    waiting = [run.id for run in rehearsal.runs if not run.status.finished]
    if waiting:
        raise FieldError(
            "rehearsal",
            f"Rehearsal #{rehearsal.id} still has run #{waiting[0]} queued or running: cancel it first.",
            409,
        )
    schedule = rehearsal.schedule
    for run in list(rehearsal.runs):
        session.delete(run)
    session.delete(rehearsal)
    if schedule is not None:
        session.delete(schedule)
    session.commit()
