"""The plan of several standbys (pure): each destination's hop against one copy of the redo, each shared
link against the copies crossing it, the protection mode against the topology, far sync advice from the SYNC
commit model (planning.transport), and the topology's errors. Units: bytes, seconds, bytes or bits per second.

A destination stands for the hop that delivers redo into it, from the primary (feeds_from None) or from the
destination forwarding to it. Every hop carries one full copy of the redo; a shared link, the sum of its hops'.
`plan_topology` never raises: a cycle or a dangling id is a sentence in `problems`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from redolab.core.sources import ORACLE_NETWORK_NOTE as NOTE
from redolab.core.units import format_byte_rate, format_byte_rate_in_mbit, format_bytes, format_duration, format_mbit
from redolab.hadr.calculator import DEFAULT_FLUSH_BYTES
from redolab.planning.card import FAIL, INFO, MISSING, PARTIAL, PASS, WARN
from redolab.planning.facts import MEASURED, NOMINAL
from redolab.planning.transport import MODEL_MODE, CommitImpact, commit_impact
from redolab.planning.wording import rate
from redolab.planning.writer import NO_HISTORY

# The values environments.models stores, as plain strings: the planner reads values, not rows.
DATAGUARD, HADR = "dataguard", "hadr"
STANDBY, FAR_SYNC, CASCADED = "standby", "far_sync", "cascaded"
SYNC, FASTSYNC, ASYNC, NEARSYNC, SUPERASYNC = "SYNC", "FASTSYNC", "ASYNC", "NEARSYNC", "SUPERASYNC"
PRINCIPAL, AUXILIARY = "principal", "auxiliary"
MAX_PERFORMANCE, MAX_AVAILABILITY, MAX_PROTECTION = "max_performance", "max_availability", "max_protection"
PRIMARY = "primary"  # the source of a hop the primary feeds, as the sentences name it
KIND_NAMES = {STANDBY: "standby", FAR_SYNC: "far sync", CASCADED: "cascaded standby"}
# What the primary must send for a Data Guard protection mode. Seed 000: Maximum Protection never signals
# commit success "until at least one synchronous Data Guard standby has acknowledged that redo has been
# hardened to disk": SYNC AFFIRM. FASTSYNC is SYNC NOAFFIRM (acknowledged on receipt, before the write), and
# Oracle's broker allows FASTSYNC in Maximum Availability only.
PROTECTION_NEEDS = {MAX_AVAILABILITY: (SYNC, FASTSYNC), MAX_PROTECTION: (SYNC,)}
SYNC_TRANSPORTS = (SYNC, FASTSYNC)  # the Data Guard transports a commit waits for
MAX_AUXILIARIES = 2  # Db2 HADR: one principal standby and up to two auxiliaries
# Beyond a metro distance the round trip shows in every SYNC commit (seed 001: SYNC or NEARSYNC on a LAN or
# within a city, ASYNC or SUPERASYNC over a WAN; seed 002: latency, not bandwidth, dominates SYNC).
REMOTE_RTT_SECONDS = 0.005
STATUS_ORDER = (PASS, INFO, WARN, PARTIAL, MISSING, FAIL)  # planning.card's order, best to worst
NO_HOP_CAPACITY = "set its nominal bandwidth or run an experiment over it"
NO_LINK_CAPACITY = "set its nominal bandwidth or measure it with all its hops loaded at once"
FASTSYNC_IN_MAX_PROTECTION = "FASTSYNC (SYNC NOAFFIRM) is not allowed: Maximum Protection requires SYNC AFFIRM"
FEEDS_RULE = "a far sync feeds standbys; a standby or a cascaded standby feeds cascaded standbys"
FORWARDS_ASYNC = "a standby or a far sync forwards redo ASYNC only; only the primary sends SYNC or FASTSYNC"
COMMIT_MODEL = "SYNC ~ 2 x write + send + RTT; FASTSYNC as NEARSYNC ~ max(write, send + RTT) (IBM hadrCalculator)"


# -- the facts -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HopFact:
    """One destination and the hop that delivers redo into it."""

    id: int  # the destination's id
    name: str
    kind: str  # "standby" | "far_sync" | "cascaded"
    transport: str  # "SYNC" | "FASTSYNC" | "ASYNC" | "NEARSYNC" | "SUPERASYNC"
    feeds_from: int | None  # id of the destination forwarding redo to it; None: the primary sends it
    nominal_bits_per_second: int | None = None
    rtt_seconds: float | None = None
    measured_bytes_per_second: float | None = None  # the hop's capacity measured by runs on it
    measured_label: str = ""  # e.g. "run #12, 8 connections"
    hadr_role: str | None = None  # "principal" | "auxiliary" on HADR


@dataclass(frozen=True)
class SharedLinkFact:
    """A physical link several hops cross (the primary's uplink, one WAN circuit)."""

    id: int
    name: str
    hops: tuple[int, ...]  # destination ids whose hops cross it
    nominal_bits_per_second: int | None = None
    measured_bytes_per_second: float | None = None  # measured with all its hops loaded at once
    measured_label: str = ""


@dataclass(frozen=True)
class TopologyFacts:
    platform: str  # "dataguard" | "hadr"
    protection_mode: str | None  # "max_performance" | "max_availability" | "max_protection" | None
    required_bytes_per_second: float | None  # one copy of the redo, headroom included; None: no history yet
    hops: tuple[HopFact, ...]
    shared_links: tuple[SharedLinkFact, ...] = ()
    commit_write_bytes: float | None = None  # average redo write size, for the far sync advice, if known
    standby_write_seconds: float | None = None  # one redo write on the far sync or standby, if measured


# -- the verdicts ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Judged:
    """A requirement against a capacity (measured beats nominal): PASS, FAIL, or MISSING when either is unknown."""

    name: str
    required_bytes_per_second: float | None
    capacity_bytes_per_second: float | None
    basis: str | None  # MEASURED | NOMINAL | None (no capacity)
    status: str
    headline: str
    reasons: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True)
