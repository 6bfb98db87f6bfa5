"""Run pages: the New experiment form, the run page with its live chart, cancel, raw download."""

from __future__ import annotations

import json

from fastapi import APIRouter, Depends, Request, status
from pydantic import ValidationError
from starlette.responses import Response

from redolab.charts.runs import latency_histogram_figure, tcp_info_figure, throughput_figure
from redolab.core.db import utcnow
from redolab.core.deps import OperatorUser, SessionDep, current_html_user
from redolab.core.errors import FieldError
from redolab.core.forms import field_errors, form_data
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.core.units import format_bit_rate, format_bytes
from redolab.environments.service import get_environment
from redolab.jobs.worker import wake_local_worker
from redolab.probes import service
from redolab.probes.clusters import node_pairs
from redolab.probes.compare import mtu_of
from redolab.probes.models import Run, RunSource
from redolab.probes.parser import ack_percentiles, interval_series
from redolab.probes.schedules import Repeat, create_schedule, list_schedules
from redolab.probes.schemas import ResultImport, RunCreate, SweepCreate

router = APIRouter(dependencies=[Depends(current_html_user)])

SWEEP_DEFAULTS = {
    "kind": "connections",
    "mode": "async",
    "message_bytes": "1 MiB",
    "duration_seconds": "20 s",
    "interval_seconds": "2 s",
    "conns_start": "1",
    "conns_step": "",
    "conns_max": "16",
    "threshold_percent": "5",
    "sizes": "256 KiB, 1 MiB, 4 MiB, 16 MiB",
    "conns_values": "1",
    "repetitions": "1",
    "rate_bits_per_second": "",
    "label": "",
    "tags": "",
}

RUN_DEFAULTS = {
    "mode": "async",
    "conns": "1",
    "message_bytes": "1 MiB",
    "sockbuf_bytes": "",
    "duration_seconds": "60 s",
    "interval_seconds": "5 s",
    "delay_us": "0",
    "rate_bits_per_second": "",
    "write_dir": "",
    "label": "",
}


IMPORT_FORMATS = [
    ("auto", "Recognise it"),
    ("oratcptest", "oratcptest client output (text)"),
    ("iperf3", "iperf3 JSON (iperf3 -J)"),
]


def experiments_context(
    session,
    environment,
    *,
    values=None,
    errors=None,
    sweep_values=None,
    sweep_errors=None,
    import_values=None,
    import_errors=None,
    tag="",
    mtu="",
) -> dict:
    """What the environment page's Experiments section needs: the run and sweep forms, and the
    runs and sweeps (filtered by tag and by the MTU they ran at)."""
    hosts = environment.hosts
    primary = next((h for h in hosts if h.role.value == "primary"), None)
    standby = next((h for h in hosts if h.role.value == "standby"), None)
    pair = {
        "client_host_id": str(primary.id) if primary else "",
        "server_host_id": str(standby.id) if standby else "",
    }
    runs = service.list_runs(session=session, environment=environment)
    sweeps = service.list_sweeps(session=session, environment=environment)
    tags = sorted({t for item in [*runs, *sweeps] for t in item.tags or []})
    mtus = sorted({m for item in [*runs, *sweeps] if (m := mtu_of(item))})

    def keep(item) -> bool:
        return (not tag or tag in (item.tags or [])) and (not mtu or str(mtu_of(item)) == mtu)

    return {
        "schedules": list_schedules(session=session, environment=environment),
        "pair_count": len(node_pairs(environment)),
        "runs": [run for run in runs if keep(run)],
        "sweeps": [sweep for sweep in sweeps if keep(sweep)],
        "filter": {"tag": tag, "mtu": mtu, "tags": tags, "mtus": mtus},
        "run_values": values or {**RUN_DEFAULTS, **pair, **_platform_defaults(environment)},
        "run_errors": errors or {},
        "sweep_values": sweep_values or {**SWEEP_DEFAULTS, **pair},
        "sweep_errors": sweep_errors or {},
        "import_values": import_values or {"format": "auto", "test_date": "", **pair},
        "import_errors": import_errors or {},
        "import_formats": IMPORT_FORMATS,
        "host_options": [(str(h.id), f"{h.name} ({h.role.value} node {h.node_number})") for h in hosts],
    }


def _platform_defaults(environment) -> dict:
    """Db2 teams think in flushes of 4 KiB log pages: simhadr's default flush is 16 pages."""
    return {"message_bytes": "16 pages"} if environment.platform.value == "hadr" else {}


