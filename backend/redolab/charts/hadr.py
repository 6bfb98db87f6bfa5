"""Figures for Db2 HADR (pure): db2pd monitoring over time, and the calculator's rates per mode."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from redolab.charts import LAYOUT, TitleBlock, figure_json
from redolab.core.units import MIB, wall_clock

MAX_POINTS = 4000
_COLOURS = {"SYNC": "#b91c1c", "NEARSYNC": "#c2410c", "ASYNC": "#1d4ed8", "SUPERASYNC": "#15803d"}


MAX_SPANS = 4  # spans of captures drawn side by side, each with its own time axis (the latest)


def monitoring_figure(monitoring, zone: str = "UTC", title: TitleBlock | None = None) -> str | None:
    """Per HADR pair and per stretch of captures (`monitoring.stretches`: another database or a long
    pause is another series, never one line across): the current log gap (MiB, from the log positions)
    beside HADR_LOG_GAP's running average, the standby receive buffer (%), congestion marked; the
    primary's log generation rate (MiB/s) below. Spans of captures apart in time (`monitoring.spans`)
    are drawn side by side, each with its own time axis, so that each keeps its times on screen."""
    if monitoring is None or not monitoring.samples:
        return None
    spans = monitoring.spans[-MAX_SPANS:] or [(monitoring.samples[0][0], monitoring.samples[-1][0])]
    columns = len(spans)
    figure = make_subplots(
        rows=2,
        cols=columns,
        shared_yaxes=True,
        vertical_spacing=0.12,
        horizontal_spacing=0.04,
        specs=[[{"secondary_y": True}] * columns, [{}] * columns],
    )
    column = _column_of(spans)
    budget = max(50, MAX_POINTS // max(1, len(monitoring.stretches)))
    colours = {id(view): _PAIR_COLOURS[n % len(_PAIR_COLOURS)] for n, view in enumerate(monitoring.pairs)}
    for view, part in monitoring.stretches:
        if column(part[0][0]) is not None:
            _pair_traces(
                figure, view, _thin(part, budget), colours.get(id(view), _PAIR_COLOURS[0]), zone, column(part[0][0])
            )
    for label, rates in monitoring.rates_by_pair.items():
        by_column: dict[int, list] = {}
        for rate in rates[-MAX_POINTS:]:
            if (at := column(rate[0])) is not None:
                by_column.setdefault(at, []).append(rate)
        for at, found in by_column.items():
            x, y = _steps(found, zone)
            figure.add_trace(
                go.Scatter(
                    x=x,
                    y=y,
                    name=f"{label}: log generation (MiB/s)",
                    mode="lines",
                    line={"shape": "hv"},
                    legendgroup=label,
                    showlegend=at == min(by_column),
                ),
                row=2,
                col=at,
            )
    _congestion(figure, monitoring, column, zone)
    _axes(figure, spans, zone)
    return figure_json(figure, title)


def _column_of(spans):
    """The column (1-based) of the span a time falls in, or None (an older span not drawn)."""

    def column(moment):
        for number, (start, end) in enumerate(spans, 1):
            if start <= moment <= end:
                return number
        return None

    return column


def _congestion(figure, monitoring, column, zone: str) -> None:
    flags = [flag for flag in monitoring.flags if flag.what == "congested" and column(flag.at) is not None]
    for at in sorted({column(flag.at) for flag in flags}):
        marks = [flag for flag in flags if column(flag.at) == at]
        figure.add_trace(
            go.Scatter(
                x=[wall_clock(f.at, zone) for f in marks],
                y=[0] * len(marks),
                name="congested",
                mode="markers",
                marker={"symbol": "x", "size": 10, "color": "#b91c1c"},
                legendgroup="congested",
                showlegend=at == min(column(f.at) for f in flags),
            ),
            row=1,
            col=at,
        )


def _axes(figure, spans, zone: str) -> None:
    figure.update_layout(**{**LAYOUT, "height": 540, "legend": {"orientation": "h", "y": -0.25}})
    figure.update_yaxes(title_text="log gap (MiB)", row=1, col=1, secondary_y=False, rangemode="tozero")
    figure.update_yaxes(title_text="log generation (MiB/s)", row=2, col=1, rangemode="tozero")
    for number, (start, _) in enumerate(spans, 1):
        figure.update_yaxes(
            title_text="receive buffer (%)" if number == len(spans) else None,
            range=[0, 105],
            row=1,
            col=number,
            secondary_y=True,
            showticklabels=number == len(spans),
        )
        for row in (1, 2):
            figure.update_xaxes(type="date", showticklabels=True, row=row, col=number, nticks=4)
        shown = wall_clock(start, zone)
        figure.update_xaxes(title_text=f"{shown:%Y-%m-%d} ({zone})", row=2, col=number)


_PAIR_COLOURS = ("#1d4ed8", "#15803d", "#7c3aed", "#c2410c", "#0f766e", "#be185d")


def _pair_traces(figure, view, part, colour: str, zone: str, column: int = 1) -> None:
    """One stretch of one pair: current gap, running average, receive buffer."""
    name = f"{view.key.database} from {wall_clock(part[0][0], zone):%Y-%m-%d %H:%M}"
    gaps = [(at, s.current_gap_bytes) for at, s in part if s.current_gap_bytes is not None]
    averages = [(at, s.log_gap_bytes) for at, s in part if s.log_gap_bytes is not None]
    buffers = [(at, s.recv_buf_percent) for at, s in part if s.recv_buf_percent is not None]
    for points, what, style, axis in (
        (gaps, "current log gap (MiB)", {"color": colour}, False),
        (averages, "HADR_LOG_GAP running average (MiB)", {"color": colour, "dash": "dash"}, False),
        (buffers, "standby receive buffer used (%)", {"color": colour, "dash": "dot", "width": 1}, True),
    ):
        if not points:
            continue
        values = [value if axis else value / MIB for _, value in points]
        figure.add_trace(
            go.Scatter(
                x=[wall_clock(at, zone) for at, _ in points],
                y=values,
                name=f"{name}: {what}",
                mode="lines+markers",
                line=style,
                legendgroup=name,
            ),
            row=1,
            col=column,
            secondary_y=axis,
        )


def _thin(part, budget: int):
    """At most about `budget` points of a stretch: every k-th, keeping the largest current gap."""
    if len(part) <= budget:
        return part
    kept = part[:: -(-len(part) // budget)]
    largest = max(part, key=lambda point: point[1].current_gap_bytes or 0)
    return sorted({id(point): point for point in [*kept, largest]}.values(), key=lambda point: point[0])


def _steps(rates, zone: str) -> tuple[list, list]:
    """Rates (start, end, bytes/s) as one stepped line, broken (None) where one does not start at the
    previous one's end."""
    x: list = []
    y: list = []
    for number, (start, end, rate) in enumerate(rates):
        if number and rates[number - 1][1] != start:
            x.append(None)
            y.append(None)
        x += [wall_clock(start, zone), wall_clock(end, zone)]
        y += [rate / MIB, rate / MIB]
    return x, y


def calculator_figure(calculator, zone: str = "UTC", title: TitleBlock | None = None) -> str | None:
    """Each interval's log rate against the rate each sync mode sustains at its flush size (MiB/s)."""
    if calculator is None or not calculator.rows:
        return None
    rows = calculator.rows
    if len(rows) > MAX_POINTS:  # keep the intervals nearest their limits: they are the story
        rows = sorted(
            sorted(rows, key=lambda r: r.rate_bytes_per_second / r.limits["SYNC"])[-MAX_POINTS:], key=lambda r: r.start
        )
    times = [wall_clock(row.start, zone) for row in rows]
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=times,
            y=[r.rate_bytes_per_second / MIB for r in rows],
            name="log rate",
            mode="markers",
            marker={"color": "#111827", "size": 6},
        )
    )
    for mode, colour in _COLOURS.items():
        figure.add_trace(
            go.Scatter(
                x=times,
                y=[r.limits[mode] / MIB for r in rows],
                name=f"{mode} limit",
                mode="lines",
                line={"color": colour, "shape": "hv"},
            )
        )
    figure.update_layout(**{**LAYOUT, "height": 360}, yaxis_title="MiB/s", xaxis_title=f"interval start ({zone})")
    return figure_json(figure, title)
