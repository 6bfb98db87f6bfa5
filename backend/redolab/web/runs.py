"""Run pages: the New experiment form, the run page with its live chart, cancel, raw download."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from fastapi import APIRouter, Depends, Request, status
from starlette.responses import Response

from redolab.auth.deps import OperatorUser, current_html_user
from redolab.charts.runs import drawn_series, latency_histogram_figure, tcp_info_figure, throughput_figure
from redolab.core.db import utcnow
from redolab.core.deps import FormDep, SessionDep
from redolab.core.forms import form_data, form_errors
from redolab.core.responses import redirect
from redolab.core.templating import remember_unit_readings, render
from redolab.core.units import format_bit_rate
from redolab.environments.service import get_environment
from redolab.jobs.admission import QueueCaps
from redolab.jobs.queue import wake_local_worker
from redolab.runs import loaded
from redolab.runs import service as run_service
from redolab.runs.models import Run, RunSource
from redolab.runs.parsers.redoprobe import ack_percentiles, interval_series
from redolab.runs.queueing import place_of
from redolab.runs.schemas import ResultImport, RunCreate, SyncUnderLoadCreate
from redolab.web.experiments import create_or_schedule, form_fields
from redolab.web.loopback import on_this_machine
from redolab.web.titles import run_title
from redolab.web.workspace import experiments_form_error

router = APIRouter(dependencies=[Depends(current_html_user)])


@router.post("/environments/{environment_id}/runs")
def create_run(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Queue a run from the New experiment form."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(form)
    values["sync_write"] = "sync_write" in values
    with form_errors(session) as errors:
        fields = form_fields({k: v for k, v in values.items() if k != "load_conns"})
        run_in = RunCreate.model_validate(fields)
        settings = request.app.state.settings
        if values.get("load_conns"):  # SYNC under load: the run and its load, started together
            created = _under_load(session, environment, fields, values, user.username, settings)
        else:
            created = create_or_schedule(session, environment, run_in, values, user.username, settings)
    if not errors:
        wake_local_worker(request.app)
        remember_unit_readings(request, list(run_in.unit_readings.values()), created)
        return redirect(request, created)
    return experiments_form_error(request, session, environment, values=values, errors=errors)


def _under_load(session, environment, fields: dict, values: dict, username: str, settings) -> str:
    sync_in = SyncUnderLoadCreate.model_validate({**fields, "load_conns": values["load_conns"]})
    sync, _ = loaded.create_sync_under_load(
        session=session,
        environment=environment,
        sync_in=sync_in,
        load_conns=sync_in.load_conns,
        requested_by=username,
        caps=QueueCaps.of(settings),
        settings=settings,
    )
    return f"/runs/{sync.id}"


@router.post("/environments/{environment_id}/runs/import")
def import_runs(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Import oratcptest or iperf3 result files as runs (every file read first; one bad file, none)."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(form)
    uploads = [upload for upload in form.getlist("files") if hasattr(upload, "read") and upload.filename]
    with form_errors(session) as errors:
        files = run_service.read_result_uploads(uploads)
        import_in = ResultImport.model_validate({k: v for k, v in values.items() if k in ResultImport.model_fields})
        runs = run_service.import_results(
            session=session, environment=environment, import_in=import_in, files=files, requested_by=user.username
        )
    if not errors:
        if len(runs) == 1:
            return redirect(request, f"/runs/{runs[0].id}")
        return redirect(request, f"/environments/{environment.id}?imported={len(runs)}#runs")
    return experiments_form_error(request, session, environment, import_values=values, import_errors=errors)


def _sync_numbers(end: dict | None) -> dict | None:
    """p50/p95/p99 acknowledgement latency and the standby's write time per message (seconds)."""
    ack = (end or {}).get("ack_latency_us") or {}
    if not ack.get("count"):
        return None
    percentiles = ack_percentiles(ack)
    written = (end or {}).get("server_write_seconds")
    return {**percentiles, "write_per_message": written / ack["count"] if written is not None else None}


def link_options(run: Run, start: dict | None) -> str:
    """The link options the probe ran with, in words; the congestion control as the client's
    start event reported it (the system default when none was asked for)."""
    start = start or {}
    parts = []
    if congestion := start.get("congestion") or run.congestion:
        parts.append(f"congestion control {congestion}")
    if run.fq_rate_bits_per_second:
        parts.append(f"paced to at most {format_bit_rate(run.fq_rate_bits_per_second)} per connection")
    if run.zerocopy:
        parts.append("zero copy (sendfile)")
    if start.get("bind") or start.get("cport"):
        parts.append(f"from {start.get('bind') or 'any address'} port {start.get('cport') or 'any'}")
    return " · ".join(parts)


_RECORDS_CACHED = 64
_records: OrderedDict[tuple, dict] = OrderedDict()
_records_lock = threading.Lock()