def experiments_form_error(request, session, environment, **forms) -> Response:
    """The Experiments section again with a form's errors and what was typed (422); the whole page
    when the form was posted without htmx."""
    if not is_htmx(request):
        from redolab.environments.views import environment_page  # the page's module imports this one

        return environment_page(request, session, environment, status_code=422, **forms)
    context = {"environment": environment, **experiments_context(session, environment, **forms)}
    return render(
        request,
        "environments/detail.html",
        context,
        block="experiments",
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )


def form_fields(values: dict) -> dict:
    """The submitted form without blanks (so defaults apply) and without the Repeat fields."""
    return {k: v for k, v in values.items() if (v != "" or k == "label") and not k.startswith("repeat_")}


def create_or_schedule(session, environment, item: RunCreate | SweepCreate, values: dict, username: str) -> str:
    """Queue the run or sweep, or, with "Repeat every" filled in, a schedule of them (its first
    occurrence now); returns the page to go to."""
    if values.get("repeat_every") or values.get("repeat_until"):
        try:
            repeat = Repeat.model_validate(
                {"every_seconds": values.get("repeat_every") or None, "until": values.get("repeat_until") or None}
            )
        except ValidationError as error:  # named after the form's fields
            field, message = next(iter(field_errors(error).items()))
            raise FieldError("repeat_until" if field == "until" else "repeat_every", message, 422) from None
        schedule = create_schedule(
            session=session, environment=environment, item=item, repeat=repeat, requested_by=username
        )
        return f"/schedules/{schedule.id}"
    if isinstance(item, SweepCreate):
        sweep = service.create_sweep(session=session, environment=environment, sweep_in=item, requested_by=username)
        return f"/sweeps/{sweep.id}"
    run = service.create_run(session=session, environment=environment, run_in=item, requested_by=username)
    return f"/runs/{run.id}"


