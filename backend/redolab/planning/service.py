"""Load what the plan is computed from (environment, chosen redo imports, chosen runs) and build it."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redolab.core.units import format_duration
from redolab.disktest.service import latest_disk
from redolab.environments.models import Environment, HostRole, HostTransport
from redolab.environments.releases import stored_release
from redolab.hadr.service import hadr_pairs, hadr_settings
from redolab.planning.card import show_time
from redolab.planning.compression import stored_compression, with_compression
from redolab.planning.facts import Capacity, DiskFact, Excluded, Facts, Measurements
from redolab.planning.host_facts import copy_settings, hadr_replay, host_ceilings, host_kernels
from redolab.planning.plan import DestinationCards, EvidenceItem, Plan, build_plan, with_topology
from redolab.planning.rehearsal_card import RehearsalFact, RehearsalOutcome, outcome
from redolab.planning.rpo_sizing import DEFAULT_OUTAGE_SECONDS, RpoSizing, default_tiers, plan_rpo_sizing
from redolab.planning.selection import Selection
from redolab.planning.topology import HopFact, SharedLinkFact, TopologyFacts, plan_topology
from redolab.preflight.service import pasted_apply_rate
from redolab.redo import service as redo_service
from redolab.redo.analysis import RedoAnalysis, stored_analysis
from redolab.redo.models import RedoImport
from redolab.rehearsals import service as rehearsal_service
from redolab.runs import service as run_service
from redolab.runs.measured import MeasuredRun
from redolab.runs.models import Run
from redolab.sweeps.clusters import at_once_rate
from redolab.sweeps.models import Cluster


def environment_facts(environment: Environment) -> Facts:
    primary = next((h for h in environment.hosts if h.role is HostRole.primary and h.data_interface), None)
    return Facts(
        platform=environment.platform.value,
        transport_mode=environment.transport_mode.value,
        database_bytes=environment.database_size_bytes,
        primary_nodes=environment.primary_rac_nodes,
        standby_nodes=environment.standby_rac_nodes,
        instantiation_goal_seconds=environment.instantiation_goal_seconds,
        rpo_goal_seconds=environment.rpo_goal_seconds,
        headroom_percent=environment.headroom_percent,
        apply_overhead_percent=environment.apply_overhead_percent,
        link_bits_per_second=environment.link_bandwidth_bits_per_second,
        link_rtt_seconds=environment.link_rtt_seconds,
        data_interface=primary.data_interface if primary else None,
        time_zone=environment.time_zone or "UTC",
        standby_disk=_standby_disk(environment),
        release=stored_release(environment.database_release),
        rto_goal_seconds=environment.rto_goal_seconds,
        apply_rate_bytes_per_second=environment.apply_rate_bytes_per_second,
        fast_start_failover=environment.fast_start_failover,
        copy=copy_settings(environment),
        host_ceilings=host_ceilings(environment),
        link_reserved_share=(environment.link_reserved_percent or 0.0) / 100,
    )


def _standby_disk(environment: Environment) -> DiskFact | None:
    """The most recently measured standby log disk (a disk test), for the SYNC commit card."""
    disk, where = latest_disk(environment, HostRole.standby)
    return DiskFact(disk, where) if disk is not None else None


def _import_period(record: RedoImport, zone: str) -> str:
    if record.first_time and record.last_time:
        return f"{show_time(record.first_time, zone)} to {show_time(record.last_time, zone)}"
    return "no times (per-log durations or a profile)"


def _import_evidence(record: RedoImport, chosen: bool, req, zone: str) -> EvidenceItem:
    """An import as the evidence list shows it: what it is used for, or why not."""
    if not chosen:
        note = "not chosen"
    elif req is None:
        note = "no redo rate in it"
    elif record.id in req.used:
        note = "used for " + "; ".join(req.used[record.id])
    else:
        note = "not used: " + req.unused.get(record.id, "no redo rate in it")
    label = f"import #{record.id} ({record.filename})"
    return EvidenceItem("import", record.id, label, _import_period(record, zone), chosen, note)


def _choose_runs(runs, selection: Selection, evidence: list, zone: str) -> tuple[list, list]:
    """The runs the selection keeps and those it leaves out (with why), each added to `evidence`."""
    chosen, excluded = [], []
    for run in sorted(runs, key=lambda r: r.id):
        used, why = selection.run_choice(run)
        if used:
            chosen.append(run)
        else:
            excluded.append(Excluded(run, why))
        what = f"{run.mode.upper()}, {run.conns} conn{'s' if run.conns > 1 else ''}, {run.origin}"
        if run.label:
            what += f", {run.label}"
        if run.tags:
            what += f", tags {', '.join(run.tags)}"
        evidence.append(
            EvidenceItem("run", run.id, f"run #{run.id} ({what})", "", used, why, run.tags, run.created_at, zone)
        )
    return chosen, excluded


def _plan_facts(session: Session, environment: Environment, requirement) -> Facts:
    """The environment's facts with its hosts' kernels and, for Db2 HADR, its settings and pairs."""
    facts = replace(environment_facts(environment), host_kernels=host_kernels(session=session, environment=environment))
    if environment.apply_rate_bytes_per_second is None and (pasted := pasted_apply_rate(session, environment)):
        facts = replace(facts, apply_rate_bytes_per_second=pasted[0], apply_rate_source=pasted[1])
    if environment.platform.value != "hadr":
        return facts
    facts = _with_replay(facts, environment, hadr_replay(session=session, environment=environment))
    return replace(
        facts,
        **hadr_settings(session=session, environment=environment, requirement=requirement),
        hadr_pairs=tuple(hadr_pairs(session=session, environment=environment)),
    )


def _with_replay(facts: Facts, environment: Environment, replay) -> Facts:
    """A Db2 standby's replay rate when none is entered (where replay had log waiting) and its largest gap."""
    if replay is None:
        return facts
    zone = environment.time_zone or "UTC"
    if replay.largest_gap_bytes:
        facts = replace(facts, takeover_gap=(replay.largest_gap_bytes, show_time(replay.largest_gap_at, zone)))
    if environment.apply_rate_bytes_per_second is None and replay.busy_rate_bytes_per_second:
        start, end = (show_time(moment, zone) for moment in replay.busy_between)
        said = f"db2pd captures while replay had log waiting, {start} to {end}"
        facts = replace(facts, apply_rate_bytes_per_second=replay.busy_rate_bytes_per_second, apply_rate_source=said)
    return facts


