"""Sweep pages (form, live progress, charts, seed table, cancel), the compare view, and exports."""

from __future__ import annotations

import json
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, status
from pydantic import ValidationError
from starlette.responses import Response

from redolab.auth.deps import AdminUser, OperatorUser, current_html_user
from redolab.charts import TitleBlock
from redolab.charts.sweeps import (
    buffer_figure,
    connections_figure,
    over_time_figure,
    runs_figure,
    series_over_time_figure,
)
from redolab.core.deps import FormDep, SessionDep
from redolab.core.errors import FieldError
from redolab.core.forms import form_data, form_errors
from redolab.core.responses import redirect
from redolab.core.templating import remember_unit_readings, render
from redolab.core.units import format_count
from redolab.environments.models import Environment
from redolab.environments.service import get_environment
from redolab.jobs.queue import wake_local_worker
from redolab.redo.analysis import stored_analysis
from redolab.runs import service as run_service
from redolab.runs.exports import run_documents, runs_csv, sync_numbers
from redolab.runs.models import RunStatus
from redolab.runs.queueing import place_of
from redolab.runs.schemas import RunCreate
from redolab.sweeps import clusters, compare, schedules
from redolab.sweeps import service as sweep_service
from redolab.sweeps.bulk import BulkCancel, bulk_cancel
from redolab.sweeps.models import Sweep, SweepKind
from redolab.sweeps.schemas import SweepCreate
from redolab.sweeps.sweeper import describe_point, restore_commands
from redolab.web.experiments import create_or_schedule, experiments_context, form_fields
from redolab.web.loopback import on_this_machine
from redolab.web.titles import compare_title, sweep_title
from redolab.web.workspace import experiments_form_error

router = APIRouter(dependencies=[Depends(current_html_user)])

MAX_COMPARED = 12  # sweeps
MAX_COMPARED_RUNS = 48  # runs: two days of hourly oratcptest tests, say


def _required_rate(session, environment) -> float | None:
    """The redo rate the link must carry (peak + headroom), when redo history was imported."""
    analysis = stored_analysis(session=session, environment=environment)
    requirement = analysis.requirement if analysis is not None else None
    return requirement.summed_required_bytes_per_second if requirement else None


