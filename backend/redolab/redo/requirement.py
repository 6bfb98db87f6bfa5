"""The one requirement model every plan card uses (pure): what the link must carry, per thread and
for all threads together, each figure with its basis.

- Per thread: the peak of that thread's finest series x (1 + headroom). Finest: per-log rates beat
  period volumes (hourly, daily), which beat AWR averages (SYSMETRIC, snapshot deltas), which beat
  hour-of-day profiles. Coarser imports of the same thread are not used for its peak.
- Summed: the peak of the summed series over the spans where every timed thread has data (spans apart
  in time are separate series); never below the largest thread's peak (its highest log without times).
- Peak windows (redo.windows): the highest 1, 5, 15 and 60-minute averages of the summed series, for
  the windows no finer than the data's own sampling interval.
Units: bytes, seconds, bytes per second; times are UTC datetimes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from redolab.core.sources import ORACLE_NETWORK_NOTE
from redolab.core.units import format_duration, format_named
from redolab.redo.analytics import Analysis, analyze, summed_pieces, time_weighted_percentile, too_few_for
from redolab.redo.dedupe import unique
from redolab.redo.schemas import RedoInterval
from redolab.redo.windows import Segment, Window, coverage, intersect, peak_windows

# kind of row -> (rank, statistic); lower rank is finer
STATISTICS = {
    "log": (0, "per-log rate"),
    "period": (1, "period volume"),
    "rate": (2, "SYSMETRIC average"),
    "snapshot": (2, "AWR snapshot average"),
    "profile": (3, "hour-of-day profile maximum"),
}
MIN_GAP_SECONDS = 3600.0  # pieces further apart than this (and 2 x the usual interval) start a new span


@dataclass(frozen=True)
class ImportSeries:
    """One import's rows, as the plan reads them."""

    id: int
    filename: str
    intervals: list[RedoInterval]
    source: str = ""  # the import's kind (archived-log, db2-log-counters, ...): names the statistic

    @property
    def label(self) -> str:
        return f"import #{self.id} ({self.filename})"


@dataclass(frozen=True)
class Basis:
    """Where a figure comes from: which imports, which statistic, which period, how often sampled."""

    statistic: str
    imports: tuple[str, ...]
    first: datetime | None
    last: datetime | None
    interval_seconds: float | None

    def describe(self, show) -> str:
        """`show(datetime) -> str` renders a time in the database's time zone."""
        parts = [f"{self.statistic} from {', '.join(self.imports)}"]
        if self.first and self.last:
            parts.append(f"{show(self.first)} to {show(self.last)}")
        elif self.first is None:
            parts.append("no times in the data")
        if self.interval_seconds:
            parts.append(f"each over ~{format_duration(self.interval_seconds)}")
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {
            "statistic": self.statistic,
            "imports": list(self.imports),
            "first": self.first.isoformat() if self.first else None,
            "last": self.last.isoformat() if self.last else None,
            "interval_seconds": self.interval_seconds,
        }


@dataclass
class ThreadNeed:
    thread: int
    peak_bytes_per_second: float
    peak_at: datetime | None
    required_bytes_per_second: float
    basis: Basis
    replay: list[Segment] = field(default_factory=list)  # the finest series with times, for the lag replay
    replay_basis: Basis | None = None
    replay_arrays: tuple | None = field(default=None, repr=False, compare=False)  # redo.stored.StoredThreadNeed

    @property
    def timed(self) -> bool:
        """Whether the thread has a series with times (a stored one's, without reading its replay back)."""
        arrays = self.replay_arrays
        return bool(self.replay) if "replay" in self.__dict__ or arrays is None else bool(len(arrays[2]))


@dataclass
class Span:
    """A stretch of time where every timed thread has data: one summed series."""

    start: datetime
    end: datetime
    segments: list[Segment]

    @property
    def peak(self) -> tuple[float, datetime | None]:
        best = max(self.segments, key=lambda s: s[2], default=None)
        return (best[2], best[0]) if best else (0.0, None)