def environment_plan(
    *,
    session: Session,
    environment: Environment,
    selection: Selection | None = None,
    history: RedoAnalysis | None = None,
) -> Plan:
    """The plan from the chosen evidence (by default every import and every run over the link).
    `history`: the stored analysis of every import, when the caller has read it already (the
    environment page reads it once for all its sections); the chosen imports' is read here."""
    selection = selection or Selection()
    zone = environment.time_zone or "UTC"
    imports = redo_service.list_imports(session=session, environment=environment)
    chosen_imports = [i for i in imports if selection.imports is None or i.id in selection.imports]
    if history is None or selection.imports is not None:
        history = stored_analysis(session=session, environment=environment, chosen=selection.imports)
    req = history.requirement if history is not None else None
    runs = run_service.measured_runs(session=session, environment=environment)
    evidence = [
        _import_evidence(record, record in chosen_imports, req, zone) for record in sorted(imports, key=lambda i: i.id)
    ]
    chosen_runs, excluded = _choose_runs(runs, selection, evidence, zone)
    no_history = None
    if imports and not chosen_imports:
        no_history = "no redo import is chosen: tick one in the evidence list (or use the default evidence)"
    elif chosen_imports and req is None:
        no_history = "the chosen imports hold no redo rate (see how each was read on the imports list)"
    facts = _plan_facts(session, environment, req)
    rehearsals = rehearsal_facts(session=session, environment=environment)
    chosen_rehearsals, left_out = [], []
    for fact in rehearsals:
        used, why = selection.rehearsal_choice(fact)
        (chosen_rehearsals.append(fact) if used else left_out.append((fact, why)))
        what = f"{fact.window_label}, {fact.status}" + (f", x{fact.scale:g} volumes" if fact.scale != 1 else "")
        evidence.append(
            EvidenceItem("rehearsal", fact.id, f"rehearsal #{fact.id} ({what})", "", used, why, (), fact.when, zone)
        )
    plan = build_plan(
        facts=facts,
        requirement=req,
        runs=chosen_runs,
        evidence=evidence,
        no_history=no_history,
        excluded=excluded,
        rehearsals=chosen_rehearsals,
        rehearsals_left_out=left_out,
        tiers=default_tiers(environment),
    )
    with_compression(plan, stored_compression(session, environment))
    return with_topology(
        plan,
        **environment_topology(
            session=session, environment=environment, requirement=req, selection=selection, facts=facts, plan=plan
        ),
    )