class HopVerdict(Judged):
    """Does the hop carry one copy of the redo?"""

    hop: HopFact
    source: str  # "primary", the feeding destination's name, or the unknown id it names

    @property
    def path(self) -> str:
        """The hop as the sentences name it: 'primary → fs1'."""
        return f"{self.source} → {self.name}"


@dataclass(frozen=True)
class SharedLinkVerdict(Judged):
    """Does the link carry its hops' copies? Required = the sum of their requirements."""

    link: SharedLinkFact
    hops: tuple[HopVerdict, ...]  # the known hops that cross it, each once

    @property
    def hop_names(self) -> tuple[str, ...]:
        return tuple(h.name for h in self.hops)


@dataclass(frozen=True)
class ProtectionCheck:
    """The protection mode against the topology (Data Guard), or the principal's HADR_SYNCMODE (Db2 HADR)."""

    status: str  # PASS, FAIL or INFO
    headline: str


@dataclass(frozen=True)
class CommitCost:
    """What a commit waits for one destination: planning.transport's model, as on the SYNC commit card."""

    destination: str
    transport: str  # SYNC or FASTSYNC
    rtt_seconds: float | None
    impact: CommitImpact | None  # None: the RTT is unknown
    send_known: bool = True  # False: no capacity for the hop, the send time is left out

    @property
    def added_seconds(self) -> float | None:
        return self.impact.added_seconds(MODEL_MODE[self.transport]) if self.impact is not None else None

    def waits(self, away: str, waits: str) -> str:
        """' (2 ms away), each commit waits about 2.05 ms', as the advice says it."""
        if self.impact is None:
            return ", the commit cost is unknown (no RTT)"
        return f" ({format_duration(self.rtt_seconds)}{away}), {waits} about {format_duration(self.added_seconds)}"


@dataclass(frozen=True)
class FarSyncAdvice:
    """A far sync's commit cost against SYNC straight to what it feeds; or a remote SYNC one's, with no far sync."""

    far_sync: str | None  # None: the environment has no far sync
    near: CommitCost | None  # SYNC to the far sync
    remote: tuple[CommitCost, ...]  # SYNC straight to each remote destination
    sentence: str
    working: tuple[str, ...]

    @property
    def saved_seconds(self) -> float | None:
        """What the far sync saves per commit against the cheapest direct SYNC (negative: it costs more)."""
        near = self.near.added_seconds if self.near else None
        direct = [c.added_seconds for c in self.remote if c.added_seconds is not None]
        return min(direct) - near if near is not None and direct else None