@router.post("/environments/{environment_id}/sweeps")
def create_sweep(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Queue a sweep from the New sweep form."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(form)
    kernel_commands = None
    with form_errors(session) as errors:
        sweep_in = SweepCreate.model_validate(form_fields(values))
        try:
            created = create_or_schedule(
                session, environment, sweep_in, values, user.username, request.app.state.settings
            )
        except sweep_service.KernelChangesNotAllowed as error:  # the form shows the commands to run instead
            kernel_commands = "\n".join(error.commands)
            raise FieldError("kind", error.message.split(" Run these")[0], 422) from None
    if not errors:
        wake_local_worker(request.app)
        remember_unit_readings(request, list(sweep_in.unit_readings.values()), created)
        return redirect(request, created)
    if kernel_commands:
        errors["kernel_commands"] = kernel_commands
    return experiments_form_error(request, session, environment, sweep_values=values, sweep_errors=errors)


def sweep_figure(
    sweep: Sweep, required: float | None, points: list[dict], title: TitleBlock | None = None
) -> str | None:
    """The sweep's chart. A connection sweep's plateau is marked once its rule saw it (or, the sweep
    over, its best count of two or more measured): never after its first point."""
    series = compare.sweep_series(sweep, name=sweep.label or sweep.kind.label)
    if not any(one["points"] for one in series):
        return None
    if sweep.kind is SweepKind.connections:
        plateau = sweep_service.connection_plateau(sweep, points)
        measured = sum(1 for point in points if point["result"] is not None)
        shown = plateau.best if plateau.reached or (sweep.status.finished and measured > 1) else None
        return connections_figure(
            series, plateau=shown, reached=plateau.reached, required_bytes_per_second=required, title=title
        )
    axis = compare.buffer_axis_title(sweep.kind)
    return buffer_figure(series, axis_title=axis, required_bytes_per_second=required, title=title)


def _sweep_context(session, sweep: Sweep, *, live: bool = False) -> dict:
    """live: the once-a-second poll, which skips the redo analysis (the required-rate line
    appears with the full page)."""
    environment = get_environment(session=session, environment_id=sweep.environment_id)
    loopback = on_this_machine(session, [(sweep.client_host_id, sweep.server_host_id)])
    points = sweep_service.sweep_points(sweep)
    grid = sweep_service.sweep_grid(sweep)
    planned = len(grid) * sweep.repetitions
    done = sum(1 for run in sweep.runs if run.status.finished)
    current = next((run for run in sweep.runs if not run.status.finished), None)
    restore = None
    if sweep.kernel_original and sweep.kernel_restored is False:
        restore = restore_commands(
            sweep.kernel_original, {"client": sweep.client_host_name, "server": sweep.server_host_name}
        )
    return {
        "environment": environment,
        "sweep": sweep,
        "points": points,
        "planned_runs": planned,
        "done_runs": done,
        "progress_percent": min(100, round(100 * done / planned)) if planned else 0,
        "current_run": current,
        # no line of what the link must carry under loopback points: they are not the link
        "figure": sweep_figure(
            sweep,
            None if live or loopback else _required_rate(session, environment),
            points,
            sweep_title(sweep, environment, loopback=loopback),
        ),
        "loopback": loopback,
        "seed_rows": sweep_service.seed_rows(sweep),
        "restore_commands": restore,
        "describe": describe_point,
        "queue": place_of(session, sweep_id=sweep.id) if sweep.status is RunStatus.queued else None,
    }


@router.get("/sweeps/{sweep_id}")
def show_sweep(request: Request, session: SessionDep, sweep_id: int) -> Response:
    """The sweep page: progress while it runs, its chart, points and seed table."""
    sweep = sweep_service.get_sweep(session=session, sweep_id=sweep_id)
    return render(request, "sweeps/sweep.html", _sweep_context(session, sweep))


@router.get("/sweeps/{sweep_id}/live")
def show_sweep_live(request: Request, session: SessionDep, sweep_id: int) -> Response:
    """The live block, polled every second while the sweep is queued or running; the finished sweep's
    block (with the required-rate line) has no trigger, so polling stops by itself."""
    sweep = sweep_service.get_sweep(session=session, sweep_id=sweep_id)
    context = _sweep_context(session, sweep, live=not sweep.status.finished)
    return render(request, "sweeps/sweep.html", context, block="live")


@router.post("/sweeps/{sweep_id}/cancel")
def cancel_sweep(request: Request, session: SessionDep, user: OperatorUser, sweep_id: int) -> Response:
    """Cancel: the current run stops within a second and no further run starts."""
    sweep = sweep_service.cancel_sweep(
        session=session, sweep=sweep_service.get_sweep(session=session, sweep_id=sweep_id)
    )
    return redirect(request, f"/sweeps/{sweep.id}")


# -- export ---------------------------------------------------------------------------------
def csv_download(text: str, filename: str) -> Response:
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(text, media_type="text/csv; charset=utf-8", headers=headers)


def json_download(document: dict, filename: str) -> Response:
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(json.dumps(document, indent=1), media_type="application/json", headers=headers)


@router.get("/sweeps/{sweep_id}/export.csv")
def export_sweep_csv(session: SessionDep, sweep_id: int) -> Response:
    sweep = sweep_service.get_sweep(session=session, sweep_id=sweep_id)
    return csv_download(runs_csv(sweep.runs, sync_numbers(session, sweep.runs)), f"redolab-sweep-{sweep.id}.csv")


@router.get("/sweeps/{sweep_id}/export.json")
def export_sweep_json(session: SessionDep, sweep_id: int) -> Response:
    sweep = sweep_service.get_sweep(session=session, sweep_id=sweep_id)
    return json_download(
        sweep_service.sweep_document(sweep, sync_numbers(session, sweep.runs)), f"redolab-sweep-{sweep.id}.json"
    )


@router.get("/environments/{environment_id}/runs/export.{fmt}")
def export_runs(session: SessionDep, environment_id: int, fmt: str, tag: str = "", mtu: str = "") -> Response:
    """The environment's runs (the filters of its Experiments section apply) as CSV or JSON."""
    if fmt not in ("csv", "json"):
        return Response("Export as csv or json.", status_code=status.HTTP_404_NOT_FOUND)
    environment = get_environment(session=session, environment_id=environment_id)
    runs = experiments_context(session, environment, tag=tag, mtu=mtu)["matching_runs"]
    name = f"redolab-environment-{environment.id}-runs.{fmt}"
    sync = sync_numbers(session, runs)
    if fmt == "csv":
        return csv_download(runs_csv(runs, sync), name)
    return json_download({"runs": run_documents(runs, sync)}, name)


# -- compare --------------------------------------------------------------------------------
def _runs_over_time(runs, title=None) -> list[tuple[str, str]]:
    """A line per mode over the runs' start times (e.g. an imported day of oratcptest -freq tests)."""
    timed = sorted((r for r in runs if r.started_at is not None), key=lambda r: r.started_at)
    if len({r.started_at for r in timed}) <= 1:
        return []
    by_mode = {}
    for r in timed:  # ASYNC and SYNC runs measure different things: a line each
        by_mode.setdefault(f"{r.mode.value.upper()} runs", []).append(r)
    lines = [
        (
            name,
            [r.started_at for r in group],
            [r.bytes_per_second if r.status is RunStatus.succeeded else None for r in group],
        )
        for name, group in by_mode.items()
    ]
    return [("Runs over time", series_over_time_figure(lines, title("Runs over time") if title else None))]


def _environments_of(session, items) -> list[Environment]:
    ids = {item.environment_id for item in items}
    return [session.get(Environment, environment_id) for environment_id in sorted(ids)]


@router.get("/compare")
def show_compare(
    request: Request,
    session: SessionDep,
    sweep: Annotated[list[int] | None, Query()] = None,
    run: Annotated[list[int] | None, Query()] = None,
) -> Response:
    """Sweeps and runs overlaid on one chart per axis, with the settings that differ between them."""
    sweep, run = sweep or [], run or []
    sweeps = [sweep_service.get_sweep(session=session, sweep_id=i) for i in dict.fromkeys(sweep)][:MAX_COMPARED]
    runs = [run_service.get_run(session=session, run_id=i) for i in dict.fromkeys(run)][:MAX_COMPARED_RUNS]
    figures = []
    loopback = on_this_machine(session, [(x.client_host_id, x.server_host_id) for x in [*runs, *sweeps]])
    names = sorted({environment.name for environment in _environments_of(session, [*sweeps, *runs])})
    title = partial(compare_title, environments=names, sweeps=sweeps, runs=runs, loopback=loopback)
    connection_sweeps = [s for s in sweeps if s.kind is SweepKind.connections]
    if connection_sweeps:
        series = [one for s in connection_sweeps for one in compare.sweep_series(s)]
        plateau = connection_sweeps[0].best_conns if len(connection_sweeps) == 1 else None
        what = "Throughput against connections"
        figures.append((what, connections_figure(series, plateau=plateau, title=title(what))))
    for kind in (SweepKind.sockbuf, SweepKind.kernel_max):
        of_kind = [s for s in sweeps if s.kind is kind]
        if of_kind:
            series = [one for s in of_kind for one in compare.sweep_series(s)]
            what = f"Throughput against the {compare.buffer_axis_title(kind)}"
            figures.append((what, buffer_figure(series, axis_title=compare.buffer_axis_title(kind), title=title(what))))
    if runs:
        labels = [f"#{r.id} {r.label}".strip() for r in runs]
        rates = [r.bytes_per_second if r.status is RunStatus.succeeded else None for r in runs]
        figures.append(("Runs", runs_figure(labels, rates, title("Runs compared"))))
        figures += _runs_over_time(runs, title)
    items = [(compare.sweep_name(s), f"/sweeps/{s.id}", compare.sweep_settings(s)) for s in sweeps]
    items += [(f"run #{r.id} {r.label}".strip(), f"/runs/{r.id}", compare.run_settings(r)) for r in runs]
    differing = compare.differing([settings for _, _, settings in items])
    context = {
        "loopback": loopback,
        "items": items,
        "figures": figures,
        "differing": differing,
        "same_count": len({name for _, _, settings in items for name in settings}) - len(differing),
    }
    return render(request, "sweeps/compare.html", context)


# -- schedules ------------------------------------------------------------------------------
@router.get("/schedules/{schedule_id}")
def show_schedule(request: Request, session: SessionDep, schedule_id: int) -> Response:
    """A schedule: its occurrences over time (a point each), the skipped ones and why, Stop."""
    schedule = schedules.get_schedule(session=session, schedule_id=schedule_id)
    environment = get_environment(session=session, environment_id=schedule.environment_id)
    occurrences = schedules.occurrences(session=session, schedule=schedule)
    measured = [o for o in occurrences if o["bytes_per_second"] is not None]
    figure = None
    if measured:
        figure = over_time_figure(
            [o["at"] for o in measured],
            [o["bytes_per_second"] for o in measured],
            name=f"{schedule.client_host_name} → {schedule.server_host_name}",
        )
    context = {"environment": environment, "schedule": schedule, "occurrences": occurrences, "figure": figure}
    return render(request, "sweeps/schedule.html", context)


@router.post("/schedules/{schedule_id}/stop")
def stop_schedule(request: Request, session: SessionDep, user: OperatorUser, schedule_id: int) -> Response:
    """No further occurrence starts (one running now carries on)."""
    schedule = schedules.stop_schedule(
        session=session, schedule=schedules.get_schedule(session=session, schedule_id=schedule_id)
    )
    return redirect(request, f"/schedules/{schedule.id}")


# -- cluster runs ---------------------------------------------------------------------------
@router.post("/environments/{environment_id}/clusters")
def create_cluster(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """The New experiment form's "Run on every node pair": node n -> node n, all at once; or, with
    across_hops, "Run on every hop at once": the primary to every destination it feeds."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(form)
    values["sync_write"] = "sync_write" in values
    across_hops = values.pop("across_hops", "") == "1"
    with form_errors(session) as errors:
        run_in = RunCreate.model_validate({**form_fields(values), **clusters.TEMPLATE_PAIR})
        cluster = clusters.create_cluster(
            session=session,
            environment=environment,
            run_in=run_in,
            reverse=False,
            requested_by=user.username,
            across_hops=across_hops,
        )
    if not errors:
        wake_local_worker(request.app)
        return redirect(request, f"/clusters/{cluster.id}")
    return experiments_form_error(request, session, environment, values=values, errors=errors)


def _cluster_context(session, cluster) -> dict:
    environment = get_environment(session=session, environment_id=cluster.environment_id)
    # every pair between "This machine" hosts: the sum is the probe's, not a shared link's capacity
    loopback = on_this_machine(session, [(run.client_host_id, run.server_host_id) for run in cluster.runs])
    return {
        "environment": environment,
        "cluster": cluster,
        "summary": clusters.summary(cluster, environment),
        "loopback": loopback,
    }


@router.get("/clusters/{cluster_id}")
def show_cluster(request: Request, session: SessionDep, cluster_id: int) -> Response:
    """Each pair and the sum; polls while a pair is still queued or running."""
    context = _cluster_context(session, clusters.get_cluster(session=session, cluster_id=cluster_id))
    return render(request, "sweeps/cluster.html", context)


@router.get("/clusters/{cluster_id}/live")
def show_cluster_live(request: Request, session: SessionDep, cluster_id: int) -> Response:
    """The pairs table, polled every second while a pair runs (a plain request gets the whole page)."""
    context = _cluster_context(session, clusters.get_cluster(session=session, cluster_id=cluster_id))
    return render(request, "sweeps/cluster.html", context, block="live")


@router.post("/clusters/{cluster_id}/reverse")
def reverse_cluster(request: Request, session: SessionDep, user: OperatorUser, cluster_id: int) -> Response:
    """The same cluster run with the roles reversed (standby nodes send)."""
    cluster = clusters.get_cluster(session=session, cluster_id=cluster_id)
    environment = get_environment(session=session, environment_id=cluster.environment_id)
    run_in = RunCreate(**cluster.template, **clusters.TEMPLATE_PAIR)
    reversed_run = clusters.create_cluster(
        session=session, environment=environment, run_in=run_in, reverse=not cluster.reverse, requested_by=user.username
    )
    wake_local_worker(request.app)
    return redirect(request, f"/clusters/{reversed_run.id}")


@router.post("/clusters/{cluster_id}/cancel")
def cancel_cluster(request: Request, session: SessionDep, user: OperatorUser, cluster_id: int) -> Response:
    cluster = clusters.get_cluster(session=session, cluster_id=cluster_id)
    for run in cluster.runs:
        run_service.cancel_run(session=session, run=run)
    return redirect(request, f"/clusters/{cluster.id}")


@router.post("/admin/cancel")
def cancel_in_bulk(session: SessionDep, user: AdminUser, form: FormDep) -> Response:
    """The users page's bulk cancel (admin role): one user's, one environment's or one host pair's
    queued and running runs and sweeps; answers what was done, as text for the page."""
    values = {key: value.strip() for key, value in form_data(form).items() if value.strip()}
    try:
        selector = BulkCancel.model_validate(values)
    except ValidationError as error:
        message = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'form'}: {e['msg']}" for e in error.errors())
        return Response(message, status_code=status.HTTP_422_UNPROCESSABLE_ENTITY, media_type="text/plain")
    done = bulk_cancel(session=session, selector=selector)
    return Response(  # counts only: nothing the user typed
        f"Cancelled {format_count(done.runs_cancelled, 'queued run')} and "
        f"{format_count(done.sweeps_cancelled, 'queued sweep')}; asked "
        f"{format_count(done.runs_stopping, 'running run')} and "
        f"{format_count(done.sweeps_stopping, 'running sweep')} to stop; stopped "
        f"{format_count(done.schedules_stopped, 'schedule')}.",
        media_type="text/plain",
    )