def hop_capacity(facts: Facts, runs: list[MeasuredRun]) -> tuple[Capacity | None, float | None]:
    """A hop's measured capacity, the transport card's summed one: its best ASYNC run, any connection
    count, over the link first (None: no run); and its round trip: the one given, else the runs'
    smallest TCP round trip over the link."""
    measured = Measurements.of(facts, runs)
    best = measured.capacity(measured.best_aggregate) if measured.best_aggregate is not None else None
    rtt = facts.link_rtt_seconds
    if rtt is None and measured.rtt is not None and not measured.rtt.loopback:
        rtt = measured.rtt.seconds
    return best, rtt


def environment_topology(
    *, session: Session, environment: Environment, requirement, selection: Selection, facts: Facts, plan: Plan
) -> dict:
    """Every destination's hop and every shared link judged (planning.topology) from the chosen runs of
    each hop: a hop's measured capacity is its best ASYNC run (any connection count, over the link
    first), as the transport card's summed verdict reads it, so a hop that fails fails there too. And
    each destination's own transport, lag and (SYNC or FASTSYNC only) commit cards, from its hop's
    runs and path; the first destination's are the plan's, judged on its own link (plan.with_topology then
    judges the plan's transport card over every hop and shared link). Returns the Plan fields they fill."""
    runs = run_service.measured_runs(session=session, environment=environment, hop=run_service.EVERY_HOP)
    write_seconds = None
    if facts.standby_disk is not None and requirement is not None and requirement.avg_redo_write_bytes:
        write_seconds = facts.standby_disk.disk.write_seconds(requirement.avg_redo_write_bytes)
    hops, cards = [], []
    chosen = [run for run in runs if selection.run_choice(run)[0]]
    for destination in environment.destinations:
        mine = [run for run in chosen if run.hop == destination.id]
        hop_facts = replace(
            facts,
            link_bits_per_second=destination.link_bandwidth_bits_per_second,
            link_rtt_seconds=destination.link_rtt_seconds,
        )
        best, rtt = hop_capacity(hop_facts, mine)
        first = destination is environment.first_destination
        cards.append(_destination_cards(destination, first, plan, hop_facts, requirement, mine))
        hops.append(_hop_fact(destination, best, rtt))
    links = [_shared_link_fact(session, link, chosen) for link in environment.shared_links]
    topology = plan_topology(
        TopologyFacts(
            platform=environment.platform.value,
            protection_mode=environment.protection_mode.value if environment.protection_mode is not None else None,
            required_bytes_per_second=requirement.summed_required_bytes_per_second if requirement is not None else None,
            hops=tuple(hops),
            shared_links=tuple(links),
            commit_write_bytes=requirement.avg_redo_write_bytes if requirement is not None else None,
            standby_write_seconds=write_seconds,
        )
    )
    return {"topology": topology, "destination_cards": tuple(cards)}


def _hop_fact(destination, best: Capacity | None, rtt: float | None) -> HopFact:
    return HopFact(
        id=destination.id,
        name=destination.name,
        kind=destination.kind.value,
        transport=destination.transport.value,
        feeds_from=destination.feeds_from_id,
        nominal_bits_per_second=destination.link_bandwidth_bits_per_second,
        rtt_seconds=rtt,
        measured_bytes_per_second=best.bytes_per_second if best is not None else None,
        measured_label=best.label if best is not None else "",
        hadr_role=destination.hadr_role.value if destination.hadr_role is not None else None,
    )


