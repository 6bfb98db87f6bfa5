"""The link for the RPO (pure): from a redo series and an RPO, the least drain rate at which the
transport lag stays within the RPO a given share of the time, the lag at a given rate, the days a
smaller link breaks it, and the outage budget. Units: bytes, seconds, bytes per second; times UTC.

One model, the lag card's and the rehearsal prediction's (transport.replay_lag, here in its array form
transport.backlog_ends): each piece generates its redo evenly over its time; the link drains first in,
first out at a constant rate. Redo generated at a moment waits backlog / rate; the lag at an instant
(the age of the oldest byte not yet delivered) exceeds the RPO exactly when the redo generated one RPO
earlier waited longer than the RPO, so the share of time within the RPO is the same counted either way.
Gaps in the history drain the queue but are not time of the history: they are left out of the shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np

from redolab.planning.network import require_positive
from redolab.planning.transport import Pieces, backlog_ends

SHARES = (1.0, 0.999, 0.99)  # the shares of time the link for the RPO is solved for
TOLERANCE = 1e-4  # relative: the bisection stops when the bracket is this narrow (well within 1 %)
DAYS_SHOWN = 5  # a tier's worst days listed (all are counted)


@dataclass(frozen=True)
class AtRate:
    """The series drained at `bytes_per_second`: its worst lag, when, and the share within the RPO."""

    bytes_per_second: float
    worst_lag_seconds: float
    worst_at: datetime | None  # the instant the lag was worst (the redo of `worst_generated_at` still waiting)
    worst_generated_at: datetime | None  # when the redo that waited longest was generated
    share_of_time_within_rpo: float
    violation_seconds: float  # the history's time with the lag above the RPO

    def to_json(self) -> dict:
        return {
            "bytes_per_second": self.bytes_per_second,
            "worst_lag_seconds": self.worst_lag_seconds,
            "worst_at": iso_time(self.worst_at),
            "worst_redo_generated_at": iso_time(self.worst_generated_at),
            "share_of_time_within_rpo": self.share_of_time_within_rpo,
            "violation_seconds": self.violation_seconds,
        }


@dataclass(frozen=True)
class ViolationDay:
    day: date  # on the database's clock
    violation_seconds: float
    worst_lag_seconds: float
    worst_at: datetime

    def to_json(self) -> dict:
        return {
            "day": self.day.isoformat(),
            "violation_seconds": self.violation_seconds,
            "worst_lag_seconds": self.worst_lag_seconds,
            "worst_at": iso_time(self.worst_at),
        }


def iso_time(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _moment(pieces: Pieces, seconds: float) -> datetime:
    return pieces.origin + timedelta(seconds=float(seconds))


def counted_seconds(pieces: Pieces) -> float:
    return float(pieces.seconds[pieces.counted].sum())


def granularity_seconds(pieces: Pieces) -> float:
    """The longest piece of the history: nothing shorter than it is seen."""
    return float(pieces.seconds[pieces.counted].max())


def _violating(pieces: Pieces, rate: float, rpo_seconds: float, ends: np.ndarray) -> np.ndarray:
    """Per piece, the seconds of it whose redo waits longer than the RPO (0 for the gaps): within a
    piece the backlog moves in a straight line from its start to its end value (never below 0), so
    rising it is over from (end - threshold) / slope before its end, falling for (start - threshold) /
    -slope after its start."""
    threshold = rate * rpo_seconds
    slope = pieces.rates - rate
    over = np.empty_like(ends)
    over[0] = -threshold
    np.subtract(ends[:-1], threshold, out=over[1:])  # each piece's start over the threshold
    rising = slope > 0
    over[rising] = ends[rising] - threshold
    with np.errstate(divide="ignore", invalid="ignore"):
        over /= np.abs(slope)  # a flat piece: +inf when over the threshold, else -inf or nan
    np.nan_to_num(over, copy=False, nan=0.0)
    np.clip(over, 0.0, pieces.seconds, out=over)
    over[~pieces.counted] = 0.0
    return over


def drained(pieces: Pieces, rate: float, rpo_seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """The backlog at the end of each piece and each piece's seconds over the RPO, drained at `rate`
    (0 throughout at or above the highest rate: nothing ever waits)."""
    if rate >= pieces.peak_rate:
        require_positive(rate, "drain rate")
        return np.zeros(len(pieces.rates)), np.zeros(len(pieces.rates))
    ends = backlog_ends(pieces, rate)
    return ends, _violating(pieces, rate, rpo_seconds, ends)


def at_rate(pieces: Pieces, rate: float, rpo_seconds: float, drain: tuple | None = None) -> AtRate:
    """The worst lag, when, and the share of the history's time within the RPO, drained at `rate`
    (`drain`: drained() at that rate, when it was computed already)."""
    ends, over = drain if drain is not None else drained(pieces, rate, rpo_seconds)
    worst = int(np.argmax(ends))
    lag = float(ends[worst]) / rate
    violation = float(over.sum())
    total = counted_seconds(pieces)
    generated = _moment(pieces, pieces.bounds[worst + 1]) if lag > 0 else None
    return AtRate(
        float(rate),
        lag,
        generated + timedelta(seconds=lag) if generated is not None else None,
        generated,
        1.0 - violation / total if total else 1.0,
        violation,
    )


def least_for_every_moment(pieces: Pieces, rpo_seconds: float) -> float:
    """The least rate at which no redo waits longer than the RPO, exactly: the largest volume of any
    stretch over (its length + the RPO). Dinkelbach's iteration from below: each step drains at the
    volume / (length + RPO) of the stretch that queued most at the step before; it ends when that
    stretch holds the RPO (a few steps)."""
    generated, bounds = pieces.generated, pieces.bounds
    if generated[-1] <= 0:
        return 0.0
    rate = generated[-1] / (bounds[-1] - bounds[0] + rpo_seconds)  # the whole history as one stretch
    for _ in range(100):
        net = np.concatenate(([0.0], np.cumsum((pieces.rates - rate) * pieces.seconds)))
        lowest = np.minimum.accumulate(net)
        end = int(np.argmax(net - lowest))
        if net[end] - lowest[end] <= rate * rpo_seconds * (1 + 1e-12):
            return rate
        start = int(np.argmin(net[: end + 1]))
        better = (generated[end] - generated[start]) / (bounds[end] - bounds[start] + rpo_seconds)
        if better <= rate:
            return rate
        rate = better
    return rate


def least_for_share(pieces: Pieces, rpo_seconds: float, share: float, every_moment: float) -> float:
    """The least rate at which the lag is within the RPO for `share` of the history's time: bisection
    (the time over the RPO never grows as the rate does) below the rate for every moment."""
    if share >= 1.0 or every_moment <= 0:
        return every_moment
    allowed = (1.0 - share) * counted_seconds(pieces)

    def holds(rate: float) -> bool:
        return float(drained(pieces, rate, rpo_seconds)[1].sum()) <= allowed

    high, low = every_moment, every_moment / 2
    while holds(low):
        high, low = low, low / 2
        if low < every_moment * 1e-9:
            return high
    while high - low > TOLERANCE * high:
        middle = (high + low) / 2
        high, low = (middle, low) if holds(middle) else (high, middle)
    return high


def local_days(pieces: Pieces, zone: str) -> np.ndarray:
    """Each piece's day on the database's clock (days since 1970-01-01), by the zone's offset at noon UTC
    of its UTC day (a day with a clock change counts its hour either side by that day's offset)."""
    epoch = pieces.origin.timestamp()
    absolute = epoch + pieces.bounds[:-1]
    utc_days = np.floor(absolute / 86400).astype(np.int64)
    unique, inverse = np.unique(utc_days, return_inverse=True)
    info = ZoneInfo(zone)
    noons = (datetime.fromtimestamp(int(d) * 86400 + 43200, UTC).astimezone(info) for d in unique)
    offsets = np.array([(noon.utcoffset() or timedelta()).total_seconds() for noon in noons])
    return np.floor((absolute + offsets[inverse]) / 86400).astype(np.int64)


def violation_days(
    pieces: Pieces, rate: float, rpo_seconds: float, days: np.ndarray, drain: tuple | None = None
) -> tuple[int, list[ViolationDay]]:
    """How many days (`days`: local_days) have time over the RPO at `rate`, and the worst of them (most
    time over), each with its seconds over, its worst lag and when (`drain`: as for at_rate)."""
    ends, over = drain if drain is not None else drained(pieces, rate, rpo_seconds)
    hit = over > 0
    if not hit.any():
        return 0, []
    chosen_days, seconds, lag_ends, index = days[hit], over[hit], ends[hit], np.flatnonzero(hit)
    first = np.flatnonzero(np.concatenate(([True], chosen_days[1:] != chosen_days[:-1])))
    per_day = np.add.reduceat(seconds, first)
    order = np.argsort(-per_day, kind="stable")[:DAYS_SHOWN]
    shown = []
    for k in order:
        stop = first[k + 1] if k + 1 < len(first) else len(seconds)
        worst = first[k] + int(np.argmax(lag_ends[first[k] : stop]))
        lag = float(lag_ends[worst]) / rate
        at = _moment(pieces, pieces.bounds[index[worst] + 1]) + timedelta(seconds=lag)
        day = date(1970, 1, 1) + timedelta(days=int(chosen_days[first[k]]))
        shown.append(ViolationDay(day, float(per_day[k]), lag, at))
    return len(first), shown


# -- the outage budget ---------------------------------------------------------------------------------
def worst_window(pieces: Pieces, seconds: float) -> tuple[float, float]:
    """The most redo generated in any `seconds` of the history (bytes) and where that stretch starts
    (seconds after the origin): a stretch's volume is greatest with one of its ends on a bound."""
    bounds, generated = pieces.bounds, pieces.generated
    ahead = np.interp(bounds + seconds, bounds, generated) - generated
    behind = generated - np.interp(bounds - seconds, bounds, generated)
    i, j = int(np.argmax(ahead)), int(np.argmax(behind))
    if ahead[i] >= behind[j]:
        return float(ahead[i]), float(bounds[i])
    return float(behind[j]), float(max(bounds[j] - seconds, bounds[0]))


def fills_after(pieces: Pieces, free_bytes: float) -> float | None:
    """The shortest time in which the history generates `free_bytes` (the archive destination's free
    space, filled while nothing ships), to 0.5 %; None when the whole history generates less."""
    generated = pieces.generated
    if generated[-1] < free_bytes:
        return None
    peak = float(pieces.rates.max())
    low, high = free_bytes / peak, float(pieces.bounds[-1] - pieces.bounds[0])
    if worst_window(pieces, low)[0] >= free_bytes:
        return low
    while high - low > 0.005 * high:
        middle = (low * high) ** 0.5 if low > 0 else high / 2
        low, high = (low, middle) if worst_window(pieces, middle)[0] >= free_bytes else (middle, high)
    return high


def catch_up_seconds(pieces: Pieces, rate: float, outage_seconds: float) -> tuple[float, float | None]:
    """After an outage over the worst stretch of that length: the backlog (bytes) and how long the link
    at `rate` takes to ship it while the history's later redo keeps coming (None: not before the
    history ends)."""
    backlog, start = worst_window(pieces, outage_seconds)
    bounds, generated = pieces.bounds, pieces.generated
    end = start + outage_seconds
    at_end = float(np.interp(end, bounds, generated))
    later = np.flatnonzero(bounds > end)
    left = backlog + (generated[later] - at_end) - rate * (bounds[later] - end)
    done = np.flatnonzero(left <= 0)
    if backlog <= 0:
        return 0.0, 0.0
    if not len(done):
        return backlog, None
    k = int(done[0])
    before_t = end if k == 0 else float(bounds[later[k - 1]])
    before = backlog if k == 0 else float(left[k - 1])
    after_t, after = float(bounds[later[k]]), float(left[k])
    crossing = before_t + (after_t - before_t) * before / (before - after)
    return backlog, crossing - end