@dataclass(frozen=True)
class Topology:
    hops: tuple[HopVerdict, ...]
    shared_links: tuple[SharedLinkVerdict, ...]
    copies_from_primary: int  # the primary's direct destinations: one copy of the redo leaves for each
    protection: ProtectionCheck
    problems: tuple[str, ...]  # topology errors, each naming the destination
    far_sync: tuple[FarSyncAdvice, ...]
    status: str  # the worst of the hops', shared links' and protection's statuses; FAIL with a problem
    headline: str


# -- the planner -----------------------------------------------------------------------------------
def plan_topology(facts: TopologyFacts) -> Topology:
    """Judge every hop and shared link, check the protection, advise on far syncs, name the errors; never raises."""
    by_id = {h.id: h for h in reversed(facts.hops)}  # a repeated id: its first destination
    required = float(facts.required_bytes_per_second) if _positive(facts.required_bytes_per_second) else None
    hops = tuple(_hop_verdict(hop, by_id, required) for hop in facts.hops)
    first = {v.hop.id: v for v in reversed(hops)}
    links = tuple(_link_verdict(link, first) for link in facts.shared_links)
    protection, problems = check_protection(facts), topology_problems(facts)
    advice = far_sync_advice(facts) if facts.platform == DATAGUARD else ()
    copies = sum(1 for hop in facts.hops if hop.feeds_from is None)
    statuses = [v.status for v in (*hops, *links)] + [protection.status] + [FAIL] * bool(problems)
    status = max([*statuses, *[MISSING] * (not hops)], key=STATUS_ORDER.index)
    headline = _headline(status, hops, links, protection, problems, copies)
    return Topology(hops, links, copies, protection, problems, advice, status, headline)


# -- hops and shared links -------------------------------------------------------------------------
def _hop_verdict(hop: HopFact, by_id: dict[int, HopFact], required: float | None) -> HopVerdict:
    capacity, basis, status = _judge(required, hop.measured_bytes_per_second, hop.nominal_bits_per_second)
    source = PRIMARY if hop.feeds_from is None else f"unknown destination #{hop.feeds_from}"
    source = _name(by_id[hop.feeds_from]) if hop.feeds_from in by_id else source
    path = f"{source} → {_name(hop)}"
    missing = [NO_HISTORY] * (required is None)
    missing += [f"no capacity for the hop {path}: {NO_HOP_CAPACITY}"] * (capacity is None)
    if required is None:
        headline = f"{path}: {NO_HISTORY}"
    elif capacity is None:
        headline = f"{path}: needs {rate(required)}, no capacity: {NO_HOP_CAPACITY}"
    else:
        label = f" ({hop.measured_label})" if hop.measured_label else ""
        said = f"measured {rate(capacity)}{label}" if basis == MEASURED else f"nominal {rate(capacity)}, not measured"
        headline = f"{path}: needs {rate(required)}, {said}: {_margin_said(required, capacity)}"
    reasons = [f"one copy of the redo: {rate(required)} (summed peak plus headroom)"] if required else []
    reasons += _capacity_reason(capacity, basis, hop, "hop")
    if _positive(hop.rtt_seconds, zero=True):
        reasons.append(f"{hop.transport}, RTT {format_duration(hop.rtt_seconds)}")
    return HopVerdict(_name(hop), required, capacity, basis, status, headline, (*reasons,), (*missing,), hop, source)


