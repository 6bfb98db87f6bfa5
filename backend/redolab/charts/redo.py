"""Figures for redo history (pure: the stored chart data in, plotly figure JSON out). Rates in MiB/s.
The data is already downsampled (planning/stored.py): at most a few thousand points per figure."""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import pairwise

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from redolab.charts import LAYOUT, TitleBlock, figure_json
from redolab.core.units import MIB, wall_clock
from redolab.redo.stored import HistoryCharts

_LAYOUT = {**LAYOUT, "height": 340, "legend": {"orientation": "h", "y": -0.22}}
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


_EPOCH = datetime(1970, 1, 1)


def _times(moments: list[datetime], zone: str) -> np.ndarray:
    """Times on the database's clock as milliseconds since 1970 (the wall clock read as if UTC, which
    is how a date axis draws numbers), in one numpy array: plotly writes it as a typed block of 8-byte
    numbers, a third of the ISO strings it writes for dates (3,000 points: 32 KiB, not 81 KiB)."""
    return np.array([(wall_clock(m, zone) - _EPOCH).total_seconds() * 1000.0 for m in moments], dtype=np.float64)


def _rates(values: list[float]) -> np.ndarray:
    """Rates in MiB/s as 4-byte floats: seven significant digits are more than a chart shows."""
    return np.array(values, dtype=np.float32)


MAX_PERIODS = 6  # stretches of history drawn side by side; older ones are named, not drawn
PERIOD_GAP_SECONDS = 86400.0  # at least this far apart (and a fifth of the range) to be drawn separately


def _periods(points: list[datetime]) -> tuple[list[tuple[datetime, datetime]], float]:
    """Stretches of history and the gap that separates them: a day, or a fifth of the whole time
    range when that is longer (a missing weekend in a month of data is not a new stretch)."""
    points = sorted(points)
    gap = max(PERIOD_GAP_SECONDS, (points[-1] - points[0]).total_seconds() / 5)
    periods: list[list[datetime]] = []
    for moment in points:
        if periods and (moment - periods[-1][1]).total_seconds() <= gap:
            periods[-1][1] = moment
        else:
            periods.append([moment, moment])
    return [(a, b) for a, b in periods], gap


def rate_figure(charts: HistoryCharts, requirement, zone: str = "UTC", title: TitleBlock | None = None) -> str | None:
    """Rate over time: each thread's rows, the summed series where the threads overlap, the summed peak
    and the required rate. Stretches of history far apart (2022 and 2024) get a panel each, so neither
    is squashed and no line crosses the gap; times are the database's clock in `zone`."""
    if not charts.points and not charts.spans:
        return None  # no dates (an hour-of-day profile): nothing to draw over time
    moments = [p[0] for points in charts.points.values() for p in points]
    moments += [m for span in charts.spans for m in (span.start, span.end)]
    periods, gap = _periods(moments)
    hidden = periods[:-MAX_PERIODS]
    panels = _Panels(periods[-MAX_PERIODS:], gap)
    figure = make_subplots(
        rows=1, cols=panels.count, shared_yaxes=True, horizontal_spacing=0.03 if panels.count > 1 else 0.0
    )
    _add_thread_rates(figure, charts, panels, zone)
    if len(requirement.threads) > 1:
        _add_summed_rates(figure, charts, panels, zone)
    _add_peak_and_required(figure, requirement)
    axis = f"time ({zone})"
    if hidden:
        axis += f"; {len(hidden)} older stretch{'es' if len(hidden) > 1 else ''} not drawn"
    figure.update_layout(**_LAYOUT)
    # the legend at the bottom of the figure, below the axis title wherever the (slanted) tick labels put it
    figure.update_layout(legend={"yref": "container", "y": 0, "yanchor": "bottom"}, margin={"b": 90})
    figure.update_xaxes(type="date", title_text=axis if panels.count == 1 else None)  # numbers are times
    if panels.count > 1:  # no one axis to name: said once, above the panels' right end
        figure.add_annotation(
            text=axis, xref="paper", yref="paper", x=1, y=1, xanchor="right", yanchor="bottom", showarrow=False
        )
    figure.update_yaxes(rangemode="tozero", title_text="redo rate (MiB/s)", row=1, col=1)
    return figure_json(figure, title)


class _Panels:
    """The stretches of history drawn side by side, one panel (a subplot column from 1) each."""

    def __init__(self, periods: list[tuple[datetime, datetime]], gap: float) -> None:
        self.periods, self.gap = periods, gap
        self.count = len(periods)

    def column(self, moment: datetime) -> int | None:
        for index, (first, last) in enumerate(self.periods, 1):
            if first <= moment <= last + timedelta(seconds=self.gap):
                return index
        return None


def _add_thread_rates(figure: go.Figure, charts: HistoryCharts, panels: _Panels, zone: str) -> None:
    """Each thread's rows as markers, in the panel of their stretch; one legend entry per thread."""
    for thread, points in sorted(charts.points.items()):
        for index in range(1, panels.count + 1):
            mine = [p for p in points if panels.column(p[0]) == index]
            if not mine:
                continue
            figure.add_trace(
                go.Scatter(
                    x=_times([p[0] for p in mine], zone),
                    y=_rates([p[1] / MIB for p in mine]),
                    mode="markers",
                    name=f"thread {thread}",
                    legendgroup=f"thread {thread}",
                    showlegend=index == 1 or not any(panels.column(p[0]) == 1 for p in points),
                    marker={"size": 5},
                    hovertemplate="%{y:.2f} MiB/s from %{x}<extra>thread " + str(thread) + "</extra>",
                ),
                row=1,
                col=index,
            )


