"""The model's prediction for a rehearsal (pure): the same window's redo run through the ASYNC lag
replay (transport.replay_lag), one stream per thread, each drained at the measured single-stream
rate; and how far a measured rehearsal's lag is from it.

Here, not in rehearsals/, because the lag replay is the plan's (level 7) and rehearsals sit beside
runs (level 4): one replay, imported downwards.

All threads together: the backlogs add up (what is queued on the link), while the lag of all threads
is the largest thread's at each moment: the standby is only as recent as its most-lagging thread
(Data Guard applies RAC threads merged in SCN order), so that is the data-loss exposure.
After the window the history is quiet and the backlog drains (the probe keeps sending until every
byte is received); `drained` says whether it was empty by the end of the window.
Units: seconds (offsets from the start of the replay), bytes, bytes per second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from redolab.core.units import format_byte_rate, format_duration
from redolab.planning.network import require_positive
from redolab.planning.transport import LagReplay, replay_lag
from redolab.redo.requirement import Requirement
from redolab.redo.windows import Segment
from redolab.rehearsals.window import Window, clipped

AGREEMENT_RATIO = 0.20  # within 20 % of the prediction the two agree
LAG_FLOOR_SECONDS = 1.0  # lags under a second (the probe's interval) are compared against a second
COMBINED_POINTS = 20_000  # the all-threads series is read on at most this many moments
Point = tuple[float, float]  # (offset seconds, lag seconds or backlog bytes)


@dataclass(frozen=True)
class ThreadPrediction:
    """One thread's stream in the replay."""

    thread: int
    max_lag_seconds: float
    max_backlog_bytes: float
    max_at_seconds: float | None  # offset of the worst moment
    drain_seconds: float | None  # from the worst moment until the backlog is empty (after the window too)
    drained: bool  # empty by the end of the window
    lag_series: tuple[Point, ...]  # (offset, lag seconds)


@dataclass(frozen=True)
class RehearsalPrediction:
    """What the model predicts the rehearsal measures: per thread and for all threads together."""

    drain_bytes_per_second: float  # per stream, from the runs
    scale: float
    speedup: float
    seconds: float  # the replay's length (the window's / speedup)
    threads: tuple[ThreadPrediction, ...]
    max_lag_seconds: float  # the largest thread's
    max_backlog_bytes: float  # of the threads' backlogs added up
    drain_seconds: float | None  # from the worst moment until every stream is empty
    drained: bool  # every stream empty by the end of the window
    lag_series: tuple[Point, ...]  # (offset, the largest thread's lag seconds)
    backlog_series: tuple[Point, ...]  # (offset, the backlogs added up, bytes)


@dataclass(frozen=True)
class LagComparison:
    """A measured rehearsal's largest lag against the model's."""

    measured_max_lag_seconds: float
    predicted_max_lag_seconds: float
    ratio: float | None  # measured / predicted (None when the model predicts no lag)
    disagreement_ratio: float  # (measured - predicted) / max(predicted, 1 s): +0.3 is 30 % over
    agrees: bool  # within 20 %
    explanation: str  # empty when they agree

    @property
    def verdict(self) -> str:
        """As the card and the rehearsal's page write it: "within 20 %", or the disagreement, "+25 %"."""
        if self.agrees:
            return f"within {AGREEMENT_RATIO * 100:.0f} %"
        return f"{self.disagreement_ratio * 100:+.0f} %"


def predict_rehearsal(
    requirement: Requirement,
    window: Window,
    *,
    drain_bytes_per_second: float,
    scale: float = 1.0,
    speedup: float = 1.0,
) -> RehearsalPrediction:
    """Each thread of the window through replay_lag at `drain_bytes_per_second` (the measured
    single-stream throughput), its rates x scale and its time / speedup, as the probe replays it."""
    require_positive(drain_bytes_per_second, "single-stream throughput")
    require_positive(scale, "scale")
    require_positive(speedup, "speedup")
    seconds = window.seconds / speedup
    threads = tuple(
        _thread(
            thread,
            replayed_series(requirement, window, thread, scale=scale, speedup=speedup),
            window.start,
            seconds,
            drain_bytes_per_second,
        )
        for thread in window.threads
    )
    moments, lag, backlog = _combined(threads, drain_bytes_per_second)
    worst = max(threads, key=lambda t: t.max_lag_seconds)
    return RehearsalPrediction(
        drain_bytes_per_second=drain_bytes_per_second,
        scale=scale,
        speedup=speedup,
        seconds=seconds,
        threads=threads,
        max_lag_seconds=worst.max_lag_seconds,
        max_backlog_bytes=max(float(backlog.max(initial=0.0)), max(t.max_backlog_bytes for t in threads)),
        drain_seconds=_drain_after(worst.max_at_seconds, moments, backlog),
        drained=all(t.drained for t in threads),
        lag_series=tuple(zip(moments.tolist(), lag.tolist(), strict=True)),
        backlog_series=tuple(zip(moments.tolist(), backlog.tolist(), strict=True)),
    )


def replayed_series(
    requirement: Requirement, window: Window, thread: int, *, scale: float = 1.0, speedup: float = 1.0
) -> list[Segment]:
    """One thread's redo of the window as the probe replays it (bytes/s x scale, time / speedup)."""
    return _replayed(
        clipped(requirement.threads[thread].replay, window.start, window.end), window.start, scale, speedup
    )


