"""Figures for sweeps and comparisons (pure: points in, plotly figure JSON out).

A series is {"name": str, "points": [{"x": int, "median": float, "low": float, "high": float,
"rates": [float]}]}, rates in bytes/s; x is a connection count or a size in bytes.
"""

from __future__ import annotations

import plotly.graph_objects as go

from redolab.charts import LAYOUT, TitleBlock, figure_json
from redolab.core.units import MIB, byte_rate_to_mbit, format_bytes


def _trace(series: dict, *, show_repetitions: bool) -> list:
    points = series["points"]
    x = [p["x"] for p in points]
    median = [p["median"] / MIB for p in points]
    traces = [
        go.Scatter(
            x=x,
            y=median,
            name=series["name"],
            mode="lines+markers",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [(p["high"] - p["median"]) / MIB for p in points],
                "arrayminus": [(p["median"] - p["low"]) / MIB for p in points],
                "visible": any(p["high"] > p["low"] for p in points),
            },
            customdata=[[byte_rate_to_mbit(p["median"]), len(p["rates"])] for p in points],
            hovertemplate=(
                "%{y:.1f} MiB/s (%{customdata[0]:.0f} Mbit/s), median of %{customdata[1]}"
                "<extra>%{fullData.name}</extra>"
            ),
        )
    ]
    if show_repetitions and any(len(p["rates"]) > 1 for p in points):
        traces.append(
            go.Scatter(
                x=[p["x"] for p in points for _ in p["rates"]],
                y=[r / MIB for p in points for r in p["rates"]],
                name=f"{series['name']}: each repetition",
                mode="markers",
                marker={"size": 5, "opacity": 0.5},
                hovertemplate="%{y:.1f} MiB/s<extra>repetition</extra>",
            )
        )
    return traces


def _required_line(figure: go.Figure, required_bytes_per_second: float | None) -> None:
    if required_bytes_per_second:
        figure.add_hline(
            y=required_bytes_per_second / MIB,
            line={"dash": "dash", "color": "#b45309"},
            annotation_text=f"redo the link must carry: {required_bytes_per_second / MIB:.1f} MiB/s",
            annotation_position="top left",
        )


def connections_figure(
    series: list[dict],
    *,
    plateau: int | None = None,
    reached: bool = True,
    required_bytes_per_second: float | None = None,
    title: TitleBlock | None = None,
) -> str:
    """Throughput (MiB/s) against the connection count, the plateau's start marked. `reached`: the
    sweep's rule saw enough counts after `plateau` that did not improve on it; otherwise (a sweep that
    ended first) it is marked as the best count measured, and while the sweep runs not at all: after
    its first point nothing can be called a plateau."""
    figure = go.Figure()
    for one in series:
        for trace in _trace(one, show_repetitions=len(series) == 1):
            figure.add_trace(trace)
    if plateau is not None:
        s = "s" if plateau != 1 else ""
        figure.add_vline(
            x=plateau,
            line={"dash": "dot", "color": "#15803d"},
            annotation_text=f"plateau from {plateau} connection{s}" if reached else f"best at {plateau} connection{s}",
            annotation_position="top right",
        )
    _required_line(figure, required_bytes_per_second)
    figure.update_layout(**LAYOUT, xaxis_title="parallel connections (count)", yaxis_title="throughput (MiB/s)")
    figure.update_yaxes(rangemode="tozero")
    widest = max((p["x"] for one in series for p in one["points"]), default=0)
    figure.update_xaxes(rangemode="tozero", dtick=2 if widest > 12 else 1)
    return figure_json(figure, title)


def buffer_figure(
    series: list[dict],
    *,
    axis_title: str,
    required_bytes_per_second: float | None = None,
    title: TitleBlock | None = None,
) -> str:
    """Throughput (MiB/s) against a buffer size (log scale, labelled in KiB/MiB), one series per
    connection count (and per sweep when comparing)."""
    figure = go.Figure()
    for one in series:
        for trace in _trace(one, show_repetitions=False):
            figure.add_trace(trace)
    sizes = sorted({p["x"] for s in series for p in s["points"]})
    _required_line(figure, required_bytes_per_second)
    figure.update_layout(**LAYOUT, xaxis_title=axis_title, yaxis_title="throughput (MiB/s)")
    figure.update_xaxes(type="log", tickvals=sizes, ticktext=[format_bytes(s, 0) for s in sizes])
    figure.update_yaxes(rangemode="tozero")
    return figure_json(figure, title)


def runs_figure(names: list[str], rates: list[float | None], title: TitleBlock | None = None) -> str:
    """Single runs side by side (comparison of runs that are not part of a sweep)."""
    figure = go.Figure(
        go.Bar(
            name="throughput received",
            x=names,
            y=[(r or 0) / MIB for r in rates],
            customdata=[byte_rate_to_mbit(r or 0) for r in rates],
            hovertemplate="%{y:.1f} MiB/s (%{customdata:.0f} Mbit/s)<extra></extra>",
        )
    )
    figure.update_layout(**LAYOUT, yaxis_title="throughput (MiB/s)")
    return figure_json(figure, title)


def over_time_figure(times: list, rates: list[float | None], *, name: str) -> str:
    """Throughput of each scheduled occurrence against its time (UTC): how the link varies over the day."""
    return series_over_time_figure([(name, times, rates)])


def series_over_time_figure(series: list[tuple[str, list, list[float | None]]], title: TitleBlock | None = None) -> str:
    """Throughput against time (UTC), one line per series (name, times, rates): runs that measure
    different things (ASYNC streaming, SYNC round trips) are never joined by one line."""
    figure = go.Figure()
    for name, times, rates in series:
        figure.add_trace(
            go.Scatter(
                x=[t.isoformat() for t, r in zip(times, rates, strict=True) if r is not None],
                y=[r / MIB for r in rates if r is not None],
                name=name,
                mode="lines+markers",
                customdata=[byte_rate_to_mbit(r) for r in rates if r is not None],
                hovertemplate="%{y:.1f} MiB/s (%{customdata:.0f} Mbit/s) at %{x} UTC<extra></extra>",
            )
        )
    figure.update_layout(**LAYOUT, xaxis_title="time (UTC)", yaxis_title="throughput (MiB/s)")
    figure.update_yaxes(rangemode="tozero")
    return figure_json(figure, title)
