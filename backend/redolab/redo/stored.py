"""The redo analysis of all of an environment's imports, computed once when the imports change and
stored, so no page reads the rows: the summary the History section and the API show, the series its
charts draw (downsampled, peaks kept) and the requirement the plan is built from.

A stored analysis carries the signature of what it was computed from (the imports, the headroom,
the time zone, this module's FORMAT); one that does not match is computed again and replaced. These are
its stored forms; readers read them typed through redo.analysis.stored_analysis, never here."""

from __future__ import annotations

import gc
import hashlib
import pickle
import zlib
from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy.orm import Session

from redolab.core.db import utcnow
from redolab.core.downsample import HISTORY_POINTS, keep_indices
from redolab.core.units import wall_clock
from redolab.environments.models import Environment
from redolab.redo.analytics import Analysis
from redolab.redo.models import RedoImport, StoredAnalysis
from redolab.redo.requirement import Requirement, ThreadNeed
from redolab.redo.windows import series_arrays, series_segments

# Bump when Requirement, Analysis or the chart data change shape or module (pickles name their
# classes' modules: 2 since the requirement moved from planning/ to redo/; 3: the requirement names a
# summed peak without times and the percentiles' basis; 4: each thread's replay also as arrays):
# stored ones are recomputed; 5: a weekday x hour cell without data is None, not 0 bytes/s.
FORMAT = 5
HISTOGRAM_BINS = 40
WEEK_HOURS = 7 * 24


