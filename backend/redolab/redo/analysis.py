"""The environment's stored redo analysis, from an import to what a page reads, top to bottom: the
summary's typed figures; the writer (every import analysed together once per change, in the
transaction that shows the import); and the one way to read it, `stored_analysis`, with the one
cache. Pure redo history: the plan reads it, it reads nothing of the plan."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection
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

# -- the summary's typed figures -------------------------------------------------------------------
# summary_json's keys in its order, with "requirement" last: the typed figures are written back in place
_LAYOUT = (
    "format",
    "rows_read",
    "unique_logs",
    "dropped",
    "threads",
    "summed",
    "headroom_ratio",
    "peak_bytes_per_second",
    "required_bytes_per_second",
    "required_mbit_per_second",
    "avg_redo_write_bytes",
    "profile",
    "warnings",
    "notes",
    "ignored_columns",
    "files_used",
    "files_skipped",
    "requirement",
)
_TYPED = frozenset(
    {
        "threads",
        "summed",
        "peak_bytes_per_second",
        "required_bytes_per_second",
        "required_mbit_per_second",
        "requirement",
    }
)


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
            basis = Basis(
                basis["statistic"],
                tuple(basis["imports"]),
                _time(basis["first"]),
                _time(basis["last"]),
                basis["interval_seconds"],
            )
        return cls(
            data["thread"],
            data["peak_bytes_per_second"],
            _time(data.get("peak_at")),
            data["required_bytes_per_second"],
            data.get("bytes"),
            basis,
        )


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
        return cls(
            data["peak_bytes_per_second"],
            _time(data.get("peak_at")),
            data.get("p95_bytes_per_second"),
            data.get("p99_bytes_per_second"),
            data.get("how"),
            windows,
            data.get("percentile_basis"),
            data.get("upper_bound_required_bytes_per_second"),
        )


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
            ThreadFigures(
                t.thread,
                t.peak_bytes_per_second,
                t.peak_at,
                t.required_bytes_per_second,
                volumes.get(t.thread),
                t.basis,
            )
            for t in sorted(requirement.threads.values(), key=lambda t: t.thread)
        )
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


# -- writing: once per change of the imports, the headroom or the time zone -------------------------
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


# -- reading: one accessor, one cache --------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RedoAnalysis:
    """What every page, card, chart and rehearsal reads of an environment's redo history: the stored
    analysis of every import, or the requirement of the imports the plan's evidence chooses (computed
    from their rows). Compared by identity: a reader that draws or replays it keeps what it made beside
    this object (weakly), so that lives exactly as long as the cache keeps the analysis."""

    environment_id: int
    chosen: frozenset[int] | None  # the imports it is of; None: every import (the stored analysis)
    mark: tuple[str, datetime]  # the stored analysis's signature and when it was computed: the change mark
    requirement: Requirement | None  # None: the imports hold no redo rate
    summary: RedoSummary | None  # every import with a redo rate (the History section, the watches); else None
    document: dict | None  # the summary as stored, which the API sends as it is (every import); never changed
    charts: stored.HistoryCharts | None  # the History charts' data, downsampled (every import with a redo rate)


_KEPT = 32  # analyses kept, every environment's and choice's together (a year of logs: ~400,000 objects each)
_kept: OrderedDict[tuple, RedoAnalysis] = OrderedDict()
_kept_lock = threading.Lock()


def stored_analysis(
    *, session: Session, environment: Environment, chosen: Collection[int] | None = None
) -> RedoAnalysis | None:
    """The redo analysis of every import (`chosen` None), or of the chosen imports' ids; None when the
    environment has no import. Kept in this process per environment, choice and change mark: a new
    or deleted import, a new headroom or zone stores a new analysis (another mark), so no reader sees
    an old one, in this process or another. A stored analysis out of date (from before stored
    analyses, or its headroom or zone changed) is computed and stored first. One call per request:
    pass the answer down rather than asking again."""
    imports = redo_service.list_imports(session=session, environment=environment)
    if not imports:
        return None
    every = frozenset(i.id for i in imports)
    choice = None if chosen is None or every <= set(chosen) else every & frozenset(chosen)
    mark = _current_mark(session=session, environment=environment, imports=imports)
    key = (environment.id, choice, mark)
    with _kept_lock:  # requests run in threads: another may evict the key between a test and a read
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    if choice is None:
        found = _read_stored(session=session, environment=environment)
    else:
        series = import_series(session=session, imports=[i for i in imports if i.id in choice])
        req = requirement(series, headroom_ratio=environment.headroom_percent / 100)
        found = RedoAnalysis(environment.id, choice, mark, req, None, None, None)
    with _kept_lock:
        _kept[(environment.id, choice, found.mark)] = found
        while len(_kept) > _KEPT:
            _kept.popitem(last=False)
    return found


def _current_mark(*, session: Session, environment: Environment, imports: list[RedoImport]) -> tuple[str, datetime]:
    """The stored analysis's change mark, read without its contents; stored anew first when it is not
    of `imports` with this headroom and zone."""
    row = session.execute(
        select(StoredAnalysis.signature, StoredAnalysis.computed_at).where(
            StoredAnalysis.environment_id == environment.id
        )
    ).first()
    if row is not None and row.signature == stored.signature(environment, imports):
        return row.signature, row.computed_at
    written = refresh_analysis(session=session, environment=environment, imports=imports)
    return written.signature, written.computed_at


def _read_stored(*, session: Session, environment: Environment) -> RedoAnalysis:
    """The stored analysis whole, its three stored forms typed (the summary JSON, the charts' JSON, the
    requirement's pickle): ~0.1 s for a year of logs, so only when the cache has not got it. Its mark
    is read with it: an analysis stored meanwhile by another process is kept under its own mark."""
    columns = (StoredAnalysis.signature, StoredAnalysis.computed_at, StoredAnalysis.summary, StoredAnalysis.charts)
    row = session.execute(
        select(*columns, StoredAnalysis.requirement).where(StoredAnalysis.environment_id == environment.id)
    ).one()
    req = stored.unpickled_requirement(row.requirement) if row.requirement is not None else None
    summary = RedoSummary.from_json(req, row.summary or {}) if req is not None else None
    charts = stored.HistoryCharts.from_json(row.charts) if row.charts is not None else None
    return RedoAnalysis(environment.id, None, (row.signature, row.computed_at), req, summary, row.summary, charts)
