"""The title blocks of the pages' charts (charts.TitleBlock): what each figure shows, of which
environment and hosts, over which period and when measured, so a chart saved from its toolbar (PNG
or SVG) can be pasted into a change document and still say what it is (issue 58)."""

from __future__ import annotations

from datetime import datetime

from redolab.charts import TitleBlock, span, when
from redolab.core.units import format_bytes, format_duration


def few(names: list[str], shown: int = 2) -> str:
    """Names as a title line lists them: the first few, then how many more (a title does not wrap)."""
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def hosts_of(client: str, server: str, *, reverse: bool = False) -> str:
    """The path as it carried data: sender → receiver."""
    return f"{server} → {client}" if reverse else f"{client} → {server}"


def run_settings(mode: str, conns: int, message_bytes: int, sockbuf_bytes: int | None) -> str:
    buffer = format_bytes(sockbuf_bytes, 0) if sockbuf_bytes else "autotuned"
    plural = "s" if conns != 1 else ""
    return f"{mode.upper()} · {conns} connection{plural} · {format_bytes(message_bytes, 0)} messages · buffer {buffer}"


def run_title(run, environment, *, what: str, loopback: bool) -> TitleBlock:
    """A run's chart: its label, its path, when it ran and for how long, its settings."""
    label = f"run #{run.id}" + (f" {run.label}" if run.label else "")
    period = ""
    if run.started_at is not None:
        period = f"measured {span(run.started_at, run.finished_at)}"
        if run.seconds:
            period += f" ({format_duration(run.seconds, 1)})"
    elif run.status.value in ("queued", "running"):
        period = f"requested {when(run.created_at)}, not measured yet"
    return TitleBlock(
        what=f"{what}, {label}",
        environment=environment.name,
        hosts=hosts_of(run.client_host_name, run.server_host_name, reverse=run.reverse),
        period=period,
        measured=run_settings(run.mode.value, run.conns, run.message_bytes, run.sockbuf_bytes),
        loopback=loopback,
    )


def sweep_title(sweep, environment, *, loopback: bool) -> TitleBlock:
    """A sweep's chart: its kind and label, its path, the period its runs measured."""
    measured = [run for run in sweep.runs if run.started_at is not None]
    first = min((run.started_at for run in measured), default=None)
    last = max((run.finished_at or run.started_at for run in measured), default=None)
    repetitions = f" · {sweep.repetitions} repetitions a point" if sweep.repetitions > 1 else ""
    return TitleBlock(
        what=f"{sweep.kind.label} #{sweep.id}" + (f": {sweep.label}" if sweep.label else ""),
        environment=environment.name,
        hosts=hosts_of(sweep.client_host_name, sweep.server_host_name),
        period=f"measured {span(first, last)}" if first else "not measured yet",
        measured=_sweep_settings(sweep.parameters) + repetitions,
        loopback=loopback,
    )


def _sweep_settings(parameters: dict) -> str:
    """What every run of a sweep shares: mode, message size, duration (as the sweep stored them)."""
    parts = [str(parameters.get("mode") or "async").upper()]
    if isinstance(parameters.get("message_bytes"), int | float):
        parts.append(f"{format_bytes(parameters['message_bytes'], 0)} messages")
    if isinstance(parameters.get("duration_seconds"), int | float):
        parts.append(f"{format_duration(parameters['duration_seconds'], 1)} per run")
    return " · ".join(parts)


def rehearsal_title(rehearsal, environment, *, loopback: bool) -> TitleBlock:
    """A rehearsal's chart: the window of history replayed (on the database's clock) and when it ran."""
    zone = environment.time_zone or "UTC"
    runs = [run for run in rehearsal.runs if run.started_at is not None]
    first = min((run.started_at for run in runs), default=None)
    last = max((run.finished_at or run.started_at for run in runs), default=None)
    hosts = sorted({hosts_of(run.client_host_name, run.server_host_name) for run in rehearsal.runs})
    label = f": {rehearsal.label}" if rehearsal.label else ""
    return TitleBlock(
        what=f"Rehearsal #{rehearsal.id}{label}, measured beside the model",
        environment=environment.name,
        hosts=few(hosts, 3),
        period=f"replays {span(rehearsal.window_start, rehearsal.window_end, zone)}",
        measured=f"measured {span(first, last)}" if first else "not measured yet",
        loopback=loopback,
    )


def watch_title(watch, environment, checks: list, *, loopback: bool) -> TitleBlock:
    """A watch's chart: its path and the period of the checks drawn, the last one's time."""
    times = [check.at for check in checks]
    return TitleBlock(
        what=f"Watch: {watch.name}, measured against required",
        environment=environment.name,
        hosts=watch.path_label.replace(" -> ", " → "),
        period=f"checks {span(min(times), max(times))}" if times else "no check yet",
        measured=f"every {format_duration(watch.every_seconds, 0)} · last check {when(max(times))}" if times else "",
        loopback=loopback,
    )


def history_title(what: str, environment, imports: list, first: datetime | None, last: datetime | None) -> TitleBlock:
    """A History chart: the imports it is drawn from, the period they cover (the database's clock)."""
    zone = environment.time_zone or "UTC"
    names = [redo_import.filename for redo_import in imports]
    sources = few(names)
    latest = max((redo_import.created_at for redo_import in imports), default=None)
    return TitleBlock(
        what=what,
        environment=environment.name,
        hosts=f"redo history from {sources}" if sources else "",
        period=span(first, last, zone) if first else "",
        measured=f"imported {when(latest)}" if latest else "",
    )


def compare_title(what: str, *, environments: list[str], sweeps: list, runs: list, loopback: bool) -> TitleBlock:
    """A comparison's chart: the sweeps and runs compared, their paths and the period they measured."""
    measured = [run for sweep in sweeps for run in sweep.runs] + list(runs)
    starts = [run.started_at for run in measured if run.started_at is not None]
    ends = [run.finished_at or run.started_at for run in measured if run.started_at is not None]
    hosts = sorted({hosts_of(item.client_host_name, item.server_host_name) for item in [*sweeps, *runs]})
    compared = []
    if sweeps:
        compared.append("sweeps " + ", ".join(f"#{sweep.id}" for sweep in sweeps))
    if runs:
        compared.append("runs " + few([f"#{run.id}" for run in runs], 8))
    return TitleBlock(
        what=what,
        environment=few(environments),
        hosts=few(hosts),
        period=f"measured {span(min(starts), max(ends))}" if starts else "",
        measured=" · ".join(compared),
        loopback=loopback,
    )


def environment_path(environment) -> str:
    """The environment's path as its hosts name it: the primary's nodes → the standby's."""
    names = {
        role: [host.name for host in environment.hosts if host.role.value == role] for role in ("primary", "standby")
    }
    return hosts_of(few(names["primary"]), few(names["standby"])) if names["primary"] and names["standby"] else ""


def plan_chart_title(
    what: str, environment, *, first: datetime | None = None, last: datetime | None = None, measured: str = ""
) -> TitleBlock:
    """A chart of the plan or of the Db2 HADR section: the environment, its path, the period it reads."""
    zone = environment.time_zone or "UTC"
    return TitleBlock(
        what=what,
        environment=environment.name,
        hosts=environment_path(environment),
        period=span(first, last, zone) if first else "",
        measured=measured,
    )
