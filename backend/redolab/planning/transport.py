"""Redo transport: verdicts, the ASYNC lag replay and the SYNC commit impact (pure).
Units: bytes, seconds, bytes per second; times are UTC datetimes.

Sources: seed 000 (the link must carry the peak redo rate + 30 %; one ASYNC stream per instance),
seed 003 (ASYNC transport lag is the data-loss exposure) and seed 002 (latency, not bandwidth,
dominates SYNC). The commit model follows IBM's hadrCalculator.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from redolab.planning.network import require_positive


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
