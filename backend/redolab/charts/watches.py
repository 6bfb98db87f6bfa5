"""The watch figure (pure: a watch's checks in, plotly figure JSON out): each check's measured throughput
against what was required then, over time, on bands that show the watch's state after each check
(OK green, AT RISK amber, FAILING red). Skipped checks are marks at the bottom, not values. Written as
plain data (charts.document_json): the watch page redraws it every few seconds with up to 500 checks."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from redolab.charts import LAYOUT, TitleBlock, document_json
from redolab.core.downsample import keep_indices
from redolab.core.units import MIB

WATCH_POINTS = 500  # checks drawn as points; the bands are drawn from every check of the range
MIN_SPAN_SECONDS = 3600.0  # the least time an axis shows (with one check, plotly would zoom to a millisecond)

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
    checks: Sequence[CheckPoint],
    states: Sequence[str],
    skipped: Sequence[datetime],
    until: datetime | None = None,
    *,
    every_seconds: float = 0.0,
    window: tuple[datetime, datetime] | None = None,
    title: TitleBlock | None = None,
) -> str:
    """`checks`: judged checks oldest first; `states`: the watch's state after each of them (its value:
    ok, at_risk, failing, unknown); `skipped`: when checks were skipped; `until`: where the last state's
    band ends (now; default the last check); `every_seconds`: the watch's interval; `window`: the time
    range chosen (1 d, 1 w, ...), else the checks' own, never under an hour or one interval. Rates in
    MiB/s; at most WATCH_POINTS checks drawn as points (MinMaxLTTB), the bands from all of them."""
    times = [c.at for c in checks]
    bands = _band_shapes(times, states, until)
    if len(checks) > WATCH_POINTS:
        measured = [c.measured_bytes_per_second for c in checks]
        chosen = keep_indices([t.timestamp() for t in times], measured, WATCH_POINTS)
        checks, times = [checks[i] for i in chosen], [times[i] for i in chosen]
    traces = _traces(times, checks, skipped)
    shown = window or _extent([*times, *skipped], until, every_seconds)
    layout = {
        **LAYOUT,
        "height": 360,
        "shapes": bands,
        "uirevision": "watch",  # a zoom the user made is kept when the page refreshes the figure
        "yaxis": {"title": {"text": "throughput (MiB/s)"}, "rangemode": "tozero", "tickformat": ","},
        "xaxis": {"title": {"text": "time (UTC)"}, "type": "date"},
    }
    if shown is not None:
        layout["xaxis"]["range"] = [shown[0].isoformat(), shown[1].isoformat()]
    return document_json({"data": traces, "layout": layout}, title)


def _traces(times: Sequence[datetime], checks: Sequence[CheckPoint], skipped: Sequence[datetime]) -> list[dict]:
    """Required and measured per check, the skipped checks' marks, and the bands' legend."""
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
    return traces


def _extent(
    times: Sequence[datetime], until: datetime | None, every_seconds: float
) -> tuple[datetime, datetime] | None:
    """The checks' time range, widened about its middle to at least an hour and one interval: a single
    check is drawn in the hour around it, not on an axis of microseconds (None: nothing to place)."""
    moments = [*times, *([until] if until else [])]
    if not moments:
        return None
    first, last = min(moments), max(moments)
    least = timedelta(seconds=max(MIN_SPAN_SECONDS, every_seconds))
    if last - first >= least:
        return first, last
    middle = first + (last - first) / 2
    return middle - least / 2, middle + least / 2


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
