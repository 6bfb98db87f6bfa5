"""The environment's redo requirement and stored analysis: every import analysed together once per
change (stored), or the chosen imports' requirement (cached per process). Pure redo history: the
plan reads it, it reads nothing of the plan."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from redolab.core.units import byte_rate_to_mbit
from redolab.environments.models import Environment
from redolab.redo import service as redo_service
from redolab.redo import stored
from redolab.redo.models import RedoImport, RedoRow, StoredAnalysis
from redolab.redo.requirement import Basis, ImportSeries, Requirement, Window, requirement
from redolab.redo.schemas import RedoInterval

_CACHE_SIZE = 16
_cache: OrderedDict[tuple, Requirement | None] = OrderedDict()
_cache_lock = threading.Lock()


def import_series(*, session: Session, imports: list[RedoImport]) -> list[ImportSeries]:
    """The chosen imports' rows, one list per import (in import order)."""
    if not imports:
        return []
    query = (
        select(RedoRow.import_id, *redo_service.STORED_COLUMNS)
        .where(RedoRow.import_id.in_([i.id for i in imports]))
        .order_by(RedoRow.import_id, RedoRow.id)
    )
    rows: dict[int, list[RedoInterval]] = {i.id: [] for i in imports}
    for r in session.execute(query).yield_per(10_000):
        rows[r.import_id].append(redo_service.stored_interval(r))
    return [ImportSeries(i.id, i.filename, rows[i.id], i.kind) for i in imports]


def environment_requirement(
    *, session: Session, environment: Environment, imports: list[RedoImport]
) -> Requirement | None:
    """The requirement from the chosen imports. Every import (the default evidence): the stored
    analysis. Another choice: computed from their rows, cached in this process until the choice,
    the imports or the headroom change."""
    every = redo_service.list_imports(session=session, environment=environment)
    if {i.id for i in imports} == {i.id for i in every}:
        row = current_analysis(session=session, environment=environment, imports=every)
        return stored.stored_requirement(row) if row is not None else None
    key = (environment.id, tuple((i.id, i.sha256) for i in imports), environment.headroom_percent)
    with _cache_lock:  # requests run in threads: another may evict the key between a test and a read
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    series = import_series(session=session, imports=imports)
    result = requirement(series, headroom_ratio=environment.headroom_percent / 100)
    with _cache_lock:
        _cache[key] = result
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return result


def default_requirement(*, session: Session, environment: Environment, imports=None) -> Requirement | None:
    """The requirement from every import (the plan's default evidence)."""
    if imports is None:
        imports = redo_service.list_imports(session=session, environment=environment)
    return environment_requirement(session=session, environment=environment, imports=imports)


def refresh_analysis(
    *, session: Session, environment: Environment, imports=None, commit: bool = True
) -> StoredAnalysis | None:
    """Analyse every import of the environment (or `imports`: those and one about to be shown) and
    store the result; None, with any stored analysis removed, when there is no import."""
    if imports is None:
        imports = redo_service.list_imports(session=session, environment=environment)
    key = stored.signature(environment, imports)
    if not imports:
        session.execute(delete(StoredAnalysis).where(StoredAnalysis.environment_id == environment.id))
        if commit:
            session.commit()
        return None
    series = import_series(session=session, imports=imports)
    req = requirement(series, headroom_ratio=environment.headroom_percent / 100)
    rows = (interval for part in series for interval in part.intervals)  # read once, for both
    analysis = redo_service.environment_analysis(
        session=session, environment=environment, imports=imports, intervals=rows
    )
    if req is not None:
        summary = RedoSummary.of(req, analysis[1] if analysis else {}).to_json()
    else:
        summary = analysis[1] if analysis else None
    return stored.store(
        session=session, environment=environment, key=key, requirement=req, summary=summary, commit=commit
    )


