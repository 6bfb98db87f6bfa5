"""JSON API: sweeps (request, list, read, cancel)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status

from redolab.auth.deps import ApiAdmin, ApiOperator, current_api_user
from redolab.core.deps import PageDep, SessionDep, SettingsDep
from redolab.core.openapi import error_responses
from redolab.environments.service import get_environment
from redolab.jobs.admission import QueueCaps
from redolab.jobs.queue import wake_local_worker
from redolab.runs.exports import sync_numbers
from redolab.runs.queueing import place_of
from redolab.sweeps import schedules, service
from redolab.sweeps.bulk import BulkCancel, bulk_cancel
from redolab.sweeps.models import Sweep
from redolab.sweeps.schemas import SchedulePublic, SchedulesPublic, SweepCreate, SweepPublic, SweepsPublic

router = APIRouter(prefix="/api/v1", tags=["sweeps"], dependencies=[Depends(current_api_user)])


@router.post(
    "/environments/{environment_id}/sweeps", status_code=status.HTTP_201_CREATED, responses=error_responses(429)
)
def create_sweep(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: ApiOperator,
    environment_id: int,
    sweep_in: SweepCreate,
) -> SweepPublic:
    """Queue a sweep (connections, sockbuf or kernel_max) between two hosts (operator role). 422
    when its planned time passes REDOLAB_MAX_SWEEP_SECONDS; 429 when the user or the host pair has
    the most runs and sweeps queued that the server allows."""
    environment = get_environment(session=session, environment_id=environment_id)
    sweep = service.create_sweep(
        session=session,
        environment=environment,
        sweep_in=sweep_in,
        requested_by=user.username,
        caps=QueueCaps.of(settings),
        settings=settings,
    )
    wake_local_worker(request.app)
    return sweep_public(session, sweep)


def sweep_public(session, sweep: Sweep) -> SweepPublic:
    """A sweep as the API shows it, with its place in the queue while it waits."""
    public = SweepPublic.model_validate(sweep)
    place = place_of(session, sweep_id=sweep.id) if sweep.status.value == "queued" else None
    if place is not None:
        public.queue_position, public.estimated_start_at = place.jobs_ahead, place.estimated_start_at
    return public


@router.get("/environments/{environment_id}/sweeps")
def list_sweeps(
    session: SessionDep,
    environment_id: int,
    page: PageDep,
) -> SweepsPublic:
    """The environment's sweeps, newest first, a page at a time; `count` is how many there are in all."""
    environment = get_environment(session=session, environment_id=environment_id)
    sweeps = service.list_sweeps(session=session, environment=environment, limit=page.limit, offset=page.offset)
    data = [SweepPublic.model_validate(sweep) for sweep in sweeps]
    return SweepsPublic(data=data, count=service.count_sweeps(session=session, environment=environment))


@router.get("/environments/{environment_id}/schedules")
def list_schedules(
    session: SessionDep,
    environment_id: int,
    page: PageDep,
) -> SchedulesPublic:
    """The environment's schedules, newest first, a page at a time; `count` is how many there are in all."""
    environment = get_environment(session=session, environment_id=environment_id)
    found = schedules.list_schedules(session=session, environment=environment, limit=page.limit, offset=page.offset)
    data = [SchedulePublic.model_validate(schedule) for schedule in found]
    return SchedulesPublic(data=data, count=schedules.count_schedules(session=session, environment=environment))


@router.get("/sweeps/{sweep_id}")
def read_sweep(session: SessionDep, sweep_id: int) -> dict:
    """A sweep with its points (median and range of each grid point), seed table and runs; while it
    waits, its place in the queue (`queue_position`, `estimated_start_at` in `sweep`)."""
    sweep = service.get_sweep(session=session, sweep_id=sweep_id)
    document = service.sweep_document(sweep, sync_numbers(session, sweep.runs))
    document["sweep"] = sweep_public(session, sweep).model_dump(mode="json")
    return document


@router.post("/sweeps/{sweep_id}/cancel")
def cancel_sweep(session: SessionDep, user: ApiOperator, sweep_id: int) -> SweepPublic:
    """Cancel a queued or running sweep (operator role)."""
    sweep = service.cancel_sweep(session=session, sweep=service.get_sweep(session=session, sweep_id=sweep_id))
    return sweep_public(session, sweep)


@router.post("/admin/cancel")
def cancel_in_bulk(session: SessionDep, user: ApiAdmin, selector: BulkCancel) -> dict:
    """Cancel every queued or running run and sweep of one user, one environment or one host pair,
    and stop their active schedules (admin role). Queued items end cancelled at once; running ones
    are asked to stop, as their own Cancel does. Answers how many of each, and `count` in all."""
    done = bulk_cancel(session=session, selector=selector)
    return {**done.__dict__, "count": done.count}
