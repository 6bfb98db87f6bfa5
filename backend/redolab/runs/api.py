"""JSON API: runs (request, import, list, read, events, cancel, delete)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request, UploadFile, status
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.core.deps import PageDep, SessionDep, SettingsDep
from redolab.core.openapi import error_responses
from redolab.environments.service import get_environment
from redolab.jobs.admission import QueueCaps
from redolab.jobs.queue import wake_local_worker
from redolab.runs import loaded, service
from redolab.runs.models import Run
from redolab.runs.queueing import place_of
from redolab.runs.schemas import (
    ResultImport,
    RunCreate,
    RunEventPublic,
    RunPublic,
    RunsPublic,
    SyncUnderLoadCreate,
)

router = APIRouter(prefix="/api/v1", tags=["runs"], dependencies=[Depends(current_api_user)])


@router.post("/environments/{environment_id}/runs", status_code=status.HTTP_201_CREATED, responses=error_responses(429))
def create_run(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: ApiOperator,
    environment_id: int,
    run_in: RunCreate,
) -> RunPublic:
    """Queue a probe run from a client host to a server host (operator role). 429 when the user or
    the host pair has the most runs and sweeps queued that the server allows."""
    environment = get_environment(session=session, environment_id=environment_id)
    run = service.create_run(
        session=session,
        environment=environment,
        run_in=run_in,
        requested_by=user.username,
        caps=QueueCaps.of(settings),
        settings=settings,
    )
    wake_local_worker(request.app)
    return run_public(session, run)


UNDER_LOAD_PATH = "/environments/{environment_id}/runs/under-load"


@router.post(UNDER_LOAD_PATH, status_code=status.HTTP_201_CREATED, responses=error_responses(429))
def create_sync_under_load(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: ApiOperator,
    environment_id: int,
    run_in: SyncUnderLoadCreate,
) -> RunsPublic:
    """Queue a SYNC run on one connection and an ASYNC load on the same hosts, started together
    (operator role): the SYNC commit card sets its acknowledgements beside an idle SYNC run's."""
    environment = get_environment(session=session, environment_id=environment_id)
    runs = loaded.create_sync_under_load(
        session=session,
        environment=environment,
        sync_in=run_in,
        load_conns=run_in.load_conns,
        requested_by=user.username,
        caps=QueueCaps.of(settings),
        settings=settings,
    )
    wake_local_worker(request.app)
    return RunsPublic(data=[run_public(session, run) for run in runs], count=len(runs))


def run_public(session, run: Run) -> RunPublic:
    """A run as the API shows it, with its place in the queue while it waits."""
    public = RunPublic.model_validate(run)
    place = place_of(session, run_id=run.id) if run.status.value == "queued" else None
    if place is not None:
        public.queue_position, public.estimated_start_at = place.jobs_ahead, place.estimated_start_at
    return public


@router.post(
    "/environments/{environment_id}/runs/import", status_code=status.HTTP_201_CREATED, responses=error_responses(507)
)
def import_runs(
    session: SessionDep,
    user: ApiOperator,
    environment_id: int,
    files: list[UploadFile],
    client_host_id: int = Form(),
    server_host_id: int = Form(),
    format: str = Form("auto"),
    test_date: str = Form(""),
    label: str = Form(""),
    tags: str = Form(""),
    notes: str = Form(""),
) -> RunsPublic:
    """Import oratcptest client output (text) or iperf3 -J files as runs from the client host to the
    server host, one run per test, with their source marked (multipart form; operator role). Every
    file is read first: one unreadable file stores nothing (422 naming the file and line)."""
    environment = get_environment(session=session, environment_id=environment_id)
    fields = {"client_host_id": client_host_id, "server_host_id": server_host_id, "format": format}
    fields |= {"test_date": test_date, "label": label, "tags": tags, "notes": notes}
    try:
        import_in = ResultImport.model_validate(fields)
    except ValidationError as error:
        raise RequestValidationError(error.errors(include_url=False)) from None
    contents = service.read_result_uploads(files)
    runs = service.import_results(
        session=session, environment=environment, import_in=import_in, files=contents, requested_by=user.username
    )
    return RunsPublic(data=[RunPublic.model_validate(run) for run in runs], count=len(runs))


@router.get("/environments/{environment_id}/runs")
def list_runs(
    session: SessionDep,
    environment_id: int,
    page: PageDep,
) -> RunsPublic:
    """The environment's runs, newest first, a page at a time; `count` is how many there are in all."""
    environment = get_environment(session=session, environment_id=environment_id)
    runs = service.list_runs(session=session, environment=environment, limit=page.limit, offset=page.offset)
    data = [RunPublic.model_validate(run) for run in runs]
    return RunsPublic(data=data, count=service.count_runs(session=session, environment=environment))


@router.get("/runs/{run_id}")
def read_run(session: SessionDep, run_id: int) -> RunPublic:
    """One run with its summary, captured settings and exact commands; while it waits, its place in
    the queue (`queue_position`: jobs ahead of it on its hosts) and `estimated_start_at`."""
    return run_public(session, service.get_run(session=session, run_id=run_id))


@router.get("/runs/{run_id}/events")
def list_run_events(session: SessionDep, run_id: int) -> list[RunEventPublic]:
    """Every event the probes sent, in order (client and server)."""
    run = service.get_run(session=session, run_id=run_id)
    return [RunEventPublic(**event) for event in service.run_events(session=session, run=run)]


@router.delete("/runs/{run_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_run(session: SessionDep, user: ApiOperator, run_id: int) -> None:
    """Delete an imported run (operator role); runs measured by redoprobe are kept (409)."""
    service.delete_imported_run(session=session, run=service.get_run(session=session, run_id=run_id))


@router.post("/runs/{run_id}/cancel")
def cancel_run(session: SessionDep, user: ApiOperator, run_id: int) -> RunPublic:
    """Cancel a queued or running run (operator role)."""
    run = service.cancel_run(session=session, run=service.get_run(session=session, run_id=run_id))
    return run_public(session, run)