def current_analysis(*, session: Session, environment: Environment, imports=None) -> StoredAnalysis | None:
    """The stored analysis of every import; computed now (and stored) when there is none yet or it
    is out of date (an environment from before stored analyses, or its headroom or zone changed)."""
    if imports is None:
        imports = redo_service.list_imports(session=session, environment=environment)
    if not imports:
        return None
    row = session.get(StoredAnalysis, environment.id)
    if row is not None and row.signature == stored.signature(environment, imports):
        return row
    return refresh_analysis(session=session, environment=environment, imports=imports)


# summary_json's keys in its order, with "requirement" last: the typed figures are written back in place
_LAYOUT = (
    "format", "rows_read", "unique_logs", "dropped", "threads", "summed", "headroom_ratio",
    "peak_bytes_per_second", "required_bytes_per_second", "required_mbit_per_second", "avg_redo_write_bytes",
    "profile", "warnings", "notes", "ignored_columns", "files_used", "files_skipped", "requirement",
)  # fmt: skip
_TYPED = frozenset({"threads", "summed", "peak_bytes_per_second", "required_bytes_per_second",
                    "required_mbit_per_second", "requirement"})  # fmt: skip


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


@dataclass(frozen=True)
class ThreadFigures:
    """One thread's requirement as the History section and the analytics API give it."""

    thread: int
    peak_bytes_per_second: float
    peak_at: datetime | None
    required_bytes_per_second: float
    bytes: float | None  # the thread's redo over the whole history
    basis: Basis | None  # None in a summary stored before figures named their basis

    def to_json(self) -> dict:
        return {
            "thread": self.thread,
            "peak_bytes_per_second": self.peak_bytes_per_second,
            "peak_at": _iso(self.peak_at),
            "required_bytes_per_second": self.required_bytes_per_second,
            "bytes": self.bytes,
            "basis": self.basis.to_json() if self.basis else None,
        }

    @classmethod
    def from_json(cls, data: dict) -> ThreadFigures:
        basis = data.get("basis")
        if basis is not None:
            basis = Basis(basis["statistic"], tuple(basis["imports"]), _time(basis["first"]), _time(basis["last"]),
                          basis["interval_seconds"])  # fmt: skip
        return cls(data["thread"], data["peak_bytes_per_second"], _time(data.get("peak_at")),
                   data["required_bytes_per_second"], data.get("bytes"), basis)  # fmt: skip


@dataclass(frozen=True)
class SummedFigures:
    """All threads together: the summed series' peak and percentiles, and its highest windows."""

    peak_bytes_per_second: float
    peak_at: datetime | None
    p95_bytes_per_second: float | None
    p99_bytes_per_second: float | None
    how: str | None  # how the peak was found, in words
    peak_windows: tuple[Window, ...]
    percentile_basis: str | None = None  # what p95 and p99 are of (timed series only), or why there are none
    upper_bound_required_bytes_per_second: float | None = None  # every thread peaking at once, with headroom

    def to_json(self) -> dict:
        return {
            "peak_bytes_per_second": self.peak_bytes_per_second,
            "peak_at": _iso(self.peak_at),
            "p95_bytes_per_second": self.p95_bytes_per_second,
            "p99_bytes_per_second": self.p99_bytes_per_second,
            "percentile_basis": self.percentile_basis,
            "upper_bound_required_bytes_per_second": self.upper_bound_required_bytes_per_second,
            "how": self.how,
            "peak_windows": [w.to_json() for w in self.peak_windows],
        }

    @classmethod
    def from_json(cls, data: dict) -> SummedFigures:
        windows = tuple(
            Window(w["minutes"], w["bytes_per_second"], _time(w["start"]), w["reason"] or "")
            for w in data.get("peak_windows") or []
        )
        return cls(data["peak_bytes_per_second"], _time(data.get("peak_at")), data.get("p95_bytes_per_second"),
                   data.get("p99_bytes_per_second"), data.get("how"), windows, data.get("percentile_basis"),
                   data.get("upper_bound_required_bytes_per_second"))  # fmt: skip


