"""Comparison over time: sweeps and runs as chart series, and the settings that differ between them."""

from __future__ import annotations

from redolab.core.units import format_bit_rate, format_bytes, format_duration
from redolab.runs.models import Run, RunStatus
from redolab.sweeps import service
from redolab.sweeps.models import Sweep, SweepKind


def _triple(value) -> str:
    return " ".join(str(v) for v in value) if isinstance(value, list) else ("–" if value is None else str(value))


def run_settings(run: Run, *, swept: SweepKind | None = None) -> dict[str, str]:
    """What a run ran with, as text with units: the parameters and the captured host settings.
    The axis a sweep varies is left out (it is the chart's x axis)."""
    client, server = run.client_settings or {}, run.server_settings or {}
    settings = {
        "client → server": f"{run.client_host_name} → {run.server_host_name}",
        "source": run.source.label,
        "mode": run.mode.value,
        "message size": format_bytes(run.message_bytes),
        "duration per run": format_duration(run.duration_seconds),
        "paced to": format_bit_rate(run.rate_bits_per_second) if run.rate_bits_per_second else "unpaced",
    }
    if swept is not SweepKind.connections:
        settings["connections"] = str(run.conns)
    if swept not in (SweepKind.sockbuf, SweepKind.kernel_max):
        settings["socket buffer"] = format_bytes(run.sockbuf_bytes) if run.sockbuf_bytes else "autotuned"
    for side, captured in (("client", client), ("server", server)):
        settings[f"MTU ({side})"] = f"{captured['mtu_bytes']} bytes" if captured.get("mtu_bytes") else "–"
        if swept is not SweepKind.kernel_max:
            settings[f"tcp_rmem ({side})"] = _triple(captured.get("tcp_rmem"))
            settings[f"tcp_wmem ({side})"] = _triple(captured.get("tcp_wmem"))
        settings[f"congestion control ({side})"] = captured.get("tcp_congestion_control") or "–"
        settings[f"kernel ({side})"] = captured.get("kernel") or "–"
    settings["probe version"] = run.probe_version or "–"
    settings["tags"] = ", ".join(run.tags or []) or "–"
    return settings


def sweep_settings(sweep: Sweep) -> dict[str, str]:
    """A sweep's settings: its first completed run's, with the sweep's own grid."""
    first = next((run for run in sweep.runs if run.status is RunStatus.succeeded), None)
    settings = run_settings(first, swept=sweep.kind) if first else {}
    settings["sweep"] = sweep.kind.label
    settings["repetitions"] = str(sweep.repetitions)
    settings["tags"] = ", ".join(sweep.tags or []) or "–"
    return settings


def differing(settings: list[dict[str, str]]) -> list[tuple[str, list[str]]]:
    """Rows (name, value per item) of the settings that are not the same for every item."""
    names = list(dict.fromkeys(name for one in settings for name in one))
    rows = []
    for name in names:
        values = [one.get(name, "–") for one in settings]
        if len(set(values)) > 1:
            rows.append((name, values))
    return rows


def mtu_of(item: Run | Sweep) -> int | None:
    """The MTU (bytes) a run ran at, or a sweep's first run, as captured on the client."""
    runs = item.runs if isinstance(item, Sweep) else [item]
    return next((run.client_settings.get("mtu_bytes") for run in runs if run.client_settings), None)


def sweep_name(sweep: Sweep) -> str:
    mtu = mtu_of(sweep)
    return f"#{sweep.id} {sweep.label or sweep.kind.label}{f', MTU {mtu}' if mtu else ''}"


def sweep_series(sweep: Sweep, *, name: str | None = None) -> list[dict]:
    """Chart series of a sweep: one, or one per connection count for buffer sweeps."""
    name = name or sweep_name(sweep)
    points = [p for p in service.sweep_points(sweep) if p["result"] is not None]

    def point(p: dict) -> dict:
        result = p["result"]
        return {"x": p["value"], "median": result.median, "low": result.low, "high": result.high, "rates": p["rates"]}

    if sweep.kind is SweepKind.connections:
        return [{"name": name, "points": [point(p) for p in points]}]
    return [
        {
            "name": f"{name}, {conns} connection{'s' if conns != 1 else ''}",
            "points": [point(p) for p in points if p["conns"] == conns],
        }
        for conns in sweep.conns_values
        if any(p["conns"] == conns for p in points)
    ]


def buffer_axis_title(kind: SweepKind) -> str:
    return (
        "socket buffer requested (--sockbuf; KiB, MiB)"
        if kind is SweepKind.sockbuf
        else "tcp_rmem/tcp_wmem maximum (KiB, MiB)"
    )
