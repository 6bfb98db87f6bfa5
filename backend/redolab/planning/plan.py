"""The plan of one environment: verdicts, estimates, risks and settings, with the working shown.

Pure: it takes the environment's facts, the requirement (redo.requirement) and the chosen runs, and
returns cards. Each card's typed result is computed once (planning.results) and worded once
(planning.writer); every card names what it was computed from and, when it cannot be computed, what
is missing. Each card's badge is decided by `settle` from its own outcomes, and the headline is
written for that badge, so the two cannot disagree; the transport card and the lag replay judge each
thread against the same requirement and the same stream, so they cannot either.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial

from markupsafe import Markup

from redolab.planning import results, writer
from redolab.planning.apply_card import apply_card, apply_side
from redolab.planning.card import FAIL, INFO, MISSING, PARTIAL, PASS, WARN, Card, settle, show_time
from redolab.planning.commit_card import commit_card
from redolab.planning.compression import CompressionFact
from redolab.planning.copy_card import instantiation_card
from redolab.planning.encryption import add_encryption
from redolab.planning.facts import DiskFact, Excluded, Facts, Measurements
from redolab.planning.over_topology import OverTopology, judge_over_topology
from redolab.planning.rehearsal_card import RehearsalFact, outcome, rehearsal_card, tier_rehearsals
from redolab.planning.rpo_sizing import RpoSizing, plan_rpo_sizing
from redolab.planning.settings import SettingsBasis, Snippet, snippets_for
from redolab.planning.topology import Topology
from redolab.planning.topology_svg import topology_svg
from redolab.redo.requirement import Requirement
from redolab.runs.measured import MeasuredRun, Source

__all__ = [
    "FAIL",
    "INFO",
    "MISSING",
    "PARTIAL",
    "PASS",
    "WARN",
    "Card",
    "DiskFact",
    "EvidenceItem",
    "Excluded",
    "Facts",
    "Plan",
    "build_plan",
    "settle",
    "show_time",
    "with_topology",
]


@dataclass(frozen=True)
class EvidenceItem:
    """One import or run the plan may use, and whether (and how) it does."""

    kind: str  # import | run | rehearsal
    id: int
    label: str
    period: str  # the period of an import ("" for a run or a rehearsal: see `at`)
    chosen: bool
    note: str  # what it is used for, or why not
    tags: tuple[str, ...] = ()
    at: datetime | None = None  # when a run or rehearsal was made; written out only when shown (500 runs: 5 ms)
    zone: str = "UTC"

    @property
    def when(self) -> str:
        """The period of an import, the time of a run or rehearsal on the database's clock."""
        return show_time(self.at, self.zone) if self.at is not None else self.period


@dataclass(frozen=True)
class DestinationCards:
    """One destination's transport, lag and (SYNC or FASTSYNC) commit cards, judged on its own hop."""

    destination_id: int
    name: str
    transport: str
    cards: tuple[Card, ...]


