"""Db2 HADR on the environment page: db2pd captures, the hadrCalculator table, disk tests."""

from __future__ import annotations

import tempfile
from pathlib import Path

from fastapi import APIRouter, Depends, Request
from pydantic import ValidationError
from starlette.responses import HTMLResponse, Response

from redolab.auth.deps import OperatorUser, current_html_user
from redolab.charts.hadr import calculator_figure, monitoring_figure
from redolab.core import units
from redolab.core.deps import FormDep, SessionDep
from redolab.core.errors import FieldError
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.disktest.service import DiskTestCreate, create_disk_test, list_disk_tests
from redolab.environments.service import get_environment
from redolab.hadr import service
from redolab.hadr.calculator import MODES
from redolab.hadr.hops import hop_calculators, nearest_limit
from redolab.jobs.queue import wake_local_worker
from redolab.web.titles import plan_chart_title

router = APIRouter(dependencies=[Depends(current_html_user)])
TABLE_ROWS = 50


def hadr_context(session, environment) -> dict:
    """What the environment page's Db2 HADR section shows (empty for Data Guard environments)."""
    disk_tests = list_disk_tests(session=session, environment=environment, limit=10)
    if environment.platform.value != "hadr":
        return {"hadr": None, "disk_tests": disk_tests}
    zone = environment.time_zone or "UTC"
    monitoring = service.monitoring(session=session, environment=environment)
    calculator, inputs = service.environment_calculator(session=session, environment=environment)
    rows = _nearest_sync(calculator) if calculator is not None else []
    return {
        "disk_tests": disk_tests,
        "hadr": {
            "imports": service.list_hadr_imports(session=session, environment=environment),
            "monitoring": monitoring,
            "monitoring_figure": monitoring_figure(monitoring, zone, _monitoring_title(environment, monitoring)),
            "calculator": calculator,
            "inputs": inputs,
            "rows": rows,
            "modes": MODES,
            "advice": calculator.advice() if calculator else None,
            "recommendations": service.recommendations_from(
                environment=environment, watched=monitoring, calculator=calculator
            ),
            "calculator_figure": calculator_figure(calculator, zone, _calculator_title(environment, calculator)),
            "hops": _hops(session, environment, zone),
        },
    }


def _monitoring_title(environment, monitoring):
    if monitoring is None or not monitoring.samples:
        return None
    first, last = monitoring.samples[0][0], monitoring.samples[-1][0]
    return plan_chart_title("Db2 HADR log shipping, as db2pd -hadr captured it", environment, first=first, last=last)


def _calculator_title(environment, calculator, what: str = "hadrCalculator: each interval's log rate"):
    if calculator is None or not calculator.rows:
        return None
    first, last = calculator.rows[0].start, calculator.rows[-1].start
    return plan_chart_title(what + " against each sync mode's limit", environment, first=first, last=last)


def _hops(session, environment, zone: str) -> list[dict]:
    """With more than one standby, each hop's calculator and the rows its table lists (the principal's
    nearest its SYNC limit, as the single table; an auxiliary's nearest its SUPERASYNC limit)."""
    if len(environment.destinations) < 2:
        return []
    shown = []
    for hop in hop_calculators(session=session, environment=environment):
        view = {"hop": hop, "rows": nearest_limit(hop, TABLE_ROWS), "modes": MODES, "advice": None, "figure": None}
        if hop.calculator is not None and hop.role == "principal":
            view.update(
                rows=_nearest_sync(hop.calculator),
                advice=hop.calculator.advice(),
                figure=calculator_figure(
                    hop.calculator, zone, _calculator_title(environment, hop.calculator, f"{hop.name}: each interval")
                ),
            )
        shown.append(view)
    return shown


def _nearest_sync(calculator) -> list:
    """The intervals nearest (or beyond) the SYNC limit first, then in time."""
    worst = sorted(calculator.rows, key=lambda r: r.rate_bytes_per_second / r.limits["SYNC"], reverse=True)
    return sorted(worst[:TABLE_ROWS], key=lambda r: (r.start, r.member))


def _error(message: str, status_code: int = 422) -> HTMLResponse:
    from markupsafe import escape

    return HTMLResponse(f'<p class="error" id="hadr-error">{escape(message)}</p>', status_code=status_code)


@router.post("/environments/{environment_id}/hadr/captures")
def upload_captures(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Import a file of db2pd -hadr captures (all or nothing)."""
    environment = get_environment(session=session, environment_id=environment_id)
    upload = form.get("file")
    if upload is None or not getattr(upload, "filename", ""):
        return _error("Choose a file of db2pd -db DBNAME -hadr output to upload.")
    with tempfile.TemporaryDirectory(prefix="redolab-hadr-") as workdir:
        path = Path(workdir) / "captures"
        with open(path, "wb") as target:
            while chunk := upload.file.read(1024 * 1024):
                target.write(chunk)
        try:
            service.import_captures(
                session=session, environment=environment, path=path, filename=upload.filename, imported_by=user.username
            )
        except FieldError as error:
            return _error(error.message)
    return Response(status_code=200, headers={"HX-Refresh": "true"})


@router.delete("/environments/{environment_id}/hadr/imports/{import_id}")
def delete_captures(session: SessionDep, user: OperatorUser, environment_id: int, import_id: int) -> Response:
    environment = get_environment(session=session, environment_id=environment_id)
    record = service.get_hadr_import(session=session, environment=environment, import_id=import_id)
    service.delete_hadr_import(session=session, record=record)
    return Response(status_code=200, headers={"HX-Refresh": "true"})


@router.post("/environments/{environment_id}/disk-tests")
def start_disk_test(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Queue `redoprobe disk` at the given write sizes on a host; the page shows its progress."""
    environment = get_environment(session=session, environment_id=environment_id)
    try:
        sizes = [
            units.parse_size(part) for part in str(form.get("write_sizes") or "4K 64K 1M").replace(",", " ").split()
        ]
        test_in = DiskTestCreate(
            host_id=int(str(form.get("host_id") or 0)),
            path=str(form.get("path") or "").strip(),
            write_sizes=sizes,
            seconds_per_size=float(str(form.get("seconds_per_size") or 4)),
        )
    except (ValueError, ValidationError) as error:
        message = "; ".join(e["msg"] for e in error.errors()) if isinstance(error, ValidationError) else str(error)
        return _error(f"Disk test not started: {message}")
    try:
        create_disk_test(session=session, environment=environment, test_in=test_in, requested_by=user.username)
    except FieldError as error:
        return _error(error.message)

    wake_local_worker(request.app)
    return Response(status_code=200, headers={"HX-Refresh": "true"})


@router.get("/environments/{environment_id}/disk-tests")
def disk_tests_fragment(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The disk test list (polled while a test runs); a plain browser request goes to the Log disk
    tests section on the whole page."""
    environment = get_environment(session=session, environment_id=environment_id)
    if not is_htmx(request):
        return redirect(request, f"/environments/{environment.id}#log-disk")
    context = {"environment": environment, "disk_tests": list_disk_tests(session=session, environment=environment)}
    return render(request, "environments/_disk_tests.html", context)