def _link_verdict(link: SharedLinkFact, verdicts: dict[int, HopVerdict]) -> SharedLinkVerdict:
    hops = tuple(verdicts[i] for i in dict.fromkeys(link.hops) if i in verdicts)
    requirements = [h.required_bytes_per_second for h in hops]
    required = sum(requirements) if hops and None not in requirements else None
    capacity, basis, status = _judge(required, link.measured_bytes_per_second, link.nominal_bits_per_second)
    missing = [NO_HISTORY if hops else "no known destination's hop crosses it"] * (required is None)
    missing += [f"no capacity for the shared link {_name(link)}: {NO_LINK_CAPACITY}"] * (capacity is None)
    n = len(hops)
    headline = f"carries {n} cop{'y' if n == 1 else 'ies'}: "
    if required is None:
        headline += missing[0]
    else:
        headline += f"{n} x {format_byte_rate(requirements[0])} = " * (n > 1) + f"{format_byte_rate(required)} needed, "
        if capacity is None:
            headline += f"no capacity: {NO_LINK_CAPACITY}"
        else:
            headline += f"{format_byte_rate(capacity)} {basis} ({format_byte_rate_in_mbit(capacity)}): "
            alone = status == FAIL and all(h.status == PASS for h in hops)
            each = "each hop" if n > 1 else "its hop"
            headline += f"FAIL although {each} alone passes" if alone else _margin_said(required, capacity)
    reasons = [f"hops: {', '.join(h.path for h in hops)}: each carries one full copy of the redo"] if hops else []
    reasons += [f"required = the sum of its hops' copies = {rate(required)}"] if required is not None else []
    reasons += _capacity_reason(capacity, basis, link, "link")
    return SharedLinkVerdict(
        _name(link), required, capacity, basis, status, headline, (*reasons,), (*missing,), link, hops
    )


def _judge(required: float | None, measured, nominal_bits) -> tuple[float | None, str | None, str]:
    """(capacity, basis, status): measured beats nominal (bits / 8); zero or unset is unknown."""
    if _positive(measured):
        capacity, basis = float(measured), MEASURED
    elif _positive(nominal_bits):
        capacity, basis = nominal_bits / 8, NOMINAL
    else:
        capacity, basis = None, None
    status = MISSING if required is None or capacity is None else PASS if capacity >= required else FAIL
    return capacity, basis, status


def _margin_said(required: float, capacity: float) -> str:
    margin = capacity - required
    percent = f"{margin / required * 100:+.1f} %"
    if margin >= 0:
        return f"pass, margin {format_byte_rate(margin)} ({percent})"
    return f"FAIL, short by {format_byte_rate(-margin)} ({percent})"


def _capacity_reason(capacity, basis, fact: HopFact | SharedLinkFact, what: str) -> list[str]:
    if basis == NOMINAL:
        nominal = format_mbit(fact.nominal_bits_per_second)
        return [f"capacity: the {what}'s nominal {nominal} / 8 = {format_byte_rate(capacity)}; not measured"]
    loaded = " with all its hops loaded at once" if what == "link" else ""
    label = f" ({fact.measured_label})" if fact.measured_label else ""
    return [f"capacity measured{loaded}: {rate(capacity)}{label}"] if basis == MEASURED else []


# -- the protection mode ---------------------------------------------------------------------------
def check_protection(facts: TopologyFacts) -> ProtectionCheck:
    """Data Guard's mode against what the primary sends (a far sync counts); Db2's principal HADR_SYNCMODE."""
    mode = facts.protection_mode
    if facts.platform == HADR:
        return _hadr_protection(facts.hops)
    if facts.platform != DATAGUARD or mode not in (MAX_PERFORMANCE, MAX_AVAILABILITY, MAX_PROTECTION):
        unset = "not set: Oracle's default, Maximum Performance, takes any transport"
        said = unset if mode is None and facts.platform == DATAGUARD else f"{mode} on {facts.platform}: not checked"
        return ProtectionCheck(INFO, f"Protection mode {said}")
    label, needs = "Maximum " + mode.removeprefix("max_").capitalize(), PROTECTION_NEEDS.get(mode)
    if needs is None:
        return ProtectionCheck(PASS, f"{label}: commits never wait for a standby; any transport")
    direct = [h for h in facts.hops if h.feeds_from is None]
    qualifying = [h for h in direct if h.transport in needs]
    if qualifying:
        sent = [f"{h.transport} to {_name(h)}{' (far sync)' * (h.kind == FAR_SYNC)}" for h in qualifying]
        headline = f"{label} holds: the primary sends {', '.join(sent)}"
        if mode == MAX_PROTECTION and len(qualifying) == 1:
            headline += f"; keep two SYNC destinations: with one, the primary stalls when it is unreachable ({NOTE})"
        return ProtectionCheck(PASS, headline)
    headline = f"{label} needs a {' or '.join(needs)} destination fed by the primary (a far sync counts)"
    fastsync = [_name(h) for h in direct if h.transport == FASTSYNC]
    if mode == MAX_PROTECTION and fastsync:
        return ProtectionCheck(FAIL, f"{headline}; {', '.join(fastsync)}: {FASTSYNC_IN_MAX_PROTECTION}")
    sent = f"the primary sends {', '.join(sorted({h.transport for h in direct}))} only"
    return ProtectionCheck(FAIL, f"{headline}; {sent if direct else 'the primary feeds no destination'}")


