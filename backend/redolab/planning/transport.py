"""Redo transport: verdicts, the ASYNC lag replay and the SYNC commit impact (pure).
Units: bytes, seconds, bytes per second; times are UTC datetimes.

Sources: seed 000 (the link must carry the peak redo rate + 30 %; one ASYNC stream per instance),
seed 003 (ASYNC transport lag is the data-loss exposure) and seed 002 (latency, not bandwidth,
dominates SYNC). The commit model follows IBM's hadrCalculator.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property

import numpy as np

from redolab.planning.network import require_positive
from redolab.redo.windows import series_arrays


# -- verdicts ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """Does `available` carry `required`? The margin is what is left (negative: the shortfall)."""

    subject: str
    required_bytes_per_second: float
    available_bytes_per_second: float

    @property
    def passed(self) -> bool:
        return self.available_bytes_per_second >= self.required_bytes_per_second

    @property
    def margin_bytes_per_second(self) -> float:
        return self.available_bytes_per_second - self.required_bytes_per_second

    @property
    def margin_percent(self) -> float:
        """Margin as a percentage of the requirement (+25 %: a quarter more than needed)."""
        return self.margin_bytes_per_second / self.required_bytes_per_second * 100


def transport_verdict(
    *, subject: str, peak_bytes_per_second: float, headroom_ratio: float, available_bytes_per_second: float
) -> Verdict:
    """Required = peak x (1 + headroom); pass when the measured throughput is at least that."""
    require_positive(peak_bytes_per_second, "peak redo rate")
    return Verdict(subject, peak_bytes_per_second * (1 + headroom_ratio), available_bytes_per_second)


# -- ASYNC lag replay ----------------------------------------------------------------------------
@dataclass
class LagReplay:
    """The redo history replayed through one transport stream of `drain_bytes_per_second`.

    The backlog is redo generated but not yet shipped; the transport lag of redo generated at a
    moment is how long it waits behind the backlog (FIFO): backlog / drain rate.
    """

    drain_bytes_per_second: float
    max_backlog_bytes: float = 0.0
    max_at: datetime | None = None
    drain_seconds: float | None = None  # from the maximum until the backlog is empty again
    lagging_seconds: float = 0.0  # total time with a backlog
    series: list[tuple[datetime, float]] = field(default_factory=list)  # (time, lag seconds), thinned

    @property
    def max_lag_seconds(self) -> float:
        return self.max_backlog_bytes / self.drain_bytes_per_second

    @property
    def drained(self) -> bool:
        """False when the history ends with the backlog of the worst moment still queued."""
        return self.max_backlog_bytes == 0 or self.drain_seconds is not None


def replay_lag(
    segments: Iterable[tuple[datetime, datetime, float]], *, drain_bytes_per_second: float, max_points: int = 1500
) -> LagReplay:
    """Run piecewise-constant redo rates (start, end, bytes/s; sorted, not overlapping) through a
    queue drained at `drain_bytes_per_second`. Gaps between pieces generate no redo.

    Within one piece the rate is the piece's average (a log's bytes over its duration), so bursts
    shorter than a log are smoothed: the replay is a lower bound of the real lag.
    """
    require_positive(drain_bytes_per_second, "single-stream throughput")
    result = LagReplay(drain_bytes_per_second)
    points = _Thinner(max_points)
    backlog, clock, awaiting_drain = 0.0, None, False

    def drain_until(start: datetime, end: datetime, rate: float) -> None:
        nonlocal backlog, awaiting_drain
        seconds = (end - start).total_seconds()
        if rate > drain_bytes_per_second:
            if backlog <= 0:
                points.add(start, 0.0)
            backlog += (rate - drain_bytes_per_second) * seconds
            result.lagging_seconds += seconds
            points.add(end, backlog / drain_bytes_per_second)
            if backlog > result.max_backlog_bytes:
                result.max_backlog_bytes, result.max_at = backlog, end
                result.drain_seconds, awaiting_drain = None, True
            return
        if backlog <= 0:
            return
        if rate >= drain_bytes_per_second:  # redo arrives as fast as it drains: the backlog stays
            result.lagging_seconds += seconds
            points.add(end, backlog / drain_bytes_per_second)
            return
        empty_after = backlog / (drain_bytes_per_second - rate)
        if empty_after <= seconds:
            backlog = 0.0
            empty_at = start + timedelta(seconds=empty_after)
            result.lagging_seconds += empty_after
            points.add(empty_at, 0.0)
            if awaiting_drain:
                result.drain_seconds = (empty_at - result.max_at).total_seconds()
                awaiting_drain = False
        else:
            backlog -= (drain_bytes_per_second - rate) * seconds
            result.lagging_seconds += seconds
            points.add(end, backlog / drain_bytes_per_second)

    for start, end, rate in segments:
        if clock is None:
            points.add(start, 0.0)
        elif start > clock:
            drain_until(clock, start, 0.0)
        drain_until(start, end, rate)
        clock = end
    result.series = points.done()
    return result


@dataclass(frozen=True)
class Pieces:
    """A redo series as arrays, for the same queue as `replay_lag` drained at many rates: piece i runs
    from `bounds[i]` to `bounds[i + 1]` (seconds after `origin`) at `rates[i]` bytes/s; the gaps between
    the series' pieces are pieces of rate 0 that are not `counted` (the queue drains through them, but
    they are no time of the history)."""

    origin: datetime
    bounds: np.ndarray
    rates: np.ndarray
    counted: np.ndarray

    @cached_property
    def seconds(self) -> np.ndarray:
        return np.diff(self.bounds)

    @cached_property
    def peak_rate(self) -> float:
        return float(self.rates.max())

    @cached_property
    def generated(self) -> np.ndarray:
        """The bytes generated before each bound (len(bounds) values, from 0)."""
        return np.concatenate(([0.0], np.cumsum(self.rates * self.seconds)))


def pieces_of(bounds: np.ndarray, rates: np.ndarray, counted: np.ndarray) -> Pieces:
    """Pieces from bounds in seconds since the epoch."""
    origin = datetime.fromtimestamp(float(bounds[0]), UTC)
    return Pieces(origin, bounds - bounds[0], rates, counted)


def as_pieces(segments: Iterable[tuple[datetime, datetime, float]]) -> Pieces | None:
    """The series (start, end, bytes/s; sorted, not overlapping) as arrays; None when it is empty."""
    return pieces_from_arrays(*series_arrays(list(segments)))


def pieces_from_arrays(starts: np.ndarray, ends: np.ndarray, rates: np.ndarray) -> Pieces | None:
    """series_arrays' arrays as pieces, the gaps between them pieces not counted; None when empty."""
    keep = ends > starts
    starts, ends, rates = starts[keep], ends[keep], rates[keep]
    if not len(starts):
        return None
    gaps = starts[1:] - ends[:-1] > 0
    if not gaps.any():
        return pieces_of(np.concatenate((starts, ends[-1:])), rates, np.ones(len(starts), bool))
    count = len(starts) + int(gaps.sum())
    place = np.arange(len(starts)) + np.concatenate(([0], np.cumsum(gaps)))  # each piece's index among all
    bounds, all_rates, counted = np.empty(count + 1), np.zeros(count), np.zeros(count, bool)
    bounds[place], all_rates[place], counted[place] = starts, rates, True
    bounds[place[1:][gaps] - 1] = ends[:-1][gaps]
    bounds[-1] = ends[-1]
    return pieces_of(bounds, all_rates, counted)


