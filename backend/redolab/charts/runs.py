"""Figures for a run, from its stored events (pure: data in, plotly figure JSON out)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from redolab.charts import LAYOUT, TitleBlock, figure_json
from redolab.core.downsample import RUN_POINTS, keep_indices, take
from redolab.core.units import MIB, byte_rate_to_mbit


def _array(values) -> np.ndarray:
    """Numbers as a numpy array (a missing value is NaN, a gap in the line): plotly takes an array
    whole and writes it as one typed block, where a list is copied and checked value by value."""
    return np.array(values, dtype=float)


def drawn_series(series: dict, points: int = RUN_POINTS) -> dict:
    """The interval series with at most `points` intervals, chosen by MinMaxLTTB on the total
    throughput (its peaks and dips kept); every other line is taken at the same intervals, so a
    retransmit bar or an RTT point is the one of the interval drawn above it."""
    x = series["end_seconds"]
    indices = keep_indices(x, series["bytes_per_second"], points)
    if len(indices) == len(x):
        return series
    return {
        **{key: take(values, indices) for key, values in series.items() if key != "streams"},
        "streams": {
            stream: take(rates, indices) if len(rates) == len(x) else rates[: len(indices)]
            for stream, rates in series["streams"].items()
        },
    }


def throughput_figure(series: dict, *, duration_seconds: float | None = None, title: TitleBlock | None = None) -> str:
    """Throughput per interval in MiB/s: the sum and each stream (Mbit/s on hover)."""
    x = _array(series["end_seconds"])
    figure = go.Figure()
    if len(series["streams"]) > 1:
        for stream_id, rates in sorted(series["streams"].items()):
            figure.add_trace(
                go.Scatter(x=x, y=_array(rates) / MIB, name=f"stream {stream_id}", mode="lines", line={"width": 1})
            )
    total = _array(series["bytes_per_second"])
    figure.add_trace(
        go.Scatter(
            x=x,
            y=total / MIB,
            name="total",
            mode="lines+markers",
            line={"width": 3},
            customdata=byte_rate_to_mbit(total),
            hovertemplate="%{y:.2f} MiB/s (%{customdata:.1f} Mbit/s) at %{x:.1f} s<extra></extra>",
        )
    )
    figure.update_layout(**LAYOUT, xaxis_title="time from the start of the run (s)", yaxis_title="throughput (MiB/s)")
    if duration_seconds:
        figure.update_xaxes(range=[0, duration_seconds])
    figure.update_yaxes(rangemode="tozero")
    return figure_json(figure, title)


def tcp_info_figure(series: dict, title: TitleBlock | None = None) -> str:
    """TCP_INFO over time: RTT (µs), congestion window (segments), retransmits per interval."""
    x = _array(series["end_seconds"])
    figure = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    figure.add_trace(go.Scatter(x=x, y=_array(series["rtt_us"]), name="RTT (µs), slowest stream"), row=1, col=1)
    figure.add_trace(go.Scatter(x=x, y=_array(series["snd_cwnd"]), name="cwnd (segments), all streams"), row=2, col=1)
    figure.add_trace(go.Bar(x=x, y=_array(series["retransmits"]), name="retransmits per interval"), row=3, col=1)
    figure.update_yaxes(title_text="RTT (µs)", row=1, col=1)
    figure.update_yaxes(title_text="cwnd (segments)", row=2, col=1)
    # counts and times are never negative: an all-zero retransmit series must not draw an axis from -1
    few = max((r or 0 for r in series["retransmits"]), default=0) < 5  # whole counts: a tick per retransmit
    figure.update_yaxes(
        title_text="retransmits (count)",
        rangemode="nonnegative",
        tickformat=",",
        row=3,
        col=1,
        **({"dtick": 1} if few else {}),
    )
    figure.update_yaxes(rangemode="nonnegative", tickformat=",", row=1, col=1)
    figure.update_yaxes(rangemode="nonnegative", tickformat=",", row=2, col=1)
    figure.update_xaxes(title_text="time from the start of the run (s)", row=3, col=1)
    figure.update_layout(**{**LAYOUT, "height": 540})  # three panels, each tall enough for its axis title
    return figure_json(figure, title)


def latency_histogram_figure(histogram: list[dict], title: TitleBlock | None = None) -> str:
    """Sync-mode acknowledgement latency in power-of-two microsecond buckets."""
    labels = [f"{b['from_us']}–{b['to_us']} µs" for b in histogram]
    figure = go.Figure(go.Bar(x=labels, y=[b["count"] for b in histogram], name="messages"))
    figure.update_layout(
        **LAYOUT, xaxis_title="acknowledgement latency (µs)", yaxis_title="messages acknowledged (count)"
    )
    return figure_json(figure, title)
