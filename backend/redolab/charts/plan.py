"""Figures for the plan (pure): the ASYNC lag replay over time."""

from __future__ import annotations

from datetime import datetime

import plotly.graph_objects as go

from redolab.charts import LAYOUT, TitleBlock, figure_json
from redolab.core.units import wall_clock


def lag_figure(
    series: dict[int, list[tuple[datetime, float]]],
    zone: str = "UTC",
    drains: dict[int, str] | None = None,
    title: TitleBlock | None = None,
) -> str | None:
    """Transport lag (seconds) over time, one line per redo thread; `drains` names what each thread's
    stream was drained at and where that capacity comes from (the lag card's words)."""
    if not any(lag for points in series.values() for _, lag in points):
        return None  # never behind: a flat line at zero says nothing the card does not
    figure = go.Figure()
    for thread, points in sorted(series.items()):
        figure.add_trace(
            go.Scatter(
                x=[wall_clock(p[0], zone) for p in points],
                y=[p[1] for p in points],
                name=f"thread {thread}" + (f" ({drains[thread]})" if drains and thread in drains else ""),
                mode="lines",
                hovertemplate="%{y:.2f} s behind at %{x}<extra>thread " + str(thread) + "</extra>",
            )
        )
    figure.update_layout(**LAYOUT, xaxis_title=f"time ({zone})", yaxis_title="transport lag (s)")
    figure.update_yaxes(rangemode="tozero")
    return figure_json(figure, title)


def ack_cdf_figure(curves: list[tuple[str, list[dict]]], title: TitleBlock | None = None) -> str:
    """SYNC acknowledgement latency as a CDF, one curve per run ((name, power-of-two histogram in µs)):
    the share of messages acknowledged within each bucket's upper edge, in ms."""
    figure = go.Figure()
    for name, histogram in curves:
        buckets = sorted(histogram, key=lambda b: b["from_us"])
        total = sum(b["count"] for b in buckets) or 1
        edges, shares, seen = [], [], 0
        for bucket in buckets:
            seen += bucket["count"]
            edges.append(bucket["to_us"] / 1000)
            shares.append(100 * seen / total)
        figure.add_trace(go.Scatter(x=edges, y=shares, name=name, mode="lines+markers", line_shape="hv"))
    figure.update_layout(
        **LAYOUT,
        xaxis_title="acknowledgement latency (ms, bucket upper edge)",
        yaxis_title="messages acknowledged within (%)",
    )
    figure.update_xaxes(type="log")
    figure.update_yaxes(range=[0, 100])
    return figure_json(figure, title)
