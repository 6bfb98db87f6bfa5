"""Load what the plan is computed from (environment, chosen redo imports, chosen runs) and build it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from redolab.core.units import byte_rate_to_mbit
from redolab.environments.models import Environment, HostRole
from redolab.planning import stored
from redolab.planning.models import StoredAnalysis
from redolab.planning.plan import DiskFact, EvidenceItem, Facts, MeasuredRun, Plan, build_plan, show_time
from redolab.planning.requirement import ImportSeries, Requirement, requirement
from redolab.redo import service as redo_service
from redolab.redo.models import RedoImport, RedoRow
from redolab.redo.schemas import RedoInterval
from redolab.runs import service as run_service

_CACHE_SIZE = 16
_cache: OrderedDict[tuple, Requirement | None] = OrderedDict()
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class Selection:
    """Which evidence the plan uses. None: the default (every import; every run except loopback ones).
    A run tagged with an excluded tag is left out; a loopback run is used only when named in `runs`."""

    imports: frozenset[int] | None = None
    runs: frozenset[int] | None = None
    exclude_tags: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, *, chosen: bool, imports, runs, exclude_tags=()) -> Selection:
        """From a form or a query: when `chosen` the lists are complete (nothing ticked: nothing used)."""
        return cls(
            frozenset(imports) if chosen or imports else None,
            frozenset(runs) if chosen or runs else None,
            frozenset(t for t in exclude_tags if t),
        )

    def run_choice(self, run: MeasuredRun) -> tuple[bool, str]:
        """(used, why) for one run."""
        excluded = sorted(set(run.tags) & self.exclude_tags)
        if excluded:
            return False, f"left out: tagged {', '.join(excluded)}"
        if self.runs is not None:
            if run.id in self.runs:
                return True, "chosen" + (" (loopback: this machine, not the link)" if run.loopback else "")
            return False, "not chosen"
        if run.loopback:
            return False, "not the link: both ends on this machine (loopback); tick it to use it anyway"
        return True, "used"

    @property
    def query(self) -> str:
        """The selection as the page's and the API's query string."""
        parts = []
        if self.imports is not None or self.runs is not None:
            parts.append("chosen=1")
            parts += [f"import={i}" for i in sorted(self.imports or ())]
            parts += [f"run={i}" for i in sorted(self.runs or ())]
        parts += [f"exclude_tag={t}" for t in sorted(self.exclude_tags)]
        return "&".join(parts)


def environment_facts(environment: Environment) -> Facts:
    primary = next((h for h in environment.hosts if h.role is HostRole.primary and h.data_interface), None)
    return Facts(
        platform=environment.platform.value,
        transport_mode=environment.transport_mode.value,
        database_bytes=environment.database_size_bytes,
        primary_nodes=environment.primary_rac_nodes,
        standby_nodes=environment.standby_rac_nodes,
        instantiation_goal_seconds=environment.instantiation_goal_seconds,
        headroom_percent=environment.headroom_percent,
        apply_overhead_percent=environment.apply_overhead_percent,
        link_bits_per_second=environment.link_bandwidth_bits_per_second,
        link_rtt_seconds=environment.link_rtt_seconds,
        data_interface=primary.data_interface if primary else None,
        time_zone=environment.time_zone or "UTC",
        standby_disk=_standby_disk(environment),
    )


def _standby_disk(environment: Environment) -> DiskFact | None:
    """The most recently measured standby log disk (a disk test), for the SYNC commit card."""
    from redolab.disktest.service import latest_disk

    disk, where = latest_disk(environment, HostRole.standby)
    return DiskFact(disk, where) if disk is not None else None


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


@dataclass(frozen=True)
class RedoSummary:
    """What the redo history says the link must carry: the requirement every plan card uses, with
    the analysis of all imports (percentiles, warnings), as stored. Pages read the attributes; the
    API and the CLI send `to_json()`, the keys `redolab redo analyze --json` has."""

    requirement: Requirement
    document: dict

    @property
    def p95_bytes_per_second(self) -> float | None:
        return (self.document.get("summed") or {}).get("p95_bytes_per_second")

    @property
    def p99_bytes_per_second(self) -> float | None:
        return (self.document.get("summed") or {}).get("p99_bytes_per_second")

    @property
    def warnings(self) -> list[str]:
        return self.document.get("warnings", [])

    def to_json(self) -> dict:
        return self.document

    @classmethod
    def of(cls, requirement: Requirement, analysis: dict) -> RedoSummary:
        """From a whole requirement (its summed series) and `analysis`, redo.analytics.summary_json."""
        required = requirement.summed_required_bytes_per_second
        volumes = {t["thread"]: t.get("bytes") for t in analysis.get("threads", [])}
        peak_at = requirement.summed_peak_at
        return cls(requirement, {
            **analysis,
            "threads": [
                {
                    "thread": t.thread,
                    "peak_bytes_per_second": t.peak_bytes_per_second,
                    "peak_at": t.peak_at.isoformat() if t.peak_at else None,
                    "required_bytes_per_second": t.required_bytes_per_second,
                    "bytes": volumes.get(t.thread),
                    "basis": t.basis.to_json(),
                }
                for t in sorted(requirement.threads.values(), key=lambda t: t.thread)
            ],
            "summed": {
                "peak_bytes_per_second": requirement.summed_peak_bytes_per_second,
                "peak_at": peak_at.isoformat() if peak_at else None,
                "p95_bytes_per_second": requirement.summed_percentile(95),
                "p99_bytes_per_second": requirement.summed_percentile(99),
                "how": requirement.summed_how,
                "peak_windows": requirement.to_json()["peak_windows"],
            },
            "required_bytes_per_second": required,
            "required_mbit_per_second": byte_rate_to_mbit(required),
            "requirement": requirement.to_json(),
        })  # fmt: skip


def redo_summary(
    *, session: Session, environment: Environment, row: StoredAnalysis | None = None
) -> RedoSummary | None:
    """The stored summary of the environment's redo history, or None before any import gave a requirement."""
    row = row or current_analysis(session=session, environment=environment)
    req = stored.stored_requirement(row) if row is not None else None
    return RedoSummary(requirement=req, document=row.summary or {}) if req is not None else None


