"""Figures for redo history (pure: an Analysis in, plotly figure JSON out). Rates in MiB/s."""

from __future__ import annotations

from datetime import timedelta

import plotly.graph_objects as go

from redolab.charts import LAYOUT
from redolab.core.units import MIB
from redolab.redo.analytics import Analysis

MAX_POINTS = 4000
_LAYOUT = {**LAYOUT, "height": 340, "legend": {"orientation": "h", "y": -0.22}}
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def _thin(points: list, limit: int = MAX_POINTS) -> list:
    """Keep at most `limit` points, keeping the largest of each bucket so peaks survive."""
    if len(points) <= limit:
        return points
    size = len(points) / limit
    return [max(points[int(i * size) : int((i + 1) * size)], key=lambda p: p[1]) for i in range(limit)]


def rate_figure(analysis: Analysis) -> str | None:
    """Rate over time: each thread's logs, the summed rate, its peak and the required rate."""
    if not analysis.points and not analysis.segments:
        return None  # no dates (an hour-of-day profile): nothing to draw over time
    figure = go.Figure()
    for thread, points in sorted(analysis.points.items()):
        points = _thin(sorted(points))
        figure.add_trace(
            go.Scattergl(
                x=[p[0] for p in points],
                y=[p[1] / MIB for p in points],
                mode="markers",
                name=f"thread {thread}",
                marker={"size": 5},
                hovertemplate="%{y:.2f} MiB/s from %{x}<extra>thread " + str(thread) + "</extra>",
            )
        )
    if analysis.segments and len(analysis.threads) > 1:
        segments = _thin([(s, r, e) for s, e, r in analysis.segments])
        x, y = [], []
        for start, rate, end in segments:
            x += [start, end]
            y += [rate / MIB, rate / MIB]
        figure.add_trace(go.Scattergl(x=x, y=y, mode="lines", name="all threads (summed)", line={"width": 2}))
    peak = analysis.summed_peak or ((analysis.peak_for_requirement, None) if analysis.peak_for_requirement else None)
    required = analysis.required_bytes_per_second
    if peak:
        figure.add_hline(y=peak[0] / MIB, line_dash="dot", annotation_text=f"peak {peak[0] / MIB:,.2f} MiB/s")
    if required:
        figure.add_hline(
            y=required / MIB,
            line_dash="dash",
            line_color="#b33a3a",
            annotation_text=f"required {required / MIB:,.2f} MiB/s (+{analysis.headroom_ratio:.0%})",
        )
    figure.update_layout(**_LAYOUT, xaxis_title="time (UTC)", yaxis_title="redo rate (MiB/s)")
    figure.update_yaxes(rangemode="tozero")
    return figure.to_json()


def heatmap_figure(analysis: Analysis) -> str | None:
    """Highest summed rate by weekday and hour (MiB/s): when the peaks come."""
    if not analysis.segments:
        return None
    cells = [[0.0] * 24 for _ in WEEKDAYS]
    for start, end, rate in analysis.segments:
        hour = start.replace(minute=0, second=0, microsecond=0)
        while hour < end:
            cell = cells[hour.weekday()]
            cell[hour.hour] = max(cell[hour.hour], rate / MIB)
            hour += timedelta(hours=1)
    figure = go.Figure(
        go.Heatmap(
            z=cells,
            x=[f"{h:02d}" for h in range(24)],
            y=WEEKDAYS,
            colorscale="Reds",
            colorbar={"title": "MiB/s"},
            hovertemplate="%{y} %{x}h: %{z:.2f} MiB/s<extra></extra>",
        )
    )
    figure.update_layout(**{**_LAYOUT, "height": 300}, xaxis_title="hour of day (UTC)")
    return figure.to_json()


def distribution_figure(analysis: Analysis) -> str | None:
    """How often each rate occurs (per log, period or snapshot), MiB/s."""
    rates = [p[1] / MIB for points in analysis.points.values() for p in points]
    if not rates:
        return None
    figure = go.Figure(go.Histogram(x=rates, nbinsx=40, name="logs"))
    figure.update_layout(**{**_LAYOUT, "height": 280}, xaxis_title="redo rate (MiB/s)", yaxis_title="count")
    return figure.to_json()


def profile_figure(analysis: Analysis) -> str | None:
    """Hour-of-day profile per thread: average, maximum and percentile (MiB/s)."""
    if not analysis.profile:
        return None
    hours = sorted(analysis.profile)
    threads = sorted({t for per_hour in analysis.profile.values() for t in per_hour})
    figure = go.Figure()
    for thread in threads:
        values = [analysis.profile[h].get(thread, (None, None, None)) for h in hours]
        for index, (name, style) in enumerate(
            (
                ("average", {"mode": "lines"}),
                ("maximum", {"mode": "lines+markers"}),
                ("percentile", {"mode": "lines", "line": {"dash": "dot"}}),
            )
        ):
            ys = [v[index] / MIB if v[index] is not None else None for v in values]
            if any(y is not None for y in ys):
                figure.add_trace(go.Scatter(x=hours, y=ys, name=f"thread {thread} {name}", **style))
    figure.update_layout(**_LAYOUT, xaxis_title="hour of day", yaxis_title="redo rate (MiB/s)")
    figure.update_xaxes(dtick=1)
    figure.update_yaxes(rangemode="tozero")
    return figure.to_json()