def backlog_ends(pieces: Pieces, drain_bytes_per_second: float) -> np.ndarray:
    """The backlog at the end of every piece, as `replay_lag` computes it (the same first-in first-out
    queue, in array form: the backlog is the net redo since the moment it was last empty)."""
    require_positive(drain_bytes_per_second, "drain rate")
    net = np.cumsum((pieces.rates - drain_bytes_per_second) * pieces.seconds)
    return np.maximum(net - np.minimum(np.minimum.accumulate(net), 0.0), 0.0)


class _Thinner:
    """Keeps at most about `limit` points of a lag series, the largest of each run of points."""

    def __init__(self, limit: int) -> None:
        self.limit, self.points = limit, []

    def add(self, time: datetime, lag: float) -> None:
        self.points.append((time, lag))
        if len(self.points) >= 2 * self.limit:
            self.points = [max(self.points[i : i + 2], key=lambda p: p[1]) for i in range(0, len(self.points), 2)]

    def done(self) -> list[tuple[datetime, float]]:
        return self.points


# -- SYNC commit impact --------------------------------------------------------------------------
@dataclass(frozen=True)
class CommitImpact:
    """Per-commit time of one redo write of `write_bytes` under each transport mode."""

    write_bytes: float
    write_seconds: float  # one redo write to disk (local, and on the standby)
    send_seconds: float  # putting write_bytes on the wire at the single-stream throughput
    rtt_seconds: float

    @property
    def modes(self) -> dict[str, float]:
        """hadrCalculator: SYNC ~ 2 x write + send + RTT (the standby writes before it answers);
        NEARSYNC ~ max(write, send + RTT) (the standby answers on receipt); ASYNC ~ max(write, send)."""
        write, send, rtt = self.write_seconds, self.send_seconds, self.rtt_seconds
        return {
            "SYNC": 2 * write + send + rtt,
            "NEARSYNC": max(write, send + rtt),
            "ASYNC": max(write, send),
        }

    def added_seconds(self, mode: str) -> float:
        """What the standby adds to a commit, against the local write alone."""
        return self.modes[mode] - self.write_seconds

    def ceiling_bytes_per_second(self, mode: str) -> float:
        """The redo rate one log writer reaches when every write of write_bytes takes the mode's time."""
        return self.write_bytes / self.modes[mode]


def commit_impact(
    *, write_bytes: float, write_seconds: float, throughput_bytes_per_second: float, rtt_seconds: float
) -> CommitImpact:
    """send = write_bytes / single-stream throughput; the rest as measured."""
    require_positive(write_bytes, "redo write size")
    require_positive(throughput_bytes_per_second, "single-stream throughput")
    if write_seconds < 0 or rtt_seconds < 0:
        raise ValueError("write time and round-trip time must not be negative")
    return CommitImpact(write_bytes, write_seconds, write_bytes / throughput_bytes_per_second, rtt_seconds)


# Which model mode each platform's transport setting behaves like.
MODEL_MODE = {
    "SYNC": "SYNC",  # Data Guard SYNC AFFIRM, HADR SYNC
    "FASTSYNC": "NEARSYNC",  # Data Guard SYNC NOAFFIRM: acknowledged on receipt
    "NEARSYNC": "NEARSYNC",
    "ASYNC": "ASYNC",
    "SUPERASYNC": "ASYNC",
}