def history_charts(row: StoredAnalysis) -> stored.HistoryCharts | None:
    """The History charts' stored data (downsampled), or None when the imports gave no requirement."""
    return stored.HistoryCharts.from_json(row.charts) if row.charts is not None else None


def _import_period(record: RedoImport, zone: str) -> str:
    if record.first_time and record.last_time:
        return f"{show_time(record.first_time, zone)} to {show_time(record.last_time, zone)}"
    return "no times (per-log durations or a profile)"


def environment_plan(*, session: Session, environment: Environment, selection: Selection | None = None) -> Plan:
    """The plan from the chosen evidence (by default every import and every run over the link)."""
    selection = selection or Selection()
    zone = environment.time_zone or "UTC"
    imports = redo_service.list_imports(session=session, environment=environment)
    chosen_imports = [i for i in imports if selection.imports is None or i.id in selection.imports]
    req = environment_requirement(session=session, environment=environment, imports=chosen_imports)
    runs = run_service.measured_runs(session=session, environment=environment)
    chosen_runs, evidence = [], []
    for record in sorted(imports, key=lambda i: i.id):
        chosen = record in chosen_imports
        if not chosen:
            note = "not chosen"
        elif req is None:
            note = "no redo rate in it"
        elif record.id in req.used:
            note = "used for " + "; ".join(req.used[record.id])
        else:
            note = "not used: " + req.unused.get(record.id, "no redo rate in it")
        evidence.append(
            EvidenceItem("import", record.id, f"import #{record.id} ({record.filename})",
                         _import_period(record, zone), chosen, note)
        )  # fmt: skip
    for run in sorted(runs, key=lambda r: r.id):
        used, why = selection.run_choice(run)
        if used:
            chosen_runs.append(run)
        what = f"{run.mode.upper()}, {run.conns} conn{'s' if run.conns > 1 else ''}, {run.origin}"
        if run.label:
            what += f", {run.label}"
        if run.tags:
            what += f", tags {', '.join(run.tags)}"
        evidence.append(
            EvidenceItem("run", run.id, f"run #{run.id} ({what})", show_time(run.created_at, zone), used, why, run.tags)
        )
    no_history = None
    if imports and not chosen_imports:
        no_history = "no redo import is chosen: tick one in the evidence list (or use the default evidence)"
    elif chosen_imports and req is None:
        no_history = "the chosen imports hold no redo rate (see how each was read on the imports list)"
    facts = environment_facts(environment)
    if environment.platform.value == "hadr":
        from redolab.hadr.service import hadr_settings

        facts = replace(facts, **hadr_settings(session=session, environment=environment, requirement=req))
    return build_plan(facts=facts, requirement=req, runs=chosen_runs, evidence=evidence, no_history=no_history)
