"""Figures for Db2 HADR (pure): db2pd monitoring over time, and the calculator's rates per mode."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from redolab.charts import LAYOUT, figure_json
from redolab.core.units import MIB, wall_clock

MAX_POINTS = 4000
_COLOURS = {"SYNC": "#b91c1c", "NEARSYNC": "#c2410c", "ASYNC": "#1d4ed8", "SUPERASYNC": "#15803d"}


def monitoring_figure(monitoring, zone: str = "UTC") -> str | None:
    """Log gap (MiB) and the standby receive buffer (%) per capture, congestion marked; the primary's
    log generation rate (MiB/s) below."""
    if monitoring is None or not monitoring.samples:
        return None
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                           specs=[[{"secondary_y": True}], [{}]])  # fmt: skip
    samples = monitoring.samples[-MAX_POINTS:]
    gaps = [(at, s.log_gap_bytes) for at, s, _ in samples if s.log_gap_bytes is not None]
    if gaps:
        figure.add_trace(go.Scatter(x=[wall_clock(at, zone) for at, _ in gaps], y=[g / MIB for _, g in gaps],
                                    name="log gap (MiB)", mode="lines+markers"), row=1, col=1)  # fmt: skip
    buffers = [(at, s.recv_buf_percent) for at, s, _ in samples if s.recv_buf_percent is not None]
    if buffers:
        figure.add_trace(go.Scatter(x=[wall_clock(at, zone) for at, _ in buffers], y=[p for _, p in buffers],
                                    name="standby receive buffer used (%)", mode="lines+markers",
                                    line={"dash": "dot"}), row=1, col=1, secondary_y=True)  # fmt: skip
    congested = [flag for flag in monitoring.flags if flag.what == "congested"]
    if congested:
        figure.add_trace(go.Scatter(x=[wall_clock(f.at, zone) for f in congested], y=[0] * len(congested),
                                    name="congested", mode="markers", marker={"symbol": "x", "size": 10,
                                    "color": "#b91c1c"}), row=1, col=1)  # fmt: skip
    if monitoring.rates:
        figure.add_trace(go.Scatter(x=[wall_clock(end, zone) for _, end, _ in monitoring.rates],
                                    y=[rate / MIB for *_, rate in monitoring.rates], name="log generation (MiB/s)",
                                    mode="lines", line={"shape": "hv"}), row=2, col=1)  # fmt: skip
    figure.update_layout(**{**LAYOUT, "height": 460})
    figure.update_yaxes(title_text="MiB", row=1, col=1, secondary_y=False)
    figure.update_yaxes(title_text="%", range=[0, 105], row=1, col=1, secondary_y=True)
    figure.update_yaxes(title_text="MiB/s", row=2, col=1)
    figure.update_xaxes(title_text=f"time ({zone})", row=2, col=1)
    return figure_json(figure)


def calculator_figure(calculator, zone: str = "UTC") -> str | None:
    """Each interval's log rate against the rate each sync mode sustains at its flush size (MiB/s)."""
    if calculator is None or not calculator.rows:
        return None
    rows = calculator.rows
    if len(rows) > MAX_POINTS:  # keep the intervals nearest their limits: they are the story
        rows = sorted(sorted(rows, key=lambda r: r.rate_bytes_per_second / r.limits["SYNC"])[-MAX_POINTS:],
                      key=lambda r: r.start)  # fmt: skip
    times = [wall_clock(row.start, zone) for row in rows]
    figure = go.Figure()
    figure.add_trace(go.Scatter(x=times, y=[r.rate_bytes_per_second / MIB for r in rows], name="log rate",
                                mode="markers", marker={"color": "#111827", "size": 6}))  # fmt: skip
    for mode, colour in _COLOURS.items():
        figure.add_trace(go.Scatter(x=times, y=[r.limits[mode] / MIB for r in rows], name=f"{mode} limit",
                                    mode="lines", line={"color": colour, "shape": "hv"}))  # fmt: skip
    figure.update_layout(**{**LAYOUT, "height": 360}, yaxis_title="MiB/s", xaxis_title=f"interval start ({zone})")
    return figure_json(figure)
