"""Peak windows of a redo series (pure): the highest average over 1, 5, 15 and 60 minutes of a
piecewise-constant rate series, only for windows no finer than the data's own sampling interval.
Units: seconds, bytes per second; times are UTC datetimes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import repeat
from operator import eq, itemgetter, sub

import numpy as np

from redolab.core.units import format_duration

WINDOW_MINUTES = (1, 5, 15, 60)
Segment = tuple[datetime, datetime, float]  # start, end, bytes per second


@dataclass
class Window:
    minutes: int
    bytes_per_second: float | None
    start: datetime | None
    reason: str = ""  # why there is no figure

    def to_json(self) -> dict:
        start = self.start.isoformat() if self.start else None
        return {
            "minutes": self.minutes,
            "bytes_per_second": self.bytes_per_second,
            "start": start,
            "reason": self.reason or None,
        }


@dataclass
class _Prepared:
    """A series as seconds from its first piece, with the bytes before each piece."""

    origin: datetime
    starts: list[float]
    ends: list[float]
    rates: list[float]
    cumulative: list[float]

    @classmethod
    def of(cls, segments: list[Segment]) -> _Prepared:
        origin = segments[0][0]
        starts = [(s - origin).total_seconds() for s, _, _ in segments]
        ends = [(e - origin).total_seconds() for _, e, _ in segments]
        rates = [r for _, _, r in segments]
        cumulative = [0.0]
        for s, e, rate in zip(starts, ends, rates, strict=True):
            cumulative.append(cumulative[-1] + rate * (e - s))
        return cls(origin, starts, ends, rates, cumulative)


def best_window(segments: list[Segment] | _Prepared, seconds: float) -> tuple[float, datetime] | None:
    """The highest average over any `seconds`-long window of a piecewise-constant series (sorted,
    not overlapping; zero in its gaps). The best window starts at a piece's start or ends at a piece's
    end, so only those are tried, each in one pass with a pointer that only moves forward."""
    if not segments:
        return None
    series = segments if isinstance(segments, _Prepared) else _Prepared.of(segments)
    origin, starts, ends, rates, cumulative = (
        series.origin,
        series.starts,
        series.ends,
        series.rates,
        series.cumulative,
    )
    if ends[-1] - starts[0] < seconds:
        return None
    count, last = len(starts), ends[-1]

    def integral_from(index: int, t: float) -> tuple[float, int]:
        """Bytes from the origin to t, moving the piece index forward from `index`; (bytes, index)."""
        while index + 1 < count and starts[index + 1] <= t:
            index += 1
        if t < starts[index]:
            return cumulative[index], index
        return cumulative[index] + rates[index] * (min(t, ends[index]) - starts[index]), index

    best: tuple[float, float] | None = None
    j = 0
    for i in range(count):  # windows that start where a piece starts
        t = starts[i]
        if t + seconds > last:
            break
        upper, j = integral_from(max(j, i), t + seconds)
        average = (upper - cumulative[i]) / seconds
        if best is None or average > best[0]:
            best = (average, t)
    k = 0
    for i in range(count):  # windows that end where a piece ends
        t = ends[i] - seconds
        if t < starts[0]:
            continue
        lower, k = integral_from(k, t)
        average = (cumulative[i + 1] - lower) / seconds
        if best is None or average > best[0]:
            best = (average, t)
    if best is None:
        return None
    return best[0], origin + timedelta(seconds=best[1])


def peak_windows(series: list[list[Segment]], interval: float | None) -> list[Window]:
    """The highest average of the series over each of WINDOW_MINUTES, where the data are fine enough."""
    windows = []
    prepared = [_Prepared.of(segments) for segments in series if segments]
    for minutes in WINDOW_MINUTES:
        seconds = minutes * 60.0
        if not series:
            windows.append(Window(minutes, None, None, "no summed series with times"))
            continue
        if interval and interval > seconds * 1.01:
            windows.append(Window(minutes, None, None, f"the data are ~{format_duration(interval)} apart: too coarse"))
            continue
        found = [w for w in (best_window(p, seconds) for p in prepared) if w]
        if not found:
            windows.append(Window(minutes, None, None, "no stretch of data that long"))
            continue
        rate, start = max(found, key=lambda w: w[0])
        windows.append(Window(minutes, rate, start))
    return windows


def coverage(segments: list[Segment], tolerance: float) -> list[tuple[datetime, datetime]]:
    """Merge a thread's pieces into stretches of data; a gap wider than `tolerance` seconds splits."""
    spans: list[list[datetime]] = []
    for start, end, _ in sorted(segments):
        if spans and (start - spans[-1][1]).total_seconds() <= tolerance:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    return [(s, e) for s, e in spans]


def intersect(a: list[tuple[datetime, datetime]], b: list[tuple[datetime, datetime]]):
    """The stretches both lists of sorted stretches cover."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def series_arrays(segments: list[tuple[datetime, datetime, float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A series' starts and ends (seconds since the epoch; aware times) and rates (bytes/s) as arrays.
    Reading a time costs most: a series whose pieces follow each other (logs do) reads its starts only,
    one at a fixed step (1-minute samples) only its first."""
    count = len(segments)
    rates = np.fromiter(map(itemgetter(2), segments), float, count)
    if not count:
        return np.empty(0), np.empty(0), rates
    firsts, lasts = list(map(itemgetter(0), segments)), list(map(itemgetter(1), segments))
    if not all(map(eq, lasts[:-1], firsts[1:])):
        starts = np.fromiter(map(datetime.timestamp, firsts), float, count)
        return starts, np.fromiter(map(datetime.timestamp, lasts), float, count), rates
    steps = set(map(sub, lasts, firsts))
    if len(steps) == 1:
        step = steps.pop().total_seconds()
        starts = firsts[0].timestamp() + step * np.arange(count, dtype=float)
    else:
        starts = np.fromiter(map(datetime.timestamp, firsts), float, count)
    return starts, np.append(starts[1:], lasts[-1].timestamp()), rates


def series_segments(starts: np.ndarray, ends: np.ndarray, rates: np.ndarray) -> list[Segment]:
    """series_arrays read back: (start, end, bytes/s) with aware UTC times, to the microsecond. Pieces
    that follow each other share their times (0.2 s for a year of 1-minute pieces)."""
    firsts = list(map(datetime.fromtimestamp, starts.tolist(), repeat(UTC)))
    if len(starts) and np.array_equal(ends[:-1], starts[1:]):
        lasts = [*firsts[1:], datetime.fromtimestamp(float(ends[-1]), UTC)]
    else:
        lasts = list(map(datetime.fromtimestamp, ends.tolist(), repeat(UTC)))
    return list(zip(firsts, lasts, rates.tolist(), strict=True))