def _replayed(pieces: list[Segment], origin: datetime, scale: float, speedup: float) -> list[Segment]:
    """The pieces as the probe replays them: bytes x scale, time from the origin / speedup."""

    def moment(t: datetime) -> datetime:
        return origin + (t - origin) / speedup

    return [(moment(s), moment(e), rate * scale * speedup) for s, e, rate in pieces]


def _thread(thread: int, pieces: list[Segment], origin: datetime, seconds: float, drain: float) -> ThreadPrediction:
    replay = replay_lag(pieces, drain_bytes_per_second=drain)
    left = replay.series[-1][1] if replay.series else 0.0  # lag at the end of the last piece
    drained = left <= 0
    if not drained:  # the quiet after the window: the probe sends on until all is received
        end = pieces[-1][1]
        replay = replay_lag(
            [*pieces, (end, end + timedelta(seconds=left * 1.01 + 1), 0.0)], drain_bytes_per_second=drain
        )
    series = [((t - origin).total_seconds(), lag) for t, lag in replay.series]
    if drained and (not series or series[-1][0] < seconds):
        series.append((seconds, 0.0))
    return ThreadPrediction(
        thread=thread,
        max_lag_seconds=replay.max_lag_seconds,
        max_backlog_bytes=replay.max_backlog_bytes,
        max_at_seconds=_offset(replay, origin),
        drain_seconds=replay.drain_seconds,
        drained=drained,
        lag_series=tuple(series),
    )


def _offset(replay: LagReplay, origin: datetime) -> float | None:
    return (replay.max_at - origin).total_seconds() if replay.max_at is not None else None


def _combined(threads: tuple[ThreadPrediction, ...], drain: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(moments, the largest lag, the backlogs added up) on the union of the threads' moments; each
    thread's lag is linear between its points (the backlog grows and drains at constant rates)."""
    moments = np.unique(np.concatenate([[0.0], *(np.array([p[0] for p in t.lag_series]) for t in threads)]))
    if len(moments) > COMBINED_POINTS:
        peaks = [t.max_at_seconds for t in threads if t.max_at_seconds is not None]
        moments = np.unique(np.concatenate([np.linspace(0, moments[-1], COMBINED_POINTS), peaks]))
    lags = np.zeros((len(threads), len(moments)))
    for row, thread in enumerate(threads):
        if thread.lag_series:
            xs, ys = zip(*thread.lag_series, strict=True)
            lags[row] = np.interp(moments, xs, ys, left=0.0, right=ys[-1])
    return moments, lags.max(axis=0), lags.sum(axis=0) * drain


def _drain_after(worst_at: float | None, moments: np.ndarray, backlog: np.ndarray) -> float | None:
    """From the worst moment until every stream is empty; None when there was no backlog."""
    if worst_at is None:
        return None
    after = np.flatnonzero((moments >= worst_at) & (backlog <= 1e-6))
    return float(moments[after[0]] - worst_at) if len(after) else None


def compare(
    measured_max_lag: float, predicted_max_lag: float, *, drain_bytes_per_second: float | None = None
) -> LagComparison:
    """How far the measured largest lag (seconds) is from the model's; over 20 %, what the model
    assumed that the link did not do. Lags are compared against at least a second."""
    if not (math.isfinite(measured_max_lag) and measured_max_lag >= 0):
        raise ValueError(f"the measured lag must be a number of seconds, not negative (got {measured_max_lag})")
    if not (math.isfinite(predicted_max_lag) and predicted_max_lag >= 0):
        raise ValueError(f"the predicted lag must be a number of seconds, not negative (got {predicted_max_lag})")
    ratio = measured_max_lag / predicted_max_lag if predicted_max_lag > 0 else None
    disagreement = (measured_max_lag - predicted_max_lag) / max(predicted_max_lag, LAG_FLOOR_SECONDS)
    agrees = abs(disagreement) <= AGREEMENT_RATIO
    explanation = "" if agrees else _explain(measured_max_lag, predicted_max_lag, disagreement, drain_bytes_per_second)
    return LagComparison(measured_max_lag, predicted_max_lag, ratio, disagreement, agrees, explanation)


def _explain(measured: float, predicted: float, disagreement: float, drain: float | None) -> str:
    rate = f" of {format_byte_rate(drain)}" if drain else ""
    assumed = (
        "The model assumed the bytes of each log or sample spread evenly over it (no bursts inside one), "
        f"a constant drain rate{rate} per stream taken from the runs, full speed from the first byte "
        "(no TCP ramp-up after a quiet spell) and no per-message overhead or network delay"
    )
    said = f"measured {format_duration(measured)} against a predicted {format_duration(predicted)}"
    if disagreement > 0:
        return (
            f"The link lagged more than the model: {said} ({disagreement:+.0%}). {assumed}; the link "
            "did not keep to at least one of these (a slower or shared path, slow start after idle, "
            "per-message costs), so plan with the measured lag."
        )
    return (
        f"The link lagged less than the model: {said} ({disagreement:+.0%}). {assumed}; it drained "
        "faster than the runs' rate (the runs were measured on a busier path or with fewer buffers), so the "
        "prediction is on the safe side; measure the runs again to narrow it."
    )