@router.post("/environments/{environment_id}/runs")
async def create_run(request: Request, session: SessionDep, user: OperatorUser, environment_id: int) -> Response:
    """Queue a run from the New experiment form."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(await request.form())
    values["sync_write"] = "sync_write" in values
    try:
        run_in = RunCreate.model_validate(form_fields(values))
        created = create_or_schedule(session, environment, run_in, values, user.username)
    except ValidationError as error:
        errors = field_errors(error)
    except FieldError as error:
        session.rollback()
        errors = {error.field: error.message}
    else:
        wake_local_worker(request.app)
        return redirect(request, created)
    return experiments_form_error(request, session, environment, values=values, errors=errors)


async def read_result_uploads(uploads: list) -> list[tuple[str, bytes]]:
    """Uploaded result files as (name, bytes), each cut one byte past the per-file limit (so the
    import can say it is too large) and all within the per-import total."""
    files, total = [], 0
    for upload in uploads[: service.MAX_RESULT_FILES + 1]:
        data = await upload.read(service.MAX_RESULT_FILE_BYTES + 1)
        total += len(data)
        if total > service.MAX_RESULT_IMPORT_BYTES:
            limit = format_bytes(service.MAX_RESULT_IMPORT_BYTES, 0)
            raise FieldError("files", f"The files come to more than {limit}: import them in parts.", 422)
        files.append((upload.filename or "upload", data))
    return files


@router.post("/environments/{environment_id}/runs/import")
async def import_runs(request: Request, session: SessionDep, user: OperatorUser, environment_id: int) -> Response:
    """Import oratcptest or iperf3 result files as runs (every file read first; one bad file, none)."""
    environment = get_environment(session=session, environment_id=environment_id)
    form = await request.form()
    values = form_data(form)
    uploads = [upload for upload in form.getlist("files") if hasattr(upload, "read") and upload.filename]
    try:
        files = await read_result_uploads(uploads)
        import_in = ResultImport.model_validate({k: v for k, v in values.items() if k in ResultImport.model_fields})
        runs = service.import_results(
            session=session, environment=environment, import_in=import_in, files=files, requested_by=user.username
        )
    except ValidationError as error:
        errors = field_errors(error)
    except FieldError as error:
        session.rollback()
        errors = {error.field: error.message}
    else:
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


def _run_context(session, run: Run) -> dict:
    lines = service.run_lines(session=session, run=run, role="client")
    series = interval_series(lines)
    elapsed = None
    if run.started_at is not None:
        elapsed = ((run.finished_at or utcnow()) - run.started_at).total_seconds()
    end = next((json.loads(line)["data"] for line in lines if '"event":"end"' in line), None)
    histogram = (end or {}).get("ack_latency_us", {}).get("histogram") or []
    start = next((json.loads(line)["data"] for line in lines if '"event":"start"' in line), None)
    return {
        "run": run,
        "link_options": link_options(run, start),
        "elapsed_seconds": elapsed,
        "progress_percent": min(100, 100 * (elapsed or 0) / run.duration_seconds) if run.duration_seconds else 0,
        "interval_count": len(series["end_seconds"]),
        "throughput_figure": throughput_figure(series, duration_seconds=run.duration_seconds),
        # Imported oratcptest runs have throughput only: no TCP_INFO chart for them.
        "tcp_figure": tcp_info_figure(series) if any(v is not None for v in series["rtt_us"]) else None,
        "histogram_figure": latency_histogram_figure(histogram) if histogram else None,
        "ack_latency": (end or {}).get("ack_latency_us"),
        "sync_numbers": _sync_numbers(end),
        "queue_position": service.queue_position(session=session, run=run),
        "settings_keys": sorted(set(run.client_settings or {}) | set(run.server_settings or {})),
        "source_text": run.source_text if run.source is RunSource.oratcptest else None,
    }


@router.get("/runs/{run_id}")
def show_run(request: Request, session: SessionDep, run_id: int) -> Response:
    """The run page: live while it runs, the whole record afterwards."""
    run = service.get_run(session=session, run_id=run_id)
    environment = get_environment(session=session, environment_id=run.environment_id)
    return render(request, "probes/run.html", {"environment": environment, **_run_context(session, run)})


@router.get("/runs/{run_id}/live")
def show_run_live(request: Request, session: SessionDep, run_id: int) -> Response:
    """The live fragment, polled twice a second while the run is queued or running."""
    run = service.get_run(session=session, run_id=run_id)
    if run.status.finished:  # reload the page once, to show the full record; polling stops
        return Response(status_code=status.HTTP_200_OK, headers={"HX-Refresh": "true"})
    environment = get_environment(session=session, environment_id=run.environment_id)
    return render(request, "probes/run.html", {"environment": environment, **_run_context(session, run)}, block="live")


@router.post("/runs/{run_id}/cancel")
def cancel_run(request: Request, session: SessionDep, user: OperatorUser, run_id: int) -> Response:
    """Cancel: a queued run at once, a running one within a second (samples are kept)."""
    run = service.cancel_run(session=session, run=service.get_run(session=session, run_id=run_id))
    return redirect(request, f"/runs/{run.id}")


@router.get("/runs/{run_id}/events.jsonl")
def download_run_events(session: SessionDep, run_id: int) -> Response:
    """Every JSON line both probes printed, as received (one file, client and server marked)."""
    run = service.get_run(session=session, run_id=run_id)
    body = "".join(
        json.dumps({"role": event["role"], "event": event["event"], "data": event["data"]}) + "\n"
        for event in service.run_events(session=session, run=run)
    )
    headers = {"Content-Disposition": f'attachment; filename="redolab-run-{run.id}.jsonl"'}
    return Response(body, media_type="application/x-ndjson", headers=headers)


@router.delete("/runs/{run_id}")
def delete_run(request: Request, session: SessionDep, user: OperatorUser, run_id: int) -> Response:
    """Delete an imported run (a file imported against the wrong hosts, say)."""
    run = service.get_run(session=session, run_id=run_id)
    environment_id = run.environment_id
    service.delete_imported_run(session=session, run=run)
    return redirect(request, f"/environments/{environment_id}#runs")


@router.get("/runs/{run_id}/source")
def download_run_source(session: SessionDep, run_id: int) -> Response:
    """The text an imported run was read from (its test's part of the uploaded file)."""
    run = service.get_run(session=session, run_id=run_id)
    if run.source is RunSource.redoprobe or run.source_text is None:
        return Response("This run was measured by redoprobe, not imported.", status_code=status.HTTP_404_NOT_FOUND)
    json_file = run.source is RunSource.iperf3
    name = f"redolab-run-{run.id}-{run.source.value}.{'json' if json_file else 'txt'}"
    return Response(
        run.source_text,
        media_type="application/json" if json_file else "text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