def _shared_link_fact(session: Session, link, runs: list[MeasuredRun]) -> SharedLinkFact:
    loaded = shared_link_capacity(session, frozenset(d.id for d in link.destinations), runs)
    return SharedLinkFact(
        id=link.id,
        name=link.name,
        hops=tuple(d.id for d in link.destinations),
        nominal_bits_per_second=link.bandwidth_bits_per_second,
        measured_bytes_per_second=loaded[0] if loaded else None,
        measured_label=loaded[1] if loaded else "",
    )


def shared_link_capacity(session: Session, hops: frozenset[int], runs: list[MeasuredRun]) -> tuple[float, str] | None:
    """What a shared link carried with all its hops loaded at once: the best, over the cluster runs (runs
    across hops) that loaded every one of its hops, every pair of which succeeded and started within 10 %
    of the duration of the others, of what the ASYNC pairs crossing it carried at once (the bytes each
    received over the span they all ran, not their own averages: pairs that started apart each had the
    link alone for a while); None when there is none."""
    together: dict[int, list[MeasuredRun]] = {}
    for run in runs:
        if run.cluster is not None and run.mode == "async":
            together.setdefault(run.cluster, []).append(run)
    candidates = {cid: pairs for cid, pairs in together.items() if hops <= {run.hop for run in pairs}}
    if not candidates:
        return None
    sizes = dict(
        session.execute(
            select(Run.cluster_id, func.count(Run.id)).where(Run.cluster_id.in_(candidates)).group_by(Run.cluster_id)
        ).all()
    )
    at_once = dict(session.execute(select(Cluster.id, Cluster.together).where(Cluster.id.in_(candidates))).all())
    best = None
    for cid, pairs in candidates.items():
        starts = [run.created_at for run in pairs]
        if len(pairs) != sizes.get(cid) or (max(starts) - min(starts)).total_seconds() > 0.1 * min(
            run.duration_seconds for run in pairs
        ):
            continue  # a pair failed or was left out, or they did not run at the same time
        crossing = sorted((run for run in pairs if run.hop in hops), key=lambda run: run.id)
        total = at_once_rate(at_once[cid], crossing) if at_once.get(cid) else None
        if total is not None and (best is None or total > best[0]):
            ids = ", ".join(f"#{run.id}" for run in crossing)
            best = (total, f"runs {ids} at once, over the {format_duration(at_once[cid]['seconds'], 1)} they all ran")
    return best


SYNC_TRANSPORTS = ("SYNC", "FASTSYNC")  # the transports a commit waits for: only they get a commit card


def _destination_cards(destination, first: bool, plan: Plan, hop_facts: Facts, requirement, runs) -> DestinationCards:
    """The transport, lag and commit cards of one destination: the plan's for the first, else built
    from its own hop (its runs, its nominal link and RTT; its own disk is not measured yet)."""
    if first:
        cards = plan.cards
    else:  # instantiated over its own hop: its nodes, from the primary's or those of what feeds it
        environment = destination.environment
        feeder = next((d for d in environment.destinations if d.id == destination.feeds_from_id), None)
        senders = len(environment.standby_hosts(feeder)) if feeder is not None else hop_facts.primary_nodes
        receivers = len(environment.standby_hosts(destination))
        own = replace(
            hop_facts,
            transport_mode=destination.transport.value,
            standby_disk=None,
            primary_nodes=max(1, senders),
            standby_nodes=max(1, receivers),
        )
        cards = build_plan(facts=own, requirement=requirement, runs=runs, size_for_rpo=False).cards
    keys = ("transport", "instantiation", "lag")
    keys += ("commit",) if destination.transport.value in SYNC_TRANSPORTS else ()
    chosen = tuple(card for key in keys for card in cards if card.key == key)
    return DestinationCards(destination.id, destination.name, destination.transport.value, chosen)