@dataclass
class Plan:
    cards: list[Card]
    risks: list[str]
    snippets: list[Snippet]
    snippet_sources: list[Source]
    requirement: Requirement | None = None
    evidence: list[EvidenceItem] = field(default_factory=list)
    time_zone: str = "UTC"
    settings_basis: SettingsBasis | None = None  # what the snippets were sized from
    topology: Topology | None = None  # every destination's hop and shared link (set by planning.service)
    destination_cards: tuple[DestinationCards, ...] = ()  # each destination's own cards, in position order
    over_topology: OverTopology | None = None  # the parts the transport card was judged over beyond its link
    rpo_sizing: RpoSizing | None = None  # the link for the RPO (None: no RPO goal or no series with times)
    compression: CompressionFact | None = None  # measured compressibility (set by planning.service)

    @property
    def topology_diagram(self) -> Markup:
        """The destinations as an inline SVG (page and printed report)."""
        return topology_svg(self.topology)

    def card(self, key: str) -> Card:
        return next(c for c in self.cards if c.key == key)

    def summed_basis(self) -> str:
        """How all threads' peak was found, with its stretches on the database's clock."""
        return self.requirement.summed_basis(lambda moment: show_time(moment, self.time_zone))

    def describe(self, basis) -> str:
        """A figure's basis in words, times on the database's clock."""
        return basis.describe(lambda moment: show_time(moment, self.time_zone))

    def to_json(self) -> dict:
        return {
            "cards": {
                c.key: {
                    "title": c.title,
                    "status": c.status,
                    "nominal": c.nominal,
                    "loopback": c.loopback,
                    "badge": c.badge,
                    "headline": c.headline,
                    "values": c.values,
                    "working": c.working,
                    "sources": [{"label": s.label, "url": s.url} for s in c.sources],
                    "missing": c.missing,
                }
                for c in self.cards
            },
            "requirement": self.requirement.to_json() if self.requirement else None,
            "evidence": [
                {
                    "kind": e.kind,
                    "id": e.id,
                    "label": e.label,
                    "when": e.when,
                    "chosen": e.chosen,
                    "note": e.note,
                    "tags": list(e.tags),
                }
                for e in self.evidence
            ],
            "time_zone": self.time_zone,
            "risks": self.risks,
            "settings": [
                {"title": s.title, "target": s.target, "lines": [i.to_json() for i in s.lines]} for s in self.snippets
            ],
            "settings_sources": [{"label": s.label, "url": s.url} for s in self.snippet_sources],
            "topology": topology_json(self.topology, self.destination_cards) if self.topology is not None else None,
            "rpo_sizing": self.rpo_sizing.to_json() if self.rpo_sizing is not None else None,
        }


def build_plan(
    *,
    facts: Facts,
    requirement: Requirement | None,
    runs: list[MeasuredRun],
    evidence: list[EvidenceItem] | None = None,
    no_history: str | None = None,
    excluded: list[Excluded] | None = None,
    rehearsals: list[RehearsalFact] | None = None,
    rehearsals_left_out: list[tuple[RehearsalFact, str]] | None = None,
    tiers: tuple[tuple[str, float], ...] | None = None,
    size_for_rpo: bool = True,
) -> Plan:
    """All cards, in the order the page shows them, then the risks they found. Loopback runs never
    feed a verdict or a setting unless chosen by name: they are not the link; chosen, they stand in
    only where no run over the link measured the same thing, capped at the nominal link, and every
    card using one says so. `excluded`: the runs left out, named where they would fill a missing
    figure. `no_history` says why there is no requirement when it is not "nothing imported yet".
    `tiers`: (name, bits per second) for the link for the RPO's what-if; `size_for_rpo` False leaves it out
    (a destination's own cards)."""
    measured = Measurements.of(facts, runs, excluded)
    for_rpo = plan_rpo_sizing(facts, requirement, measured, tiers=tiers) if size_for_rpo else None
    sizing = results.buffer_sizing(facts, measured)
    show = partial(show_time, zone=facts.time_zone)
    keep_up = results.keep_up(facts, requirement, measured) if requirement else None
    lag = results.lag_exposure(requirement, measured) if requirement else None
    transport, transport_risks = writer.transport_card(keep_up, measured, no_history=no_history, show=show, rpo=for_rpo)
    written = [
        (transport, [*transport_risks, *add_encryption(transport, facts.host_ceilings, requirement)]),
        instantiation_card(facts, requirement, measured),
        writer.buffers_card(sizing, measured),
        writer.lag_card(lag, measured, no_history=no_history, show=show),
        commit_card(results.sync_commit(facts, requirement, measured), measured),
        _rehearsal(facts, requirement, measured, rehearsals or [], rehearsals_left_out or [], no_history),
        apply_card(
            facts,
            apply_side(facts, requirement, measured),
            transport_ok=_transport_ok(keep_up),
            has_history=requirement is not None,
        ),
    ]
    risks = [risk for _, found in written for risk in found] + writer.general_risks(measured, requirement)
    basis = results.settings_basis(facts, requirement, measured, sizing.bdp)
    snippets, sources = (snippets_for(basis), list(writer.SETTINGS_SOURCES)) if basis else ([], [])
    cards = [card for card, _ in written]
    return Plan(
        cards, risks, snippets, sources, requirement, list(evidence or []), facts.time_zone, basis, rpo_sizing=for_rpo
    )


