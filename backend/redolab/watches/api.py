"""JSON API: link watches (make, list, read with their checks, silence, stop/start, delete)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status

from redolab.auth.deps import ApiOperator, ApiUser, current_api_user
from redolab.core.deps import SessionDep, SettingsDep
from redolab.core.openapi import error_responses
from redolab.environments.service import get_environment
from redolab.jobs.admission import QueueCaps
from redolab.jobs.queue import wake_local_worker
from redolab.watches import service
from redolab.watches.schemas import CheckPublic, WatchCreate, WatchPublic, WatchSilence

router = APIRouter(prefix="/api/v1", tags=["watches"], dependencies=[Depends(current_api_user)])


@router.post(
    "/environments/{environment_id}/watches", status_code=status.HTTP_201_CREATED, responses=error_responses(429)
)
def create_watch(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: ApiOperator,
    environment_id: int,
    body: WatchCreate,
) -> WatchPublic:
    """Watch a path against the environment's requirement (operator role); the first check starts now."""
    environment = get_environment(session=session, environment_id=environment_id)
    watch = service.create_watch(
        session=session, environment=environment, watch_in=body, requested_by=user.username, caps=QueueCaps.of(settings)
    )
    wake_local_worker(request.app)
    return WatchPublic.model_validate(watch)


@router.get("/environments/{environment_id}/watches")
def list_watches(session: SessionDep, environment_id: int) -> list[WatchPublic]:
    environment = get_environment(session=session, environment_id=environment_id)
    return [WatchPublic.model_validate(w) for w in service.list_watches(session=session, environment=environment)]


@router.get("/watches/{watch_id}")
def read_watch(session: SessionDep, user: ApiUser, watch_id: int) -> WatchPublic:
    """A watch; a deleted one (its history kept) only for an admin."""
    return WatchPublic.model_validate(service.get_watch(session=session, watch_id=watch_id, user=user))


@router.get("/watches/{watch_id}/checks")
def list_checks(session: SessionDep, user: ApiUser, watch_id: int, limit: int = 100) -> list[CheckPublic]:
    """The last checks (at most 500), oldest first: measured against required, the verdict, or why skipped."""
    watch = service.get_watch(session=session, watch_id=watch_id, user=user)
    checks = service.list_checks(session=session, watch=watch, limit=max(1, min(limit, service.CHECKS_SHOWN)))
    return [CheckPublic.model_validate(c) for c in checks]


@router.post("/watches/{watch_id}/silence")
def silence_watch(session: SessionDep, user: ApiOperator, watch_id: int, body: WatchSilence) -> WatchPublic:
    """No notifications until `until` (maintenance); the checks and the state go on. The watch's owner's or
    an admin's (403); more than a day is an admin's; its receivers are told."""
    watch = service.get_watch(session=session, watch_id=watch_id)
    return WatchPublic.model_validate(service.silence_watch(session=session, watch=watch, silence=body, user=user))


@router.delete("/watches/{watch_id}/silence")
def end_silence(session: SessionDep, user: ApiOperator, watch_id: int) -> WatchPublic:
    watch = service.get_watch(session=session, watch_id=watch_id)
    return WatchPublic.model_validate(service.silence_watch(session=session, watch=watch, silence=None, user=user))


@router.post("/watches/{watch_id}/stop")
def stop_watch(session: SessionDep, user: ApiOperator, watch_id: int) -> WatchPublic:
    """Stop the watch: its owner's or an admin's (403)."""
    watch = service.get_watch(session=session, watch_id=watch_id)
    return WatchPublic.model_validate(service.set_active(session=session, watch=watch, active=False, user=user))


@router.post("/watches/{watch_id}/start", responses=error_responses(429))
def start_watch(
    request: Request, session: SessionDep, settings: SettingsDep, user: ApiOperator, watch_id: int
) -> WatchPublic:
    watch = service.get_watch(session=session, watch_id=watch_id)
    watch = service.set_active(session=session, watch=watch, active=True, caps=QueueCaps.of(settings), user=user)
    wake_local_worker(request.app)
    return WatchPublic.model_validate(watch)


@router.delete("/watches/{watch_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_watch(session: SessionDep, user: ApiOperator, watch_id: int) -> None:
    """Delete the watch (its owner's or an admin's, 403 otherwise): it stops and leaves every list, its
    receivers are told, and its checks and notifications are kept for admins to read."""
    service.delete_watch(session=session, watch=service.get_watch(session=session, watch_id=watch_id), user=user)
