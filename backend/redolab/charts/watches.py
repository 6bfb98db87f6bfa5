"""The watch figure (pure: a watch's checks in, plotly figure JSON out): each check's measured throughput
against what was required then, over time, on bands that show the watch's state after each check
(OK green, AT RISK amber, FAILING red). Skipped checks are marks at the bottom, not values. Written as
plain data (charts.document_json): the watch page redraws it every few seconds with up to 500 checks."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from redolab.charts import LAYOUT, document_json
from redolab.core.units import MIB

BAND_COLOURS = {"ok": "rgba(44,160,44,0.12)", "at_risk": "rgba(255,165,0,0.18)", "failing": "rgba(214,39,40,0.16)"}
LEGEND_COLOURS = {"ok": "#2ca02c", "at_risk": "#ffa500", "failing": "#d62728"}
STATE_LABELS = {"ok": "OK", "at_risk": "AT RISK", "failing": "FAILING"}


class CheckPoint(Protocol):
    at: datetime
    measured_bytes_per_second: float | None
    required_bytes_per_second: float | None


def _mib(value: float | None) -> float | None:
    return value / MIB if value is not None else None


def watch_figure(
    checks: Sequence[CheckPoint], states: Sequence[str], skipped: Sequence[datetime], until: datetime | None = None
) -> str:
    """`checks`: judged checks oldest first; `states`: the watch's state after each of them (its value:
    ok, at_risk, failing, unknown); `skipped`: when checks were skipped; `until`: where the last state's
    band ends (now; default the last check). Rates in MiB/s."""
    times = [c.at for c in checks]
    x = [t.isoformat() for t in times]
    traces = [
        {
            "type": "scatter",
            "x": x,
            "y": [_mib(c.required_bytes_per_second) for c in checks],
            "name": "required (MiB/s)",
            "mode": "lines+markers",
            "line": {"dash": "dash", "color": "#d62728"},
            "hovertemplate": "required %{y:,.2f} MiB/s at %{x}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": x,
            "y": [_mib(c.measured_bytes_per_second) for c in checks],
            "name": "measured (MiB/s)",
            "mode": "lines+markers",
            "line": {"color": "#1f77b4"},
            "hovertemplate": "measured %{y:,.2f} MiB/s at %{x}<extra></extra>",
        },
    ]
    if skipped:
        traces.append(
            {
                "type": "scatter",
                "x": [t.isoformat() for t in skipped],
                "y": [0] * len(skipped),
                "name": "skipped check",
                "mode": "markers",
                "marker": {"symbol": "x", "color": "#7f7f7f"},
                "hovertemplate": "skipped at %{x}<extra></extra>",
            }
        )
    for state, colour in LEGEND_COLOURS.items():  # the bands' legend: an empty trace per state
        traces.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "markers",
                "name": STATE_LABELS[state],
                "marker": {"symbol": "square", "size": 12, "color": colour},
            }
        )
    bands = _band_shapes(times, states, until)
    layout = {
        **LAYOUT,
        "height": 360,
        "shapes": bands,
        "yaxis": {"title": {"text": "throughput (MiB/s)"}, "rangemode": "tozero", "tickformat": ","},
        "xaxis": {"title": {"text": "time (UTC)"}, "type": "date"},
    }
    return document_json({"data": traces, "layout": layout})


def _band_shapes(times: Sequence[datetime], states: Sequence[str], until: datetime | None = None) -> list:
    """The state bands as plotly rectangles behind the traces, the full height of the plot."""
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": start.isoformat(),
            "x1": end.isoformat(),
            "y0": 0,
            "y1": 1,
            "fillcolor": BAND_COLOURS[state],
            "line": {"width": 0},
            "layer": "below",
        }
        for start, end, state in _bands(times, states, until)
    ]


def _bands(times: Sequence[datetime], states: Sequence[str], until: datetime | None = None) -> list:
    """Stretches of one known state: from the check that entered it to the check that left it (the last
    stretch ends at `until`, else at the last check)."""
    bands: list[tuple[datetime, datetime, str]] = []
    start = None
    for i, state in enumerate(states):
        if start is not None and state != states[start]:
            bands.append((times[start], times[i], states[start]))
            start = None
        if start is None and state in BAND_COLOURS:
            start = i
    if start is not None and times:
        bands.append((times[start], max(times[-1], until) if until else times[-1], states[start]))
    return [band for band in bands if band[2] in BAND_COLOURS]
