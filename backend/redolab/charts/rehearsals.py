"""The rehearsal figure (pure: the rehearsal's measured series, as rehearsals.results.measured keeps
it, and the model's prediction in, plotly figure JSON out): what the replay generated against what
the standby received, the backlog, and the transport lag beside the lag the model predicted for the
same window."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from redolab.charts import LAYOUT, TitleBlock, figure_json
from redolab.core.downsample import RUN_POINTS, keep_indices_of_each
from redolab.core.units import MIB

# the measured series' keys: cumulative bytes, then the backlog and lag at each interval's end
CUMULATIVE_KEYS = ("generated_bytes", "sent_bytes", "received_bytes")
SERIES_KEYS = (*CUMULATIVE_KEYS, "backlog_bytes", "lag_seconds")
PREDICTED = {"dash": "dash", "width": 2, "color": "#d62728"}


class PredictedRehearsal(Protocol):
    """What the figure reads of the model's prediction (planning.rehearsal_model.RehearsalPrediction)."""

    lag_series: Sequence[tuple[float, float]]  # (offset seconds, lag seconds)
    backlog_series: Sequence[tuple[float, float]]  # (offset seconds, bytes)


def _number(value) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else np.nan


def rehearsal_series(series: dict) -> dict[str, np.ndarray]:
    """The measured series (lists over `end_seconds`, the offset of each interval's end) as arrays in
    time order; a missing or non-numeric value is NaN (a gap in the line), a point without an end is
    not drawn, and a series the result does not carry (bytes sent) is all NaN."""
    ends = [_number(end) for end in series.get("end_seconds") or []]
    order = sorted((i for i, end in enumerate(ends) if np.isfinite(end)), key=ends.__getitem__)
    arrays = {"end_seconds": np.array([ends[i] for i in order], dtype=float)}
    for key in SERIES_KEYS:
        values = list(series.get(key) or [])
        arrays[key] = np.array([_number(values[i]) if i < len(values) else np.nan for i in order], dtype=float)
    return arrays


def _thinned(x: np.ndarray, y: np.ndarray, *others: np.ndarray, peaks_too: int = 0) -> tuple[np.ndarray, ...]:
    """About RUN_POINTS points, the peaks of y kept, and those of the first `peaks_too` other arrays (the
    backlog's largest need not fall where the lag's does); the other arrays taken at the same points."""
    peaked = [series.tolist() for series in (y, *others[:peaks_too])]
    indices = np.asarray(keep_indices_of_each(x, peaked, RUN_POINTS), dtype=int)
    return tuple(a[indices] for a in (x, y, *others))


def _points(series: Sequence[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    if not series:
        return np.array([]), np.array([])
    x, y = (np.array(column, dtype=float) for column in zip(*series, strict=True))
    return _thinned(x, y)[:2]


def rehearsal_figure(series: dict, predicted: PredictedRehearsal | None = None, title: TitleBlock | None = None) -> str:
    """Three panels over the time from the start of the replay (s): cumulative MiB generated, sent
    and received; the backlog (MiB); the transport lag (s), each with the model's line when given."""
    s = rehearsal_series(series)
    x, lag, backlog, generated, sent, received = _thinned(
        s["end_seconds"],
        s["lag_seconds"],
        s["backlog_bytes"],
        s["generated_bytes"],
        s["sent_bytes"],
        s["received_bytes"],
        peaks_too=1,
    )
    figure = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.07)
    for y, name, width in ((generated, "generated", 3), (sent, "sent", 1), (received, "received", 2)):
        figure.add_trace(
            go.Scatter(
                x=x,
                y=y / MIB,
                name=f"{name} (MiB)",
                mode="lines",
                line={"width": width},
                hovertemplate="%{y:,.1f} MiB at %{x:,.1f} s<extra>%{fullData.name}</extra>",
            ),
            row=1,
            col=1,
        )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=backlog / MIB,
            name="backlog, measured (MiB)",
            mode="lines",
            hovertemplate="%{y:,.2f} MiB at %{x:,.1f} s<extra>measured</extra>",
        ),
        row=2,
        col=1,
    )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=lag,
            name="lag, measured (s)",
            mode="lines",
            hovertemplate="%{y:.2f} s at %{x:,.1f} s<extra>measured</extra>",
        ),
        row=3,
        col=1,
    )
    if predicted is not None:
        _add_prediction(figure, predicted)
    figure.update_yaxes(title_text="cumulative (MiB)", rangemode="nonnegative", tickformat=",", row=1, col=1)
    figure.update_yaxes(title_text="backlog (MiB)", rangemode="nonnegative", tickformat=",", row=2, col=1)
    figure.update_yaxes(title_text="transport lag (s)", rangemode="nonnegative", tickformat=",", row=3, col=1)
    figure.update_xaxes(tickformat=",")  # 86,400 s, not 86.4k s
    figure.update_xaxes(title_text="time from the start of the replay (s)", row=3, col=1)
    figure.update_layout(**{**LAYOUT, "height": 640})
    return figure_json(figure, title)


def _add_prediction(figure: go.Figure, predicted: PredictedRehearsal) -> None:
    bx, by = _points(predicted.backlog_series)
    figure.add_trace(
        go.Scatter(
            x=bx,
            y=by / MIB,
            name="backlog, model (MiB)",
            mode="lines",
            line=PREDICTED,
            hovertemplate="%{y:,.2f} MiB at %{x:,.1f} s<extra>model</extra>",
        ),
        row=2,
        col=1,
    )
    lx, ly = _points(predicted.lag_series)
    figure.add_trace(
        go.Scatter(
            x=lx,
            y=ly,
            name="lag, model (s)",
            mode="lines",
            line=PREDICTED,
            hovertemplate="%{y:.2f} s at %{x:,.1f} s<extra>model</extra>",
        ),
        row=3,
        col=1,
    )