def _transport_ok(keep_up) -> bool | None:
    """Whether every judged transport verdict passes (None: nothing judged)."""
    verdicts = [v.verdict for v in keep_up.judged if v.verdict is not None] if keep_up else []
    return all(v.passed for v in verdicts) if verdicts else None


def with_topology(plan: Plan, topology: Topology, destination_cards: tuple[DestinationCards, ...] = ()) -> Plan:
    """The plan with its destinations: the transport card, the first answer, judged over every hop and shared
    link as well (planning.over_topology) and their risks first; each destination keeps its own cards."""
    own = [
        (d.destination_id, d.name, next((c for c in d.cards if c.key == "transport"), None)) for d in destination_cards
    ]
    card, over, risks = judge_over_topology(plan.card("transport"), topology, own)
    cards = [card if c.key == "transport" else c for c in plan.cards]
    return replace(
        plan,
        cards=cards,
        risks=[*risks, *plan.risks],
        topology=topology,
        destination_cards=destination_cards,
        over_topology=over,
    )


def _rehearsal(facts: Facts, requirement, measured: Measurements, chosen, left_out, no_history):
    """The newest chosen rehearsal against the RPO goal, beside the model for the same window."""
    result = None
    goal = facts.rpo_goal_seconds
    if chosen:
        newest = max(chosen, key=lambda f: f.id)
        result = outcome(newest, requirement=requirement, measured=measured, rpo_goal_seconds=goal)
    return rehearsal_card(
        result,
        requirement=requirement,
        left_out=left_out,
        rpo_goal_seconds=goal,
        no_history=no_history,
        zone=facts.time_zone,
        tiers=tier_rehearsals(chosen, requirement=requirement, measured=measured, rpo_goal_seconds=goal),
    )


def _judged_json(verdict) -> dict:
    return {
        "name": verdict.name,
        "status": verdict.status,
        "headline": verdict.headline,
        "required_bytes_per_second": verdict.required_bytes_per_second,
        "capacity_bytes_per_second": verdict.capacity_bytes_per_second,
        "capacity_basis": verdict.basis,
        "reasons": list(verdict.reasons),
        "missing": list(verdict.missing),
    }


def topology_json(topology: Topology, destination_cards: tuple[DestinationCards, ...] = ()) -> dict:
    """The destinations' hops, shared links, protection check, far sync advice and errors, and each
    destination's own cards (units in the keys)."""
    return {
        "destinations": [
            {
                "destination_id": d.destination_id,
                "name": d.name,
                "transport": d.transport,
                "cards": {c.key: {"status": c.status, "headline": c.headline, "values": c.values} for c in d.cards},
            }
            for d in destination_cards
        ],
        "status": topology.status,
        "headline": topology.headline,
        "copies_from_primary": topology.copies_from_primary,
        "hops": [
            {
                **_judged_json(v),
                "destination_id": v.hop.id,
                "kind": v.hop.kind,
                "transport": v.hop.transport,
                "from": v.source,
                "rtt_seconds": v.hop.rtt_seconds,
            }
            for v in topology.hops
        ],
        "shared_links": [
            {**_judged_json(v), "shared_link_id": v.link.id, "destinations": list(v.hop_names)}
            for v in topology.shared_links
        ],
        "protection": {"status": topology.protection.status, "headline": topology.protection.headline},
        "far_sync": [
            {"far_sync": a.far_sync, "advice": a.sentence, "saved_seconds": a.saved_seconds, "working": list(a.working)}
            for a in topology.far_sync
        ],
        "problems": list(topology.problems),
    }
