"""JSON API: sweeps (request, list, read, cancel)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.core.deps import SessionDep
from redolab.environments.service import get_environment
from redolab.jobs.queue import wake_local_worker
from redolab.runs.exports import sync_numbers
from redolab.sweeps import service
from redolab.sweeps.schemas import SweepCreate, SweepPublic, SweepsPublic

router = APIRouter(prefix="/api/v1", tags=["sweeps"], dependencies=[Depends(current_api_user)])


@router.post("/environments/{environment_id}/sweeps", status_code=status.HTTP_201_CREATED)
def create_sweep(
    request: Request, session: SessionDep, user: ApiOperator, environment_id: int, sweep_in: SweepCreate
) -> SweepPublic:
    """Queue a sweep (connections, sockbuf or kernel_max) between two hosts (operator role)."""
    environment = get_environment(session=session, environment_id=environment_id)
    sweep = service.create_sweep(
        session=session, environment=environment, sweep_in=sweep_in, requested_by=user.username
    )
    wake_local_worker(request.app)
    return SweepPublic.model_validate(sweep)


@router.get("/environments/{environment_id}/sweeps")
def list_sweeps(session: SessionDep, environment_id: int) -> SweepsPublic:
    """The environment's sweeps, newest first."""
    environment = get_environment(session=session, environment_id=environment_id)
    sweeps = [SweepPublic.model_validate(s) for s in service.list_sweeps(session=session, environment=environment)]
    return SweepsPublic(data=sweeps, count=len(sweeps))


@router.get("/sweeps/{sweep_id}")
def read_sweep(session: SessionDep, sweep_id: int) -> dict:
    """A sweep with its points (median and range of each grid point), seed table and runs."""
    sweep = service.get_sweep(session=session, sweep_id=sweep_id)
    return service.sweep_document(sweep, sync_numbers(session, sweep.runs))


@router.post("/sweeps/{sweep_id}/cancel")
def cancel_sweep(session: SessionDep, user: ApiOperator, sweep_id: int) -> SweepPublic:
    """Cancel a queued or running sweep (operator role)."""
    sweep = service.cancel_sweep(session=session, sweep=service.get_sweep(session=session, sweep_id=sweep_id))
    return SweepPublic.model_validate(sweep)