def _recorded(session, run: Run, environment, loopback: bool) -> dict:
    """What a run page draws from the run's lines: read and drawn once per process for a finished
    run (its lines never change again; the key holds its end), every time while it runs."""
    key = (run.id, run.status.value, run.finished_at, environment.name) if run.status.finished else None
    if key is not None:
        with _records_lock:
            if key in _records:
                _records.move_to_end(key)
                return _records[key]
    lines = run_service.run_lines(session=session, run=run, role="client")
    series = interval_series(lines)
    drawn = drawn_series(series)
    end = next((json.loads(line)["data"] for line in lines if '"event":"end"' in line), None)
    histogram = (end or {}).get("ack_latency_us", {}).get("histogram") or []
    start = next((json.loads(line)["data"] for line in lines if '"event":"start"' in line), None)

    def title(what: str):
        return run_title(run, environment, what=what, loopback=loopback)

    record = {
        "link_options": link_options(run, start),
        "interval_count": len(series["end_seconds"]),
        "drawn_count": len(drawn["end_seconds"]),
        "throughput_figure": throughput_figure(
            drawn, duration_seconds=run.duration_seconds, title=title("Throughput received")
        ),
        # Imported oratcptest runs have throughput only: no TCP_INFO chart for them.
        "tcp_figure": tcp_info_figure(drawn, title("TCP_INFO (client side)"))
        if any(v is not None for v in drawn["rtt_us"])
        else None,
        "histogram_figure": latency_histogram_figure(histogram, title("SYNC acknowledgement latency"))
        if histogram
        else None,
        "ack_latency": (end or {}).get("ack_latency_us"),
        "sync_numbers": _sync_numbers(end),
    }
    if key is not None:
        with _records_lock:
            _records[key] = record
            while len(_records) > _RECORDS_CACHED:
                _records.popitem(last=False)
    return record


def _run_context(session, run: Run, environment) -> dict:
    loopback = on_this_machine(session, [(run.client_host_id, run.server_host_id)])
    elapsed = None
    if run.started_at is not None:
        elapsed = ((run.finished_at or utcnow()) - run.started_at).total_seconds()
    return {
        "run": run,
        **_recorded(session, run, environment, loopback),
        "elapsed_seconds": elapsed,
        "progress_percent": min(100, 100 * (elapsed or 0) / run.duration_seconds) if run.duration_seconds else 0,
        "queue": place_of(session, run_id=run.id) if run.status.value == "queued" else None,
        "settings_keys": sorted(set(run.client_settings or {}) | set(run.server_settings or {})),
        "source_text": run.source_text if run.source is RunSource.oratcptest else None,
        "loopback": loopback,
    }


@router.get("/runs/{run_id}")
def show_run(request: Request, session: SessionDep, run_id: int) -> Response:
    """The run page: live while it runs, the whole record afterwards."""
    run = run_service.get_run(session=session, run_id=run_id)
    environment = get_environment(session=session, environment_id=run.environment_id)
    return render(request, "runs/run.html", {"environment": environment, **_run_context(session, run, environment)})


@router.get("/runs/{run_id}/live")
def show_run_live(request: Request, session: SessionDep, run_id: int) -> Response:
    """The live block, polled while the run is queued or running; once it has finished the block is
    the whole record, without a trigger, so polling stops by itself."""
    run = run_service.get_run(session=session, run_id=run_id)
    environment = get_environment(session=session, environment_id=run.environment_id)
    return render(
        request, "runs/run.html", {"environment": environment, **_run_context(session, run, environment)}, block="live"
    )


@router.post("/runs/{run_id}/cancel")
def cancel_run(request: Request, session: SessionDep, user: OperatorUser, run_id: int) -> Response:
    """Cancel: a queued run at once, a running one within a second (samples are kept)."""
    run = run_service.cancel_run(session=session, run=run_service.get_run(session=session, run_id=run_id))
    return redirect(request, f"/runs/{run.id}")


@router.get("/runs/{run_id}/events.jsonl")
def download_run_events(session: SessionDep, run_id: int) -> Response:
    """Every JSON line both probes printed, as received (one file, client and server marked)."""
    run = run_service.get_run(session=session, run_id=run_id)
    body = "".join(
        json.dumps({"role": event["role"], "event": event["event"], "data": event["data"]}) + "\n"
        for event in run_service.run_events(session=session, run=run)
    )
    headers = {"Content-Disposition": f'attachment; filename="redolab-run-{run.id}.jsonl"'}
    return Response(body, media_type="application/x-ndjson", headers=headers)


@router.delete("/runs/{run_id}")
def delete_run(request: Request, session: SessionDep, user: OperatorUser, run_id: int) -> Response:
    """Delete an imported run (a file imported against the wrong hosts, say)."""
    run = run_service.get_run(session=session, run_id=run_id)
    environment_id = run.environment_id
    run_service.delete_imported_run(session=session, run=run)
    return redirect(request, f"/environments/{environment_id}#runs")


@router.get("/runs/{run_id}/source")
def download_run_source(session: SessionDep, run_id: int) -> Response:
    """The text an imported run was read from (its test's part of the uploaded file)."""
    run = run_service.get_run(session=session, run_id=run_id)
    if run.source is RunSource.redoprobe or run.source_text is None:
        return Response("This run was measured by redoprobe, not imported.", status_code=status.HTTP_404_NOT_FOUND)
    json_file = run.source is RunSource.iperf3
    name = f"redolab-run-{run.id}-{run.source.value}.{'json' if json_file else 'txt'}"
    return Response(
        run.source_text,
        media_type="application/json" if json_file else "text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