def _hadr_protection(hops: tuple[HopFact, ...]) -> ProtectionCheck:
    principal = next((h for h in hops if h.hadr_role == PRINCIPAL), None)
    auxiliaries = [h for h in hops if h.hadr_role == AUXILIARY]
    wrong = [f"{_name(h)} {h.transport}" for h in auxiliaries if h.transport != SUPERASYNC]
    if wrong:
        declared = f"{', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} declared"
        return ProtectionCheck(
            FAIL, f"Auxiliaries receive SUPERASYNC only, but {declared}: only the principal protects"
        )
    if principal is None:
        return ProtectionCheck(INFO, "No principal standby: no HADR_SYNCMODE protects commits beyond SUPERASYNC")
    headline = f"HADR_SYNCMODE {principal.transport} to the principal standby {_name(principal)}"
    aux = f"; {', '.join(_name(h) for h in auxiliaries)} receive SUPERASYNC (auxiliaries)" if auxiliaries else ""
    return ProtectionCheck(PASS, headline + aux)


# -- the topology's errors -------------------------------------------------------------------------
def topology_problems(facts: TopologyFacts) -> tuple[str, ...]:
    """Every topology error as a sentence naming the destination, each once."""
    by_id, problems = {h.id: h for h in reversed(facts.hops)}, []
    for hop in facts.hops:
        source = by_id.get(hop.feeds_from) if hop.feeds_from is not None else None
        if hop.feeds_from is not None and source is None:
            problems.append(f"{_name(hop)} is fed from destination #{hop.feeds_from}, not one of the environment's")
        if facts.platform == DATAGUARD:
            problems += _dataguard_problems(hop, source, facts)
    problems += _cycles(facts.hops, by_id)
    problems += _hadr_problems(facts.hops) if facts.platform == HADR else []
    for link in facts.shared_links:
        unknown = [i for i in dict.fromkeys(link.hops) if i not in by_id]
        problems += [f"shared link {_name(link)} lists destination #{i}, not one of the environment's" for i in unknown]
    return tuple(dict.fromkeys(problems))


def _dataguard_problems(hop: HopFact, source: HopFact | None, facts: TopologyFacts) -> list[str]:
    name, problems = _name(hop), []
    say, kind = problems.append, KIND_NAMES.get
    if hop.kind == CASCADED and hop.feeds_from is None:
        say(f"{name} is a cascaded standby without a source: set the destination that forwards redo to it")
    if hop.kind == FAR_SYNC and hop.feeds_from is not None:
        fed_by = _name(source) if source is not None else f"destination #{hop.feeds_from}"
        say(f"far sync {name} is fed by {fed_by}: a far sync receives redo from the primary only")
    if hop.kind == FAR_SYNC and not any(h.feeds_from == hop.id for h in facts.hops if h is not hop):
        say(f"far sync {name} feeds no destination: a far sync only forwards: add the remote standby it feeds")
    if source is not None and hop.kind != FAR_SYNC and (hop.kind == CASCADED) == (source.kind == FAR_SYNC):
        say(f"{name} is a {kind(hop.kind)} fed by {_name(source)}, a {kind(source.kind)}: {FEEDS_RULE}")
    if hop.transport in SYNC_TRANSPORTS and source is not None:
        say(f"{name} is fed {hop.transport} by {_name(source)}: {FORWARDS_ASYNC}")
    if hop.transport == FASTSYNC and facts.protection_mode == MAX_PROTECTION:
        say(f"{name}: {FASTSYNC_IN_MAX_PROTECTION}")
    return problems