@dataclass(frozen=True)
class RedoSummary:
    """What the redo history says the link must carry: the requirement every plan card uses, with
    the analysis of all imports (percentiles, warnings), as stored. Pages read the attributes; the
    API and the CLI send `to_json()`, the keys `redolab redo analyze --json` has."""

    requirement: Requirement
    threads: tuple[ThreadFigures, ...]
    summed: SummedFigures | None
    required_bytes_per_second: float | None
    history: dict  # the rest of summary_json (format, rows read, drops, profile, warnings, notes), sent as it is

    @property
    def required_mbit_per_second(self) -> float | None:
        required = self.required_bytes_per_second
        return byte_rate_to_mbit(required) if required is not None else None

    @property
    def p95_bytes_per_second(self) -> float | None:
        return self.summed.p95_bytes_per_second if self.summed else None

    @property
    def p99_bytes_per_second(self) -> float | None:
        return self.summed.p99_bytes_per_second if self.summed else None

    @property
    def warnings(self) -> list[str]:
        return self.history.get("warnings", [])

    def to_json(self) -> dict:
        typed = {
            "threads": [t.to_json() for t in self.threads],
            "summed": self.summed.to_json() if self.summed else None,
            # the peak `required` adds headroom to: the requirement's summed peak
            "peak_bytes_per_second": self.summed.peak_bytes_per_second if self.summed else None,
            "required_bytes_per_second": self.required_bytes_per_second,
            "required_mbit_per_second": self.required_mbit_per_second,
            "requirement": self.requirement.to_json(),
        }
        document = {**self.history, **typed}
        place = {key: number for number, key in enumerate(_LAYOUT)}
        return dict(sorted(document.items(), key=lambda item: place.get(item[0], len(place))))

    @classmethod
    def of(cls, requirement: Requirement, analysis: dict) -> RedoSummary:
        """From a whole requirement (its summed series) and `analysis`, redo.analytics.summary_json."""
        volumes = {t["thread"]: t.get("bytes") for t in analysis.get("threads", [])}
        threads = tuple(
            ThreadFigures(t.thread, t.peak_bytes_per_second, t.peak_at, t.required_bytes_per_second,
                          volumes.get(t.thread), t.basis)
            for t in sorted(requirement.threads.values(), key=lambda t: t.thread)
        )  # fmt: skip
        summed = SummedFigures(
            requirement.summed_peak_bytes_per_second,
            requirement.summed_peak_at,
            requirement.summed_percentile(95),
            requirement.summed_percentile(99),
            requirement.summed_how,
            tuple(requirement.windows),
            requirement.percentile_basis,
            requirement.upper_bound_required_bytes_per_second,
        )
        history = {k: v for k, v in analysis.items() if k not in _TYPED}
        return cls(requirement, threads, summed, requirement.summed_required_bytes_per_second, history)

    @classmethod
    def from_json(cls, requirement: Requirement, document: dict) -> RedoSummary:
        """As stored (`to_json()`), with the stored requirement."""
        summed = document.get("summed")
        return cls(
            requirement,
            tuple(ThreadFigures.from_json(t) for t in document.get("threads") or []),
            SummedFigures.from_json(summed) if summed else None,
            document.get("required_bytes_per_second"),
            {k: v for k, v in document.items() if k not in _TYPED},
        )


def redo_summary(
    *, session: Session, environment: Environment, row: StoredAnalysis | None = None
) -> RedoSummary | None:
    """The stored summary of the environment's redo history, or None before any import gave a requirement."""
    row = row or current_analysis(session=session, environment=environment)
    req = stored.stored_requirement(row) if row is not None else None
    return RedoSummary.from_json(req, row.summary or {}) if req is not None else None


def history_charts(row: StoredAnalysis) -> stored.HistoryCharts | None:
    """The History charts' stored data (downsampled), or None when the imports gave no requirement."""
    return stored.HistoryCharts.from_json(row.charts) if row.charts is not None else None
