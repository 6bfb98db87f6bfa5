"""Load what the plan is computed from (environment, chosen redo imports, chosen runs) and build it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlalchemy.orm import Session

from redolab.disktest.service import latest_disk
from redolab.environments.models import Environment, HostRole
from redolab.hadr.service import hadr_settings
from redolab.planning.card import show_time
from redolab.planning.facts import DiskFact, Facts
from redolab.planning.plan import EvidenceItem, Plan, build_plan
from redolab.redo import service as redo_service
from redolab.redo.analysis import environment_requirement
from redolab.redo.models import RedoImport
from redolab.runs import service as run_service
from redolab.runs.measured import MeasuredRun


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
    disk, where = latest_disk(environment, HostRole.standby)
    return DiskFact(disk, where) if disk is not None else None


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
        facts = replace(facts, **hadr_settings(session=session, environment=environment, requirement=req))
    return build_plan(facts=facts, requirement=req, runs=chosen_runs, evidence=evidence, no_history=no_history)