def _hadr_problems(hops: tuple[HopFact, ...]) -> list[str]:
    problems = []
    for hop in hops:
        if hop.kind == FAR_SYNC:
            problems.append(f"Db2 HADR has no far sync: {_name(hop)} must be a principal or auxiliary standby")
        elif hop.kind == CASCADED or hop.feeds_from is not None:
            problems.append(f"Db2 HADR does not cascade: {_name(hop)} must receive its logs from the primary")
        if hop.hadr_role == AUXILIARY and hop.transport != SUPERASYNC:
            said = "Db2 ships to auxiliaries in SUPERASYNC only"
            problems.append(
                f"auxiliary standby {_name(hop)} is declared {hop.transport}: {said}; declare it SUPERASYNC"
            )
    auxiliaries = [_name(h) for h in hops if h.hadr_role == AUXILIARY]
    if len(auxiliaries) > MAX_AUXILIARIES:
        many = f"not {len(auxiliaries)}: {', '.join(auxiliaries)}"
        problems.append(f"Db2 HADR has at most {MAX_AUXILIARIES} auxiliary standbys, {many}")
    return problems


def _cycles(hops: tuple[HopFact, ...], by_id: dict[int, HopFact]) -> list[str]:
    """Each feeds_from cycle once: no redo from the primary reaches its destinations."""
    seen, problems = set(), []
    for hop in hops:
        chain, at = [], hop.id  # ids, each fed from the next
        while at in by_id and at not in chain and by_id[at].feeds_from is not None:
            chain.append(at)
            at = by_id[at].feeds_from
        cycle = chain[chain.index(at) :] if at in chain else []  # else it reached the primary or a dangling id
        if not cycle or frozenset(cycle) in seen:
            continue
        seen.add(frozenset(cycle))
        # the arrows follow the redo, from a destination to the one it feeds
        ring = " → ".join(_name(by_id[i]) for i in [cycle[0], *reversed(cycle[1:]), cycle[0]])
        what, them = ("fed from itself", "it") if len(cycle) == 1 else ("fed from each other in a cycle", "them")
        problems.append(f"{ring}: {what}; no redo from the primary reaches {them}")
    return problems


# -- far sync advice -------------------------------------------------------------------------------
def far_sync_advice(facts: TopologyFacts) -> tuple[FarSyncAdvice, ...]:
    """Each far sync against SYNC straight to what it feeds; with none, each remote SYNC destination's cost."""
    far_syncs = [h for h in facts.hops if h.kind == FAR_SYNC]
    if far_syncs:
        return tuple(_far_sync(f, facts) for f in far_syncs)
    remote = [h for h in facts.hops if h.feeds_from is None and h.transport in SYNC_TRANSPORTS]
    return tuple(
        _no_far_sync(h, facts) for h in remote if _positive(h.rtt_seconds) and h.rtt_seconds > REMOTE_RTT_SECONDS
    )


def _commit_cost(hop: HopFact, transport: str, facts: TopologyFacts) -> CommitCost:
    """The hop's commit cost in `transport`; _commit_working says what stands in for an unknown input."""
    if not _positive(hop.rtt_seconds, zero=True):
        return CommitCost(_name(hop), transport, None, None)
    write_bytes = float(facts.commit_write_bytes) if _positive(facts.commit_write_bytes) else DEFAULT_FLUSH_BYTES
    write = float(facts.standby_write_seconds) if _positive(facts.standby_write_seconds, zero=True) else 0.0
    rtt, capacity = float(hop.rtt_seconds), _judge(None, hop.measured_bytes_per_second, hop.nominal_bits_per_second)[0]
    if capacity is None:  # no send time without a capacity
        return CommitCost(_name(hop), transport, rtt, CommitImpact(write_bytes, write, 0.0, rtt), send_known=False)
    impact = commit_impact(
        write_bytes=write_bytes, write_seconds=write, throughput_bytes_per_second=capacity, rtt_seconds=rtt
    )
    return CommitCost(_name(hop), transport, rtt, impact)


