"""Redo analytics (pure): per-log rates, per-thread peaks, the RAC sum over time, the rate the link
must carry. Units: bytes, seconds, bytes per second; times are UTC datetimes.

Sources: seed 000 (rate per archived log = bytes / (NEXT_TIME - FIRST_TIME); peak + 30 %;
average redo write size = redo size / redo writes, above 1500 bytes evaluate jumbo frames) and
seed 003 (MB/s to Mbit/s; AWR snapshots dilute short peaks).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from redolab.core.sources import MAA_TRANSPORT_PAPER, ORACLE_NETWORK_NOTE
from redolab.core.units import byte_rate_to_mbit, format_count
from redolab.redo.schemas import RedoInterval

MTU_HINT_BYTES = 1500
# An average over this long or longer hides a peak: a burst of a few minutes (a batch commit, an index
# rebuild) is spread over the sample. A minute's average (V$SYSMETRIC_HISTORY) is as fine as redo is sampled.
DILUTING_SNAPSHOT_SECONDS = 300


@dataclass
class ThreadSummary:
    thread: int
    intervals: int = 0
    bytes: float = 0.0
    peak_bytes_per_second: float = 0.0
    peak_at: datetime | None = None
    first: datetime | None = None
    last: datetime | None = None


@dataclass
class Analysis:
    headroom_ratio: float
    threads: dict[int, ThreadSummary] = field(default_factory=dict)
    segments: list[tuple[datetime, datetime, float]] = field(default_factory=list)  # summed rate, piecewise
    points: dict[int, list[tuple[datetime, float]]] = field(default_factory=dict)  # per-thread (start, rate)
    # per-thread rate as constant pieces (start, end, bytes/s): what one transport stream must carry
    thread_segments: dict[int, list[tuple[datetime, datetime, float]]] = field(default_factory=dict)
    redo_bytes_with_writes: float = 0.0
    redo_writes: float = 0.0
    durations: list[float] = field(default_factory=list)
    # seconds -> how many averaged samples (snapshot, rate, period) lasted that long with no maximum beside
    averaged: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    # hour of day -> thread -> (average, maximum, percentile) bytes/s, from hour-of-day profiles
    profile: dict[int, dict[int, tuple[float | None, float | None, float | None]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    # -- results ------------------------------------------------------------------------------
    @property
    def summed_peak(self) -> tuple[float, datetime | None] | None:
        if not self.segments:
            return None
        start, _, rate = max(self.segments, key=lambda s: s[2])
        return rate, start

    def summed_percentile(self, p: float) -> float | None:
        """Time-weighted percentile of the summed rate."""
        return time_weighted_percentile(self.segments, p)

    def top_windows(self, count: int = 5) -> list[tuple[datetime, datetime, float]]:
        return sorted(self.segments, key=lambda s: s[2], reverse=True)[:count]

    @property
    def profile_summed_peak(self) -> tuple[float, int] | None:
        """(rate, hour): the instances' hourly maxima added per hour of day (an upper bound: the
        maxima of different instances need not coincide within the hour)."""
        sums = [
            (sum(max(filter(None, values[:2]), default=0.0) for values in threads.values()), hour)
            for hour, threads in self.profile.items()
        ]
        return max(sums) if sums else None

    @property
    def peak_for_requirement(self) -> float | None:
        """The summed peak when times are known; for hour-of-day profiles of several instances the
        per-hour sum of their maxima; otherwise the highest single log (seed 000). Never below a
        single thread's peak (a sampled maximum can exceed the summed averages): all threads together
        never need less than one of them (the plan's requirement model, planning/requirement.py)."""
        summed = self.summed_peak
        peaks = [t.peak_bytes_per_second for t in self.threads.values()]
        if summed is not None:
            return max(summed[0], *peaks)
        if len(self.threads) > 1 and self.profile:
            return max(self.profile_summed_peak[0], *peaks)
        return max(peaks) if peaks else None

    @property
    def required_bytes_per_second(self) -> float | None:
        peak = self.peak_for_requirement
        return None if peak is None else peak * (1 + self.headroom_ratio)

    @property
    def avg_redo_write_bytes(self) -> float | None:
        return self.redo_bytes_with_writes / self.redo_writes if self.redo_writes else None


def analyze(intervals: Iterable[RedoInterval], *, headroom_ratio: float = 0.30, keep_points: bool = True) -> Analysis:
    """One pass over de-duplicated intervals."""
    result = Analysis(headroom_ratio=headroom_ratio)
    events: list[tuple[datetime, float]] = []
    thread_events: dict[int, list[tuple[datetime, float]]] = {}
    for interval in intervals:
        rate = interval.rate
        result.kinds[interval.kind] += 1
        summary = result.threads.setdefault(interval.thread, ThreadSummary(interval.thread))
        summary.intervals += 1
        summary.bytes += interval.bytes
        peak = max(filter(None, (rate, interval.peak_bytes_per_second)), default=None)
        if peak is not None and peak > summary.peak_bytes_per_second:
            summary.peak_bytes_per_second, summary.peak_at = peak, interval.start
        if interval.start is not None:
            summary.first = min(filter(None, (summary.first, interval.start)))
            summary.last = max(filter(None, (summary.last, interval.end or interval.start)))
        if interval.writes:
            result.redo_bytes_with_writes += interval.bytes
            result.redo_writes += interval.writes
        if interval.hour is not None:
            result.profile.setdefault(interval.hour, {})[interval.thread] = (
                rate,
                interval.peak_bytes_per_second,
                interval.percentile_bytes_per_second,
            )
        if interval.duration is not None and interval.kind in ("snapshot", "rate", "period"):
            result.durations.append(interval.duration)
            if interval.peak_bytes_per_second is None:
                result.averaged[round(interval.duration)] += 1
        if rate is not None and interval.start is not None and interval.end is not None:
            events.append((interval.start, rate))
            events.append((interval.end, -rate))
            if keep_points:
                result.points.setdefault(interval.thread, []).append((interval.start, rate))
                thread_events.setdefault(interval.thread, []).extend(events[-2:])
    result.segments = summed_pieces(events)
    result.thread_segments = {thread: summed_pieces(pieces) for thread, pieces in thread_events.items()}
    result.warnings = _warnings(result)
    return result


def samples_needed(p: float) -> int:
    """How many pieces a p-th percentile needs to be more than the peak: one in (100 - p) % above it
    (p95: 20, p99: 100). From fewer, the "p95" of ten samples is their highest, read as a bug."""
    return math.ceil(100 / (100 - p) - 1e-9)


def too_few_for(count: int, percents: Iterable[float]) -> str | None:
    """'10 intervals: too few for a p95 (20 needed) or a p99 (100 needed)', None when there are enough for
    all; an interval is a stretch of one rate (a log, a snapshot, or where the summed threads' rates hold)."""
    said = " or ".join(f"a p{p:g} ({samples_needed(p):,} needed)" for p in percents if count < samples_needed(p))
    if not said:
        return None
    return f"{format_count(count, 'interval') if count else 'no intervals'}: too few for {said}"


def time_weighted_percentile(segments: Iterable[tuple[datetime, datetime, float]], p: float) -> float | None:
    """The rate below which the series spends `p` percent of its time (None: no time at all, or fewer
    pieces than samples_needed(p))."""
    ordered = sorted((rate, (end - start).total_seconds()) for start, end, rate in segments)
    total = sum(d for _, d in ordered)
    if not total or sum(1 for _, d in ordered if d > 0) < samples_needed(p):
        return None
    target, seen = total * p / 100, 0.0
    for rate, duration in ordered:
        seen += duration
        if seen >= target:
            return rate
    return ordered[-1][0]


def summed_pieces(events: list[tuple[datetime, float]]) -> list[tuple[datetime, datetime, float]]:
    """Concurrent intervals add up: the summed rate as constant pieces between event times."""
    events.sort(key=lambda e: e[0])
    segments, level, index = [], 0.0, 0
    while index < len(events):
        time = events[index][0]
        while index < len(events) and events[index][0] == time:
            level += events[index][1]
            index += 1
        if index < len(events) and level > 1e-9:
            segments.append((time, events[index][0], level))
    return segments


def _warnings(result: Analysis) -> list[str]:
    warnings = []
    diluted = _dilution(result)
    if diluted:
        warnings.append(diluted)
    if result.profile and len(result.threads) > 1 and not result.segments:
        warnings.append(
            "Hour-of-day profiles of several instances: their hourly maxima are added as if they came at "
            "the same moment, so the summed peak is an upper bound."
        )
    write_size = result.avg_redo_write_bytes
    if write_size is not None and write_size > MTU_HINT_BYTES:
        warnings.append(
            f"Average redo write size is {write_size:,.0f} bytes, above {MTU_HINT_BYTES}: evaluate jumbo frames "
            f"(MTU 9000) for the redo transport network ({ORACLE_NETWORK_NOTE}, Task 7)."
        )
    return warnings


def _dilution(result: Analysis) -> str | None:
    """A warning wherever samples are averages long enough to hide a peak (seed 003): snapshot deltas,
    AWR Miner's and DBA_HIST_SYSMETRIC_SUMMARY's AVERAGE without its MAXVAL, volumes per period. Said
    with the typical sample's length in minutes, whatever else was imported beside them."""
    count = sum(result.averaged.values())
    if not count:
        return None
    seen, typical = 0, 0
    for seconds in sorted(result.averaged):  # the median sample length
        seen += result.averaged[seconds]
        if seen * 2 >= count:
            typical = seconds
            break
    if typical < DILUTING_SNAPSHOT_SECONDS:
        return None
    minutes = f"{typical / 60:.0f}"
    besides = " (the per-log rows imported beside them show peaks only where they cover the same time)"
    return (
        f"Samples are {minutes} minutes apart, each an average over its {minutes} minutes with no maximum: a peak "
        f"shorter than {minutes} minutes is averaged away, so the peak and the link rate required can be too low "
        f"({MAA_TRANSPORT_PAPER}). Per-log data from V$ARCHIVED_LOG, or DBA_HIST_SYSMETRIC_SUMMARY with MAXVAL, "
        "shows the "
        f"peaks{besides if result.kinds['log'] else ''}."
    )


def summary_json(
    analysis: Analysis,
    *,
    fmt: str,
    rows_read: int,
    dropped: Counter,
    warnings: list[str],
    notes: list[str] | None = None,
    ignored: dict[str, list[str]] | None = None,
    used: list[str] | None = None,
    skipped: list[tuple[str, str]] | None = None,
) -> dict:
    """The keys `redolab redo analyze --json` promises (units in the names); `notes` says what was
    found (periods, lines passed over), `ignored_columns` the columns present but not read per file,
    `files_used` and `files_skipped` an archive's members."""
    required = analysis.required_bytes_per_second
    return {
        "format": fmt,
        "rows_read": rows_read,
        "unique_logs": sum(t.intervals for t in analysis.threads.values()),
        "dropped": dict(dropped),
        "threads": _threads_json(analysis),
        "summed": _summed_json(analysis),
        "headroom_ratio": analysis.headroom_ratio,
        "peak_bytes_per_second": analysis.peak_for_requirement,  # the peak `required` adds headroom to
        "required_bytes_per_second": required,
        "required_mbit_per_second": byte_rate_to_mbit(required) if required is not None else None,
        "avg_redo_write_bytes": analysis.avg_redo_write_bytes,
        "profile": _profile_json(analysis),
        "warnings": [*warnings, *analysis.warnings],
        "notes": list(notes or []),
        "ignored_columns": dict(ignored or {}),
        "files_used": list(used or []),
        "files_skipped": [{"file": name, "reason": reason} for name, reason in (skipped or [])],
    }


def _threads_json(analysis: Analysis) -> list[dict]:
    """Each thread's peak and the rate it requires with the headroom, in thread order."""
    return [
        {
            "thread": t.thread,
            "peak_bytes_per_second": t.peak_bytes_per_second,
            "peak_at": t.peak_at.isoformat() if t.peak_at else None,
            "required_bytes_per_second": t.peak_bytes_per_second * (1 + analysis.headroom_ratio),
            "bytes": t.bytes,
        }
        for t in sorted(analysis.threads.values(), key=lambda t: t.thread)
    ]


def _summed_json(analysis: Analysis) -> dict | None:
    """The threads' summed rate: its peak, percentiles and busiest windows (None without times)."""
    summed = analysis.summed_peak
    if summed is None:
        return None
    return {
        "peak_bytes_per_second": summed[0],
        "peak_at": summed[1].isoformat() if summed[1] else None,
        "p95_bytes_per_second": analysis.summed_percentile(95),
        "p99_bytes_per_second": analysis.summed_percentile(99),
        "top_windows": [
            {"start": s.isoformat(), "end": e.isoformat(), "bytes_per_second": r} for s, e, r in analysis.top_windows()
        ],
    }


def _profile_json(analysis: Analysis) -> list[dict]:
    """Hour-of-day profiles: one entry per hour and thread."""
    return [
        {
            "hour": hour,
            "thread": thread,
            "average_bytes_per_second": average,
            "max_bytes_per_second": maximum,
            "percentile_bytes_per_second": percentile,
        }
        for hour, threads in sorted(analysis.profile.items())
        for thread, (average, maximum, percentile) in sorted(threads.items())
    ]