@dataclass
class Requirement:
    headroom_ratio: float
    threads: dict[int, ThreadNeed]
    summed_peak_bytes_per_second: float
    summed_peak_at: datetime | None
    summed_how: str  # how the summed peak was found, in words
    spans: list[Span]
    upper_bound_bytes_per_second: float | None  # sum of thread peaks when their overlap is unknown
    windows: list[Window]
    avg_redo_write_bytes: float | None
    warnings: list[str]
    used: dict[int, list[str]]  # import id -> what it is used for
    unused: dict[int, str]  # import id -> why it is not used
    analysis: Analysis  # the finest rows of every thread together (charts, heat map)
    untimed_peak: int | None = None  # the thread whose peak without times the summed peak is

    @property
    def summed_required_bytes_per_second(self) -> float:
        return self.summed_peak_bytes_per_second * (1 + self.headroom_ratio)

    @property
    def upper_bound_required_bytes_per_second(self) -> float | None:
        """The sum of the thread peaks (their overlap unknown) x (1 + headroom)."""
        bound = self.upper_bound_bytes_per_second
        return bound * (1 + self.headroom_ratio) if bound is not None else None

    def summed_percentile(self, percent: float) -> float | None:
        """Time-weighted percentile of the summed series where every thread has times (a log without one is in none)."""
        return time_weighted_percentile((piece for span in self.spans for piece in span.segments), percent)

    @property
    def percentile_basis(self) -> str:
        """What the summed percentiles are of, or why there are none, in words."""
        untimed = sorted(t for t, n in self.threads.items() if not n.timed)
        if not self.spans:
            why = f"no times for {format_named('thread', untimed)}" if untimed else "no overlap in time"
            return f"no percentiles: {why}"
        said = [too_few_for(sum(len(span.segments) for span in self.spans), (95, 99))]
        said.append("time-weighted over the timed series only, where every thread has data")
        if self.untimed_peak is not None:
            said.append(f"the peak is thread {self.untimed_peak}'s highest single rate without times, in no percentile")
        return "; ".join(filter(None, said))

    def summed_basis(self, show) -> str:
        """How the summed peak was found, with the stretches it was computed over."""
        if not self.spans or len(self.threads) == 1:
            return self.summed_how
        stretches = "; ".join(f"{show(s.start)} to {show(s.end)}" for s in self.spans[:3])
        more = f" and {len(self.spans) - 3} more" if len(self.spans) > 3 else ""
        return f"{self.summed_how} ({stretches}{more})"

    def to_json(self) -> dict:
        return {
            "headroom_ratio": self.headroom_ratio,
            "threads": [
                {
                    "thread": t.thread,
                    "peak_bytes_per_second": t.peak_bytes_per_second,
                    "peak_at": t.peak_at.isoformat() if t.peak_at else None,
                    "required_bytes_per_second": t.required_bytes_per_second,
                    "basis": t.basis.to_json(),
                    "replay_basis": t.replay_basis.to_json() if t.replay_basis else None,
                }
                for t in sorted(self.threads.values(), key=lambda t: t.thread)
            ],
            "summed": {
                "peak_bytes_per_second": self.summed_peak_bytes_per_second,
                "peak_at": self.summed_peak_at.isoformat() if self.summed_peak_at else None,
                "required_bytes_per_second": self.summed_required_bytes_per_second,
                "how": self.summed_how,
                "upper_bound_bytes_per_second": self.upper_bound_bytes_per_second,
                "upper_bound_required_bytes_per_second": self.upper_bound_required_bytes_per_second,
                "peak_without_times_thread": self.untimed_peak,
                "percentile_basis": self.percentile_basis,
                "spans": [{"start": s.start.isoformat(), "end": s.end.isoformat()} for s in self.spans],
            },
            "peak_windows": [w.to_json() for w in self.windows],
            "avg_redo_write_bytes": self.avg_redo_write_bytes,
            "imports_used": {str(k): v for k, v in self.used.items()},
            "imports_not_used": {str(k): v for k, v in self.unused.items()},
        }


DB2_STATISTICS = {
    "db2-log-counters": "Db2 capture interval average",
    "db2logscan": "db2logscan interval average",
    "db2-archive-listing": "per-log-file rate",
}