def _commit_working(facts: TopologyFacts, costs: tuple[CommitCost, ...]) -> tuple[str, ...]:
    working = [COMMIT_MODEL]
    if not _positive(facts.commit_write_bytes):
        working.append(f"no average redo write size: {format_bytes(DEFAULT_FLUSH_BYTES)} (a 16-page flush) stands in")
    if not _positive(facts.standby_write_seconds, zero=True):
        working.append("no standby write time: the log write SYNC waits for is left out; the costs are lower bounds")
    working += [f"no capacity for {c.destination}: its send time is left out" for c in costs if not c.send_known]
    return tuple(working)


def _far_sync(far_sync: HopFact, facts: TopologyFacts) -> FarSyncAdvice:
    fed = [h for h in facts.hops if h.feeds_from == far_sync.id and h is not far_sync]
    name, transport = _name(far_sync), far_sync.transport if far_sync.transport in SYNC_TRANSPORTS else SYNC
    near, remote = _commit_cost(far_sync, transport, facts), tuple(_commit_cost(h, transport, facts) for h in fed)
    working = _commit_working(facts, (near, *remote))
    working += ("each remote hop's RTT (from the far sync) stands in for the primary's round trip to it",) * bool(fed)
    unfed = f"far sync {name} is fed {far_sync.transport}, commits do not wait for it; "
    said = unfed * (transport != far_sync.transport) + f"with {transport} to far sync {name}"
    said += near.waits(" away", "each commit waits" if transport == far_sync.transport else "a commit would wait")
    said += "".join(f"; with {transport} straight to {c.destination}" + c.waits("", "it would wait") for c in remote)
    said += "" if fed else "; it feeds no destination, so there is nothing to compare"
    advice = FarSyncAdvice(name, near, remote, "", working)
    saved = advice.saved_seconds
    if saved is not None:
        better = f"saves about {format_duration(saved)} per commit"
        said += f": the far sync {better if saved >= 0 else 'costs more than going straight; move it closer'}"
    return replace(advice, sentence=said[:1].upper() + said[1:])


def _no_far_sync(hop: HopFact, facts: TopologyFacts) -> FarSyncAdvice:
    cost = _commit_cost(hop, hop.transport, facts)
    without_rtt = format_duration(replace(cost.impact, rtt_seconds=0.0).added_seconds(MODEL_MODE[hop.transport]))
    said = (
        f"{hop.transport} straight to {cost.destination} ({format_duration(cost.rtt_seconds)} away) makes each commit "
        f"wait about {format_duration(cost.added_seconds)}. A far sync a few ms from the primary would make it wait "
        f"for the far sync's round trip plus about {without_rtt} instead, and forward ASYNC to {cost.destination}; "
        "declare one to compare with its own numbers"
    )
    return FarSyncAdvice(None, None, (cost,), said, _commit_working(facts, (cost,)))


# -- words -----------------------------------------------------------------------------------------
def _headline(status, hops, links, protection, problems, copies) -> str:
    if not hops and status != FAIL:
        return "Missing: no destination yet: add the standby the primary ships redo to"
    if status == MISSING:
        return "Missing: " + next((m for v in (*hops, *links) for m in v.missing), "nothing to compute from")
    if status != FAIL:
        judged = "Every hop and shared link carries its copies" if links else "Every hop carries its copy"
        counted = f"{len(hops)} destination{'s' * (len(hops) > 1)}, {copies} cop{'y' if copies == 1 else 'ies'}"
        return f"{judged} ({counted} from the primary); {protection.headline}"
    parts = [h.headline for h in hops if h.status == FAIL]
    parts += [f"shared link {v.name} {v.headline}" for v in links if v.status == FAIL]
    parts += [protection.headline] if protection.status == FAIL else []
    if problems:
        parts.append(f"{len(problems)} topology problem{'s, the first' * (len(problems) > 1)}: {problems[0]}")
    return "Fails: " + "; ".join(parts)


def _name(fact: HopFact | SharedLinkFact) -> str:
    what = "shared link" if isinstance(fact, SharedLinkFact) else "destination"
    return str(fact.name or "").strip() or f"{what} #{fact.id}"


def _positive(value, zero: bool = False) -> bool:
    """A usable rate or size: a finite number above zero (zero or unset: unknown); a time may be zero."""
    return isinstance(value, int | float) and math.isfinite(value) and (value > 0 or (zero and value == 0))