def signature(environment: Environment, imports: list[RedoImport]) -> str:
    """What a stored analysis was computed from: a different one means it is out of date."""
    parts = [f"format {FORMAT}", f"headroom {environment.headroom_percent!r}", f"zone {environment.time_zone}"]
    parts += [f"import {i.id} {i.sha256}" for i in sorted(imports, key=lambda i: i.id)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# -- the charts' data ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Span:
    start: datetime
    end: datetime
    segments: list[tuple[datetime, datetime, float]]  # (start, end, bytes/s), downsampled


@dataclass(frozen=True)
class HistoryCharts:
    """What the History charts draw: at most HISTORY_POINTS per line (MinMaxLTTB), the weekday x hour
    maxima, the rate histogram and the hour-of-day profile. Small enough to store and read per page."""

    points: dict[int, list[tuple[datetime, float]]]  # thread -> (start, bytes/s)
    spans: list[Span]  # the summed series where the threads overlap
    heatmap: list[list[float | None]] | None  # 7 weekdays x 24 hours, highest summed bytes/s (None: no data)
    histogram: tuple[list[float], list[int]] | None  # bin edges (bytes/s), counts per bin
    profile: dict[int, dict[int, tuple[float | None, float | None, float | None]]]
    point_count: int  # rows the points were chosen from

    def to_json(self) -> dict:
        return {
            "points": {str(t): [[p[0].timestamp(), p[1]] for p in points] for t, points in self.points.items()},
            "spans": [
                {
                    "start": s.start.timestamp(),
                    "end": s.end.timestamp(),
                    "segments": [[a.timestamp(), b.timestamp(), r] for a, b, r in s.segments],
                }
                for s in self.spans
            ],
            "heatmap": self.heatmap,
            "histogram": {"edges": self.histogram[0], "counts": self.histogram[1]} if self.histogram else None,
            "profile": {str(h): {str(t): list(v) for t, v in threads.items()} for h, threads in self.profile.items()},
            "point_count": self.point_count,
        }

    @classmethod
    def from_json(cls, data: dict) -> HistoryCharts:
        moment = _moment
        histogram = data.get("histogram")
        return cls(
            points={int(t): [(moment(e), r) for e, r in points] for t, points in data["points"].items()},
            spans=[
                Span(moment(s["start"]), moment(s["end"]), [(moment(a), moment(b), r) for a, b, r in s["segments"]])
                for s in data["spans"]
            ],
            heatmap=data.get("heatmap"),
            histogram=(histogram["edges"], histogram["counts"]) if histogram else None,
            profile={int(h): {int(t): tuple(v) for t, v in threads.items()} for h, threads in data["profile"].items()},
            point_count=data.get("point_count", 0),
        )


def _moment(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def _thinned_steps(segments: list[tuple[datetime, datetime, float]]) -> list[tuple[datetime, datetime, float]]:
    if len(segments) <= HISTORY_POINTS:
        return list(segments)
    indices = keep_indices([s[0].timestamp() for s in segments], [s[2] for s in segments], HISTORY_POINTS)
    return [segments[i] for i in indices]


def heatmap_cells(segments: list[tuple[datetime, datetime, float]], zone: str) -> list[list[float | None]] | None:
    """The highest summed rate in each weekday x hour of the database's clock, bytes/s; None where no
    piece of history falls (no data is not 0 bytes/s). A piece longer than a week covers every cell,
    so no piece is walked for more than a week of hours."""
    if not segments:
        return None

    cells: list[list[float | None]] = [[None] * 24 for _ in range(7)]
    for start, end, rate in segments:
        start, end = wall_clock(start, zone), wall_clock(end, zone)
        hour = start.replace(minute=0, second=0, microsecond=0)
        for _ in range(WEEK_HOURS + 1):
            if hour >= end:
                break
            cell = cells[hour.weekday()]
            cell[hour.hour] = rate if cell[hour.hour] is None else max(cell[hour.hour], rate)
            hour += timedelta(hours=1)
    return cells


def rate_histogram(analysis: Analysis) -> tuple[list[float], list[int]] | None:
    rates = np.fromiter((p[1] for points in analysis.points.values() for p in points), float)
    if not rates.size:
        return None
    counts, edges = np.histogram(rates, bins=HISTOGRAM_BINS)
    return [float(e) for e in edges], [int(c) for c in counts]


def history_charts(requirement: Requirement, zone: str) -> HistoryCharts:
    analysis = requirement.analysis
    points = {}
    for thread, series in analysis.points.items():
        series = sorted(series)
        indices = keep_indices([p[0].timestamp() for p in series], [p[1] for p in series], HISTORY_POINTS)
        points[thread] = [series[i] for i in indices]
    spans = [Span(s.start, s.end, _thinned_steps(s.segments)) for s in requirement.spans]
    return HistoryCharts(
        points=points,
        spans=spans,
        heatmap=heatmap_cells(analysis.segments, zone),
        histogram=rate_histogram(analysis),
        profile=analysis.profile,
        point_count=sum(len(p) for p in analysis.points.values()),
    )


# -- storing and reading ---------------------------------------------------------------------------
@dataclass
class StoredThreadNeed(ThreadNeed):
    """A thread's need as stored: pickled without the replay's datetimes, which its arrays stand for and
    are made again from when first read (a year of per-minute pieces on 8 threads took 2.9 s to unpickle
    on every cold plan; the link for the RPO reads the arrays only)."""

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("replay", None)
        return state

    def __getattr__(self, name: str):
        arrays = self.__dict__.get("replay_arrays")
        if name != "replay" or arrays is None:
            raise AttributeError(name)
        self.replay = series_segments(*arrays)
        return self.replay


def stored_need(need: ThreadNeed) -> StoredThreadNeed:
    fields = {f.name: getattr(need, f.name) for f in dataclass_fields(ThreadNeed)}
    return StoredThreadNeed(**{**fields, "replay_arrays": series_arrays(need.replay)})


def slim(requirement: Requirement) -> Requirement:
    """The requirement as the plan reads it: each thread's replay series kept whole (the lag replay
    needs every log) and as arrays (the link for the RPO reads those), the chart-only series left out
    (the charts have their own, downsampled)."""
    analysis = requirement.analysis
    if analysis is not None:
        analysis = replace(analysis, segments=[], points={}, thread_segments={}, durations=[])
    threads = {t: stored_need(n) for t, n in requirement.threads.items()}
    spans = [replace(s, segments=[]) for s in requirement.spans]
    return replace(requirement, analysis=analysis, threads=threads, spans=spans)


def requirement_blob(requirement: Requirement) -> bytes:
    """The stored form of the requirement (unpickled_requirement reads it back)."""
    return zlib.compress(pickle.dumps(slim(requirement), protocol=pickle.HIGHEST_PROTOCOL), 1)


def store(
    *,
    session: Session,
    environment: Environment,
    key: str,
    requirement: Requirement | None,
    summary: dict | None,
    commit: bool = True,
) -> StoredAnalysis:
    """Keep the analysis; `requirement` None: the imports give no redo rate."""
    row = session.get(StoredAnalysis, environment.id)
    if row is None:
        row = StoredAnalysis(environment_id=environment.id)
        session.add(row)
    row.signature, row.computed_at, row.summary = key, utcnow(), summary
    if requirement is None:
        row.charts, row.requirement = None, None
    else:
        row.charts = history_charts(requirement, environment.time_zone or "UTC").to_json()
        row.requirement = requirement_blob(requirement)
    if commit:
        session.commit()
    return row


def unpickled_requirement(blob: bytes) -> Requirement:
    """The requirement as store() kept it (a year of logs: ~0.1 s; redo.analysis caches what it reads)."""
    # our own bytes, written by store() above into our own database: not input from a user
    requirement = pickle.loads(zlib.decompress(blob))  # noqa: S301
    # A year of logs is ~400,000 small objects that live as long as the cache keeps them: left to the
    # collector, each full collection walks them all (150 ms pauses on a page now and then).
    gc.freeze()
    return requirement