def rehearsal_facts(*, session: Session, environment: Environment) -> list[RehearsalFact]:
    """The environment's finished rehearsals, newest first, with what they measured."""
    rehearsals = rehearsal_service.list_rehearsals(session=session, environment=environment, limit=20)
    return [
        rehearsal_fact(session=session, rehearsal=rehearsal)
        for rehearsal in rehearsals
        if rehearsal_service.status(rehearsal).finished
    ]


def rehearsal_outcome(
    *, session: Session, environment: Environment, rehearsal, result: dict | None = None
) -> RehearsalOutcome:
    """One rehearsal (running or not) beside the model's prediction for its window, at the plan's
    single-stream rate from the default evidence: what its page draws (`result`: its measured figures
    when the caller has them already)."""
    selection = Selection()
    facts = environment_facts(environment)
    runs = [
        run
        for run in run_service.measured_runs(session=session, environment=environment)
        if selection.run_choice(run)[0]
    ]
    history = stored_analysis(session=session, environment=environment)
    return outcome(
        rehearsal_fact(session=session, rehearsal=rehearsal, result=result),
        requirement=history.requirement if history is not None else None,
        measured=Measurements.of(facts, runs, []),
        rpo_goal_seconds=environment.rpo_goal_seconds,
    )


def rehearsal_fact(*, session: Session, rehearsal, result: dict | None = None) -> RehearsalFact:
    """A rehearsal as the plan reads it: loopback when every run had both ends on this machine."""
    state = rehearsal_service.status(rehearsal)
    runs = rehearsal.runs
    loopback = all(
        run.client_host is not None
        and run.server_host is not None
        and run.client_host.transport is HostTransport.local
        and run.server_host.transport is HostTransport.local
        for run in runs
    )
    return RehearsalFact(
        id=rehearsal.id,
        when=rehearsal.created_at,
        window_kind=rehearsal.window_kind,
        window_start=rehearsal.window_start,
        window_end=rehearsal.window_end,
        window_label=rehearsal.window_label,
        granularity_seconds=rehearsal.granularity_seconds,
        granularity=rehearsal.granularity,
        threads=tuple(rehearsal.threads),
        scale=rehearsal.scale,
        speedup=rehearsal.speedup,
        mode=rehearsal.mode.value,
        loopback=bool(runs) and loopback,
        status=state.value,
        failure=rehearsal_service.failure(rehearsal),
        result=result if result is not None else rehearsal_service.current_result(session=session, rehearsal=rehearsal),
        notes=tuple(rehearsal.notes or ()),
        imports=tuple(rehearsal.imports or ()),
        cap_bits_per_second=rehearsal.cap_bits_per_second,
        cap_label=rehearsal.cap_label or "",
    )


def environment_rpo_sizing(
    *,
    session: Session,
    environment: Environment,
    rpo_seconds: float | None = None,
    archive_free_bytes: float | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
) -> tuple[RpoSizing | None, str]:
    """The link for the RPO from the default evidence (every import, every run over the link), at the
    environment's RPO goal unless `rpo_seconds`; (None, why) when it cannot be computed."""
    goal = rpo_seconds if rpo_seconds is not None else environment.rpo_goal_seconds
    if not goal:
        return None, "no RPO goal: set one on the environment, or pass --rpo"
    history = stored_analysis(session=session, environment=environment)
    requirement = history.requirement if history is not None else None
    if requirement is None:
        return None, "no redo history with a redo rate: import one first"
    if not requirement.spans:
        return None, "no redo series with times where every thread has data: import V$ARCHIVED_LOG with its times"
    selection, facts = Selection(), environment_facts(environment)
    runs = run_service.measured_runs(session=session, environment=environment)
    runs = [run for run in runs if selection.run_choice(run)[0]]
    sizing = plan_rpo_sizing(
        facts,
        requirement,
        Measurements.of(facts, runs),
        rpo_seconds=goal,
        tiers=default_tiers(environment),
        archive_free_bytes=archive_free_bytes,
        outage_seconds=outage_seconds,
    )
    return sizing, "" if sizing is not None else "no redo series with times"