def _statistic(kind: str, intervals: list[RedoInterval], source: str = "") -> str:
    if source in DB2_STATISTICS:
        return DB2_STATISTICS[source]
    name = STATISTICS.get(kind, (2, kind))[1]
    if (
        kind == "profile"
        and intervals
        and all(
            i.peak_bytes_per_second is None
            and i.percentile_bytes_per_second is not None
            and i.rate == i.percentile_bytes_per_second
            for i in intervals
        )
    ):
        return "hour-of-day profile p95 (a percentile, not a peak: no maximum exported)"
    if kind == "rate" and any(i.peak_bytes_per_second for i in intervals):
        return "SYSMETRIC maximum"
    if kind == "period":
        typical = _typical([i.duration for i in intervals[:: max(1, len(intervals) // 10_000)] if i.duration])
        if typical and abs(typical - 86400) < 1:
            return "daily volume"
        if typical and abs(typical - 3600) < 1:
            return "hourly volume"
    return name


def _typical(values: list[float]) -> float | None:
    """The median of the positive values (of at most ~10,000 evenly spread ones: a usual interval)."""
    step = max(1, len(values) // 10_000)
    values = sorted(v for v in values[::step] if v and v > 0)
    return values[len(values) // 2] if values else None


def _basis(statistic: str, labels: list[str], rows: list[RedoInterval]) -> Basis:
    starts = [r.start for r in rows if r.start is not None]
    ends = [r.end or r.start for r in rows if r.start is not None]
    return Basis(
        statistic,
        tuple(dict.fromkeys(labels)),
        min(starts) if starts else None,
        max(ends) if ends else None,
        _typical([r.duration for r in rows[:: max(1, len(rows) // 10_000)]]),
    )


def _sum_within(series: dict[int, list[Segment]], start: datetime, end: datetime) -> list[Segment]:
    """The threads' pieces clipped to [start, end) and added up over time."""
    events: list[tuple[datetime, float]] = []
    for segments in series.values():
        for s, e, rate in segments:
            s, e = max(s, start), min(e, end)
            if s < e:
                events += [(s, rate), (e, -rate)]
    return summed_pieces(events)


@dataclass(frozen=True)
class _Part:
    """One import's rows of one kind."""

    series: ImportSeries
    kind: str
    rows: list[RedoInterval]

    @cached_property
    def _by_thread(self) -> dict[int, list[RedoInterval]]:
        by_thread: dict[int, list[RedoInterval]] = {}
        for row in self.rows:
            by_thread.setdefault(row.thread, []).append(row)
        return by_thread

    def of_thread(self, thread: int) -> _Part:
        """The part's rows of one thread (grouped once per part, when first asked, not once per thread)."""
        return _Part(self.series, self.kind, self._by_thread.get(thread, []))


@dataclass
class ThreadBasis:
    """One thread's requirement and what it was read from."""

    need: ThreadNeed
    rows: list[RedoInterval]  # the rows of its peak's basis, then those of its series over time
    ranks: set[int]  # the bases (STATISTICS ranks) those rows are of
    used: list[tuple[int, str]]  # (import id, what it is used for)


@dataclass(frozen=True)
class SummedPeak:
    """All threads' peak: of the summed series where every timed thread has data, never below a thread's."""

    bytes_per_second: float
    at: datetime | None
    how: str  # how it was found, in words
    spans: list[Span]
    upper_bound_bytes_per_second: float | None  # the sum of the thread peaks when their overlap is unknown
    interval_seconds: float | None  # the timed threads' usual sampling interval
    untimed_peak: int | None = None  # the thread whose peak without times the summed peak is


def _parts_by_rank(imports: list[ImportSeries]) -> dict[int, list[_Part]]:
    """Every import's rows, split by kind, under the rank of their statistic (lower is finer)."""
    by_rank: dict[int, list[_Part]] = {}
    for series in imports:
        kinds: dict[str, list[RedoInterval]] = {}
        for interval in series.intervals:
            kinds.setdefault(interval.kind, []).append(interval)
        for kind, rows in kinds.items():
            by_rank.setdefault(STATISTICS.get(kind, (2, kind))[0], []).append(_Part(series, kind, rows))
    return by_rank


def _statistic_of(parts: list[_Part]) -> str:
    return " and ".join(dict.fromkeys(_statistic(p.kind, p.rows, p.series.source) for p in parts))


def _thread_requirement(
    thread: int, analyses: dict[int, Analysis], by_rank: dict[int, list[_Part]], headroom_ratio: float
) -> ThreadBasis | None:
    """The thread's peak from its finest basis with a rate, and its finest series with times for the
    lag replay; None when no basis gives it a rate."""
    ranked = [(rank, a) for rank, a in sorted(analyses.items()) if thread in a.threads]
    rank, analysis = next(((r, a) for r, a in ranked if a.threads[thread].peak_bytes_per_second > 0), (None, None))
    if analysis is None:
        return None
    parts = [p for p in (part.of_thread(thread) for part in by_rank[rank]) if p.rows]
    rows = [r for p in parts for r in p.rows]
    summary, statistic = analysis.threads[thread], _statistic_of(parts)
    need = ThreadNeed(
        thread,
        summary.peak_bytes_per_second,
        summary.peak_at,
        summary.peak_bytes_per_second * (1 + headroom_ratio),
        _basis(statistic, [p.series.label for p in parts], rows),
    )
    found = ThreadBasis(need, rows, {rank}, [(p.series.id, f"thread {thread} peak ({statistic})") for p in parts])
    timed = next(((r, a) for r, a in ranked if a.thread_segments.get(thread)), None)
    if timed:
        _add_replay(found, timed, by_rank, headroom_ratio, peak_rank=rank)
    return found


def _add_replay(
    found: ThreadBasis,
    timed: tuple[int, Analysis],
    by_rank: dict[int, list[_Part]],
    headroom_ratio: float,
    *,
    peak_rank: int,
) -> None:
    """The thread's finest series with times (`timed`: its rank and analysis), for the lag replay."""
    need, (replay_rank, replay_analysis) = found.need, timed
    need.replay = replay_analysis.thread_segments[need.thread]
    parts = [part.of_thread(need.thread) for part in by_rank[replay_rank]]
    parts = [_Part(p.series, p.kind, [r for r in p.rows if r.start is not None and r.end is not None]) for p in parts]
    parts = [p for p in parts if p.rows]
    statistic = _statistic_of(parts).replace("SYSMETRIC maximum", "SYSMETRIC average")
    need.replay_basis = _basis(statistic, [p.series.label for p in parts], [r for p in parts for r in p.rows])
    if replay_rank != peak_rank:
        found.used += [(p.series.id, f"thread {need.thread} series over time") for p in parts]
        found.rows += [r for p in parts for r in p.rows]
        found.ranks.add(replay_rank)
    fastest = max(need.replay, key=lambda s: s[2])
    if fastest[2] > need.peak_bytes_per_second:
        # the series over time runs faster than the peak's basis (another period, or overlapping
        # rows adding up): the requirement covers it, so no replay can outrun a passing stream
        need.peak_bytes_per_second, need.peak_at, need.basis = fastest[2], fastest[0], need.replay_basis
        need.required_bytes_per_second = fastest[2] * (1 + headroom_ratio)


def _overlap(timed: dict[int, list[Segment]], thread_count: int) -> tuple[list[Span], float | None]:
    """The summed series over the stretches where every timed thread has data, and the usual interval."""
    interval = _typical([(e - s).total_seconds() for segs in timed.values() for s, e, _ in segs])
    tolerance = max(MIN_GAP_SECONDS, 2 * (interval or 0))
    covered = [coverage(segments, tolerance) for segments in timed.values()]
    overlap = covered[0] if covered else []
    for other in covered[1:]:
        overlap = intersect(overlap, other)
    if thread_count > 1 and len(timed) < 2:
        overlap = []  # one thread's times say nothing about when the others peak
    spans = [Span(s, e, _sum_within(timed, s, e)) for s, e in overlap]
    return [s for s in spans if s.segments], interval


def _summed(threads: dict[int, ThreadNeed], analyses: dict[int, Analysis]) -> SummedPeak:
    timed = {t: n.replay for t, n in threads.items() if n.replay}
    spans, interval = _overlap(timed, len(threads))
    largest = max(threads.values(), key=lambda t: t.peak_bytes_per_second)
    upper_bound = None
    if len(threads) == 1:
        how = f"one thread: its peak ({largest.basis.statistic})"
        summed, at = largest.peak_bytes_per_second, largest.peak_at
    elif not spans:
        upper_bound = sum(t.peak_bytes_per_second for t in threads.values())
        how = _unknown_overlap(threads, timed, largest)
        summed, at = largest.peak_bytes_per_second, largest.peak_at
    else:
        how = (
            f"peak of threads {', '.join(map(str, sorted(timed)))} added over time, over {len(spans)} stretch"
            f"{'es' if len(spans) > 1 else ''} where all of them have data"
        )
        summed, at = max((s.peak for s in spans), key=lambda p: p[0])
        if len(timed) < len(threads):
            upper_bound = summed + sum(t.peak_bytes_per_second for k, t in threads.items() if k not in timed)
            how += f"; no times for {format_named('thread', sorted(set(threads) - set(timed)))}"
        if largest.peak_bytes_per_second > summed:
            untimed = " without times" if largest.peak_at is None else ""
            how += (
                f"; raised to thread {largest.thread}'s own peak ({largest.basis.statistic}{untimed}), which the "
                "summed series does not reach"
            )
            summed, at = largest.peak_bytes_per_second, largest.peak_at
    profile = next((a for a in analyses.values() if a.profile), None)
    if len(threads) > 1 and all(n.basis.first is None for n in threads.values()) and profile is not None:
        peak = profile.profile_summed_peak
        if peak and peak[0] > summed:
            summed, at = peak[0], None
            how = "hour-of-day profiles: the instances' hourly maxima added per hour (an upper bound)"
    untimed = largest.thread if summed == largest.peak_bytes_per_second and largest.peak_at is None else None
    return SummedPeak(summed, at, how, spans, upper_bound, interval, untimed)


def _unknown_overlap(threads: dict[int, ThreadNeed], timed: dict, largest: ThreadNeed) -> str:
    missing = sorted(set(threads) - set(timed))
    why = (
        f"thread{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} "
        f"{'have' if len(missing) > 1 else 'has'} no times"
        if missing
        else "the threads' data do not overlap in time"
    )
    return (
        f"{why}, so when the threads peak together is unknown: the largest single thread's peak "
        f"(thread {largest.thread}, {largest.basis.statistic}{' without times' if largest.peak_at is None else ''}) "
        f"is used ({ORACLE_NETWORK_NOTE}); if they peaked together the link would need up to the sum of their peaks"
    )


def _unused(imports: list[ImportSeries], used: dict[int, list[str]], threads: dict[int, ThreadNeed]) -> dict[int, str]:
    """Why each import no figure uses is left out."""
    unused = {}
    for series in imports:
        if series.id in used:
            continue
        finer = sorted({t for t in {i.thread for i in series.intervals} if t in threads})
        unused[series.id] = (
            f"a finer basis exists for thread{'s' if len(finer) > 1 else ''} {', '.join(map(str, finer))}"
            if finer
            else "no redo rate in it"
        )
    return unused


def requirement(imports: list[ImportSeries], *, headroom_ratio: float) -> Requirement | None:
    """The requirement from the chosen imports; None when they hold no redo rate."""
    by_rank = _parts_by_rank(imports)
    analyses = {
        rank: analyze(unique((r for p in parts for r in p.rows), Counter()), headroom_ratio=headroom_ratio)
        for rank, parts in sorted(by_rank.items())
    }
    found = [
        _thread_requirement(thread, analyses, by_rank, headroom_ratio)
        for thread in sorted({t for a in analyses.values() for t in a.threads})
    ]
    found = [f for f in found if f is not None]
    if not found:
        return None
    threads = {f.need.thread: f.need for f in found}
    used: dict[int, list[str]] = {}
    for import_id, what in (entry for f in found for entry in f.used):
        used.setdefault(import_id, []).append(what)
    ranks = {rank for f in found for rank in f.ranks}
    if len(ranks) == 1:  # every thread's rows come from one basis: its analysis is the combined one
        combined = analyses[ranks.pop()]
    else:
        combined = analyze([r for f in found for r in f.rows], headroom_ratio=headroom_ratio)
    writes = analyze(
        (r for a in imports for r in a.intervals if r.writes), headroom_ratio=headroom_ratio, keep_points=False
    )
    summed = _summed(threads, analyses)
    return Requirement(
        headroom_ratio=headroom_ratio,
        threads=threads,
        summed_peak_bytes_per_second=summed.bytes_per_second,
        summed_peak_at=summed.at,
        summed_how=summed.how,
        spans=summed.spans,
        upper_bound_bytes_per_second=summed.upper_bound_bytes_per_second,
        windows=peak_windows([s.segments for s in summed.spans], summed.interval_seconds),
        avg_redo_write_bytes=writes.avg_redo_write_bytes,
        warnings=list(dict.fromkeys(combined.warnings + writes.warnings)),
        used=used,
        unused=_unused(imports, used, threads),
        analysis=combined,
        untimed_peak=summed.untimed_peak,
    )