SUMMED = "all threads, summed where they overlap"


def _add_summed_rates(figure: go.Figure, charts: HistoryCharts, panels: _Panels, zone: str) -> None:
    """The threads' rates summed where they overlap, as steps: one line per span of overlap, one
    legend entry for them all (on the first drawn: an older span may not be)."""
    named = False
    for span in charts.spans:
        index = panels.column(span.start)
        if index is None:
            continue
        x, y = [], []
        for start, end, rate in span.segments:
            x += [start, end]
            y += [rate / MIB, rate / MIB]
        figure.add_trace(
            go.Scatter(
                x=_times(x, zone),
                y=_rates(y),
                mode="lines",
                name=SUMMED,
                line={"width": 2},
                legendgroup="summed",
                showlegend=not named,
                hovertemplate="%{y:.2f} MiB/s at %{x}<extra>all threads, summed</extra>",
            ),
            row=1,
            col=index,
        )
        named = True


def _add_peak_and_required(figure: go.Figure, requirement) -> None:
    peak, required = requirement.summed_peak_bytes_per_second, requirement.summed_required_bytes_per_second
    figure.add_hline(y=peak / MIB, line_dash="dot", annotation_text=f"peak {peak / MIB:,.2f} MiB/s")
    figure.add_hline(
        y=required / MIB,
        line_dash="dash",
        line_color="#b33a3a",
        annotation_text=f"required {required / MIB:,.2f} MiB/s (+{requirement.headroom_ratio:.0%})",
    )


def heatmap_figure(charts: HistoryCharts, zone: str = "UTC", title: TitleBlock | None = None) -> str | None:
    """Highest summed rate by weekday and hour (MiB/s): when the peaks come. A cell without data is
    null, left blank (not drawn as 0 MiB/s)."""
    if not charts.heatmap:
        return None
    figure = go.Figure(
        go.Heatmap(
            z=[[rate / MIB if rate is not None else None for rate in day] for day in charts.heatmap],
            x=[f"{h:02d}" for h in range(24)],
            y=WEEKDAYS,
            colorscale="Reds",
            colorbar={"title": {"text": "highest MiB/s"}},
            hoverongaps=False,
            name="highest redo rate, all threads",
            hovertemplate="%{y} %{x}h: %{z:.2f} MiB/s<extra></extra>",
        )
    )
    figure.update_layout(
        **{**_LAYOUT, "height": 300}, xaxis_title=f"hour of day ({zone})", yaxis_title=f"weekday ({zone})"
    )
    figure.update_yaxes(autorange="reversed")  # Monday on top, as a calendar reads
    return figure_json(figure, title)


# what one rate of the history is, by the kind of row it came from (redo.analytics' kinds)
COUNTED = {
    "log": "archived logs",
    "snapshot": "snapshot intervals",
    "rate": "metric intervals",
    "period": "periods",
}


def counted(kinds: dict[str, int] | None) -> str:
    """What the histogram counts: 'archived logs', 'snapshot intervals' (AWR or Db2 snapshots: each
    bar counts intervals between two snapshots), or, mixed, 'rows (archived logs, snapshot intervals)'."""
    named = [COUNTED[kind] for kind in sorted(kinds or {}, key=lambda k: -(kinds or {})[k]) if kind in COUNTED]
    if len(named) == 1:
        return named[0]
    return f"rows ({', '.join(named)})" if named else "rows"


def distribution_figure(
    charts: HistoryCharts, kinds: dict[str, int] | None = None, title: TitleBlock | None = None
) -> str | None:
    """How often each rate occurs, MiB/s: the stored 40-bin histogram; `kinds` (rows of each kind)
    names what a bar counts: archived logs, snapshot intervals, metric intervals or periods."""
    if not charts.histogram:
        return None
    what = counted(kinds)
    edges, counts = charts.histogram
    centres = [(a + b) / 2 / MIB for a, b in pairwise(edges)]
    widths = [(b - a) / MIB for a, b in pairwise(edges)]
    ranges = [f"{a / MIB:,.2f}–{b / MIB:,.2f}" for a, b in pairwise(edges)]
    figure = go.Figure(
        go.Bar(
            x=centres,
            y=counts,
            width=widths,
            name=what,
            customdata=ranges,
            hovertemplate="%{customdata} MiB/s: %{y:,} " + what + "<extra></extra>",
        )
    )
    figure.update_layout(**{**_LAYOUT, "height": 280}, xaxis_title="redo rate (MiB/s)", yaxis_title=f"{what} (count)")
    if max(counts, default=0) < 5:  # whole counts: a tick per row, never 0.2 of a log
        figure.update_yaxes(dtick=1)
    return figure_json(figure, title)


def profile_figure(charts: HistoryCharts, title: TitleBlock | None = None) -> str | None:
    """Hour-of-day profile per thread: average, maximum and percentile (MiB/s)."""
    analysis = charts
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
    return figure_json(figure, title)
