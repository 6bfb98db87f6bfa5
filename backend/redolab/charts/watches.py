"""The watch figure (pure: a watch's checks in, plotly figure JSON out): each check's measured throughput
against what was required then, over time, on bands that show the watch's state after each check
(OK green, AT RISK amber, FAILING red). Skipped checks are marks at the bottom, not values."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import plotly.graph_objects as go

from redolab.charts import LAYOUT, figure_json
from redolab.core.units import MIB

BAND_COLOURS = {"ok": "rgba(44,160,44,0.12)", "at_risk": "rgba(255,165,0,0.18)", "failing": "rgba(214,39,40,0.16)"}
LEGEND_COLOURS = {"ok": "#2ca02c", "at_risk": "#ffa500", "failing": "#d62728"}
STATE_LABELS = {"ok": "OK", "at_risk": "AT RISK", "failing": "FAILING"}


class CheckPoint(Protocol):
    at: datetime
    measured_bytes_per_second: float | None
    required_bytes_per_second: float | None


def watch_figure(checks: Sequence[CheckPoint], states: Sequence[str], skipped: Sequence[datetime],
                 until: datetime | None = None) -> str:  # fmt: skip
    """`checks`: judged checks oldest first; `states`: the watch's state after each of them (its value:
    ok, at_risk, failing, unknown); `skipped`: when checks were skipped; `until`: where the last state's
    band ends (now; default the last check). Rates in MiB/s."""
    times = [c.at for c in checks]
    measured = [c.measured_bytes_per_second / MIB if c.measured_bytes_per_second is not None else None
                for c in checks]  # fmt: skip
    required = [c.required_bytes_per_second / MIB if c.required_bytes_per_second is not None else None
                for c in checks]  # fmt: skip
    figure = go.Figure()
    for start, end, state in _bands(times, states, until):
        figure.add_vrect(x0=start, x1=end, fillcolor=BAND_COLOURS[state], line_width=0, layer="below")
    figure.add_trace(go.Scatter(
        x=times, y=required, name="required (MiB/s)", mode="lines+markers", line={"dash": "dash", "color": "#d62728"},
        hovertemplate="required %{y:,.2f} MiB/s at %{x}<extra></extra>"))  # fmt: skip
    figure.add_trace(go.Scatter(
        x=times, y=measured, name="measured (MiB/s)", mode="lines+markers", line={"color": "#1f77b4"},
        hovertemplate="measured %{y:,.2f} MiB/s at %{x}<extra></extra>"))  # fmt: skip
    if skipped:
        figure.add_trace(go.Scatter(
            x=list(skipped), y=[0] * len(skipped), name="skipped check", mode="markers",
            marker={"symbol": "x", "color": "#7f7f7f"}, hovertemplate="skipped at %{x}<extra></extra>"))  # fmt: skip
    for state, colour in LEGEND_COLOURS.items():  # the bands' legend: an empty trace per state
        marker = {"symbol": "square", "size": 12, "color": colour}
        figure.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=STATE_LABELS[state], marker=marker))
    figure.update_yaxes(title_text="throughput (MiB/s)", rangemode="tozero", tickformat=",")
    figure.update_xaxes(title_text="time (UTC)")
    figure.update_layout(**{**LAYOUT, "height": 360})
    return figure_json(figure)


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
