"""An admin's bulk cancel (issue 33): every queued or running run and sweep of one user, one
environment or one host pair, each by the same one-step cancel as its own Cancel button
(request_cancel), and the matching active schedules stopped, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from redolab.core.db import MAX_ROW_ID
from redolab.core.schema_rules import document, exactly_one_of
from redolab.jobs.models import Job
from redolab.runs.models import Run, RunStatus
from redolab.runs.service import request_cancel
from redolab.sweeps.models import Schedule, ScheduleStatus, Sweep

RowId = Annotated[int, Field(ge=1, le=MAX_ROW_ID)]
WAITING_OR_RUNNING = (RunStatus.queued, RunStatus.running)


class BulkCancel(BaseModel):
    """Whose work to cancel: one user's (by name; their schedules' occurrences too), one
    environment's, or one host pair's (either way round). Exactly one of the three."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=document(
            exactly_one_of(("user",), ("environment_id",), ("client_host_id", "server_host_id"))
        ),
    )

    user: Annotated[str | None, Field(min_length=1, max_length=64)] = None
    environment_id: RowId | None = None
    client_host_id: RowId | None = None
    server_host_id: RowId | None = None

    @model_validator(mode="after")
    def _one_selector(self) -> Self:
        pair = (self.client_host_id, self.server_host_id)
        if (None in pair) != (pair == (None, None)):
            raise PydanticCustomError("host_pair", "A host pair needs both client_host_id and server_host_id.")
        chosen = [self.user is not None, self.environment_id is not None, pair != (None, None)]
        if sum(chosen) != 1:
            raise PydanticCustomError(
                "selector", "Give exactly one of: user, environment_id, or client_host_id with server_host_id."
            )
        return self


@dataclass(frozen=True)
class BulkCancelled:
    """What a bulk cancel did: queued items cancelled before they started, running ones asked to
    stop (their worker stops them within a second), and schedules stopped."""

    runs_cancelled: int
    runs_stopping: int
    sweeps_cancelled: int
    sweeps_stopping: int
    schedules_stopped: int

    @property
    def count(self) -> int:
        return self.runs_cancelled + self.runs_stopping + self.sweeps_cancelled + self.sweeps_stopping


def _matching(model: type, selector: BulkCancel):
    if selector.user is not None:
        return or_(
            model.requested_by == selector.user,
            model.requested_by.startswith(f"{selector.user} (schedule #", autoescape=True),
        )
    if selector.environment_id is not None:
        return model.environment_id == selector.environment_id
    a, b = selector.client_host_id, selector.server_host_id
    return or_(
        (model.client_host_id == a) & (model.server_host_id == b),
        (model.client_host_id == b) & (model.server_host_id == a),
    )


def _schedules(session: Session, selector: BulkCancel) -> list[Schedule]:
    query = select(Schedule).where(Schedule.status == ScheduleStatus.active)
    if selector.user is not None:
        return list(session.scalars(query.where(Schedule.requested_by == selector.user)))
    if selector.environment_id is not None:
        return list(session.scalars(query.where(Schedule.environment_id == selector.environment_id)))
    pair = {selector.client_host_id, selector.server_host_id}
    return [
        schedule
        for schedule in session.scalars(query)
        if {schedule.template.get("client_host_id"), schedule.template.get("server_host_id")} == pair
    ]


def bulk_cancel(*, session: Session, selector: BulkCancel) -> BulkCancelled:
    """Cancel every queued or running run (not of a sweep: its sweep is cancelled) and sweep the
    selector matches, stop its active schedules, and commit once."""
    counts = {"runs_cancelled": 0, "runs_stopping": 0, "sweeps_cancelled": 0, "sweeps_stopping": 0}
    runs = session.scalars(
        select(Run).where(Run.status.in_(WAITING_OR_RUNNING), Run.sweep_id.is_(None), _matching(Run, selector))
    ).all()
    for run in runs:
        before = request_cancel(session=session, model=Run, item=run, job=Job.run_id == run.id)
        counts["runs_cancelled" if before else "runs_stopping"] += 1
    sweeps = session.scalars(
        select(Sweep).where(Sweep.status.in_(WAITING_OR_RUNNING), _matching(Sweep, selector))
    ).all()
    for sweep in sweeps:
        if request_cancel(session=session, model=Sweep, item=sweep, job=Job.sweep_id == sweep.id):
            counts["sweeps_cancelled"] += 1
            continue
        counts["sweeps_stopping"] += 1
        session.execute(
            update(Run)
            .where(Run.sweep_id == sweep.id, Run.status.in_(WAITING_OR_RUNNING))
            .values(cancel_requested=True)
        )
    schedules = _schedules(session, selector)
    for schedule in schedules:
        schedule.status = ScheduleStatus.stopped
    session.commit()
    return BulkCancelled(**counts, schedules_stopped=len(schedules))
