"""JSON API: rehearsals (request, list, read with the measured result, schedule text, cancel)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.responses import PlainTextResponse

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.core.deps import SessionDep, SettingsDep
from redolab.core.openapi import error_responses
from redolab.environments.service import get_environment
from redolab.jobs.admission import QueueCaps
from redolab.jobs.queue import wake_local_worker
from redolab.rehearsals import service, storage
from redolab.rehearsals.public import rehearsal_public
from redolab.rehearsals.schemas import RehearsalCreate, RehearsalPublic

router = APIRouter(prefix="/api/v1", tags=["rehearsals"], dependencies=[Depends(current_api_user)])


@router.post(
    "/environments/{environment_id}/rehearsals",
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(429, 503),
)
def create_rehearsal(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: ApiOperator,
    environment_id: int,
    body: RehearsalCreate,
) -> RehearsalPublic:
    """Replay a window of the environment's redo history through its hosts' link (operator role);
    poll `status_url` until `status` is succeeded, failed or cancelled."""
    environment = get_environment(session=session, environment_id=environment_id)
    rehearsal = service.create_rehearsal(
        session=session,
        environment=environment,
        request=service.request_of(body),
        requested_by=user.username,
        caps=QueueCaps.of(settings),
        settings=settings,
    )
    wake_local_worker(request.app)
    return rehearsal_public(session, rehearsal)


@router.get("/environments/{environment_id}/rehearsals")
def list_rehearsals(session: SessionDep, environment_id: int) -> list[RehearsalPublic]:
    environment = get_environment(session=session, environment_id=environment_id)
    return [rehearsal_public(session, r) for r in service.list_rehearsals(session=session, environment=environment)]


@router.get("/rehearsals/{rehearsal_id}")
def read_rehearsal(session: SessionDep, rehearsal_id: int) -> RehearsalPublic:
    return rehearsal_public(session, service.get_rehearsal(session=session, rehearsal_id=rehearsal_id))


@router.get("/rehearsals/{rehearsal_id}/schedule", response_class=PlainTextResponse)
def read_schedule(session: SessionDep, rehearsal_id: int) -> PlainTextResponse:
    """The schedule as redoprobe replayed it (`CONNECTION OFFSET_SECONDS BYTES` per slot)."""
    rehearsal = service.get_rehearsal(session=session, rehearsal_id=rehearsal_id)
    return PlainTextResponse(rehearsal.schedule_text, headers={"X-Schedule-SHA256": rehearsal.schedule_sha256})


@router.post("/rehearsals/{rehearsal_id}/cancel")
def cancel_rehearsal(session: SessionDep, user: ApiOperator, rehearsal_id: int) -> RehearsalPublic:
    """Cancel every run of the rehearsal still queued or running; their probes are stopped."""
    rehearsal = service.get_rehearsal(session=session, rehearsal_id=rehearsal_id)
    service.cancel_rehearsal(session=session, rehearsal=rehearsal)
    session.refresh(rehearsal)
    return rehearsal_public(session, rehearsal)


@router.delete("/rehearsals/{rehearsal_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_rehearsal(session: SessionDep, user: ApiOperator, rehearsal_id: int) -> None:
    """Delete a finished rehearsal with its runs and schedule (admin role: its runs are measurements;
    409 while a run of it is queued or running). Frees its owner's room for schedules."""
    rehearsal = service.get_rehearsal(session=session, rehearsal_id=rehearsal_id)
    try:
        storage.delete_rehearsal(session=session, rehearsal=rehearsal, role=user.role)
    except PermissionError as error:
        raise HTTPException(status.HTTP_403_FORBIDDEN, str(error)) from None
