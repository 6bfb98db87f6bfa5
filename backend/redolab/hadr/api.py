"""JSON API: Db2 HADR monitoring imports, the hadrCalculator view, and disk tests."""

from __future__ import annotations

import tempfile
from pathlib import Path

from fastapi import APIRouter, Depends, Request, UploadFile, status
from fastapi.responses import Response

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.core.deps import SessionDep
from redolab.core.errors import FieldError
from redolab.core.openapi import error_responses
from redolab.disktest.service import (
    DiskTestCreate,
    create_disk_test,
    disk_test_json,
    get_disk_test,
    list_disk_tests,
)
from redolab.environments.service import get_environment
from redolab.hadr import service
from redolab.hadr.hops import environment_calculators
from redolab.jobs.queue import wake_local_worker

router = APIRouter(prefix="/api/v1/environments", tags=["hadr"], dependencies=[Depends(current_api_user)])


def import_json(record) -> dict:
    return {
        "id": record.id,
        "filename": record.filename,
        "sha256": record.sha256,
        "layouts": record.layouts,
        "captures": record.captures,
        "notes": record.notes,
        "time_zone": record.time_zone,
        "first_time": record.first_time.isoformat() if record.first_time else None,
        "last_time": record.last_time.isoformat() if record.last_time else None,
        "imported_by": record.imported_by,
        "created_at": record.created_at.isoformat(),
    }


@router.post("/{environment_id}/hadr/captures", status_code=status.HTTP_201_CREATED, responses=error_responses(507))
def upload_captures(session: SessionDep, user: ApiOperator, environment_id: int, file: UploadFile) -> dict:
    """Import a file of `db2pd -db DBNAME -hadr` captures (both layouts), all or nothing."""
    environment = get_environment(session=session, environment_id=environment_id)
    if not file.filename:
        raise FieldError("file", "Send the db2pd output as `file` (multipart).", 422)
    with tempfile.TemporaryDirectory(prefix="redolab-hadr-") as workdir:
        path = Path(workdir) / "captures"
        with open(path, "wb") as target:
            while chunk := file.file.read(1024 * 1024):
                target.write(chunk)
        record = service.import_captures(
            session=session, environment=environment, path=path, filename=file.filename, imported_by=user.username
        )
    return import_json(record)


@router.get("/{environment_id}/hadr")
def read_monitoring(session: SessionDep, environment_id: int) -> dict:
    """Every imported capture, the primary's log generation rate, congestion and its diagnosis, and the
    Db2 settings recommended from the values the captures show (value: seconds, pages or bytes)."""
    environment = get_environment(session=session, environment_id=environment_id)
    imports = service.list_hadr_imports(session=session, environment=environment)
    monitoring = service.monitoring(session=session, environment=environment)
    calculator, _ = service.environment_calculator(session=session, environment=environment)
    found = service.recommendations_from(environment=environment, watched=monitoring, calculator=calculator)
    return {
        "imports": [import_json(i) for i in imports],
        "monitoring": monitoring.to_json() if monitoring else None,
        "recommendations": [
            {"setting": r.setting, "line": r.line, "value": r.value, "captured": r.captured, "why": r.why}
            for r in found
        ],
    }


@router.delete("/{environment_id}/hadr/imports/{import_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_captures(session: SessionDep, user: ApiOperator, environment_id: int, import_id: int) -> Response:
    environment = get_environment(session=session, environment_id=environment_id)
    service.delete_hadr_import(
        session=session, record=service.get_hadr_import(session=session, environment=environment, import_id=import_id)
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{environment_id}/hadr-calculator")
def read_calculator(session: SessionDep, environment_id: int) -> dict:
    """For every interval of the log history, the rate each sync mode sustains with the measured
    network and disks, and whether the workload exceeded it; or what is missing to compute it.
    `destinations`: the same per hop (the principal in its sync mode, each auxiliary in SUPERASYNC)."""
    environment = get_environment(session=session, environment_id=environment_id)
    return environment_calculators(session=session, environment=environment)[0]


@router.post("/{environment_id}/disk-tests", status_code=status.HTTP_202_ACCEPTED)
def start_disk_test(
    request: Request, session: SessionDep, user: ApiOperator, environment_id: int, body: DiskTestCreate
) -> dict:
    """Queue `redoprobe disk` on a host at two or more write sizes; the fit is stored on the host."""
    environment = get_environment(session=session, environment_id=environment_id)
    test = create_disk_test(session=session, environment=environment, test_in=body, requested_by=user.username)
    wake_local_worker(request.app)
    return disk_test_json(test)


@router.get("/{environment_id}/disk-tests")
def read_disk_tests(session: SessionDep, environment_id: int) -> list[dict]:
    environment = get_environment(session=session, environment_id=environment_id)
    return [disk_test_json(test) for test in list_disk_tests(session=session, environment=environment)]


@router.get("/{environment_id}/disk-tests/{test_id}")
def read_disk_test(session: SessionDep, environment_id: int, test_id: int) -> dict:
    environment = get_environment(session=session, environment_id=environment_id)
    return disk_test_json(get_disk_test(session=session, environment=environment, test_id=test_id))
