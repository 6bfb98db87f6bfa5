"""The first answer judged over every hop and every shared link (pure). The plan's transport card answers
"Does the link keep up with the redo?" on the first destination's link; with more destinations or shared
links it is judged again over every other destination's hop and own streams and every shared link
(planning.topology), so the answer is the worst of its parts and names the part that fails: a shared
uplink that cannot carry its copies fails the answer although each hop alone passes. A part that cannot
be judged (no capacity) leaves the answer partly measured, naming what would judge it. Units: bytes/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from redolab.core.units import format_byte_rate
from redolab.planning.card import FAIL, MISSING, PASS, WARN, Card, bare_headline, settle
from redolab.planning.facts import MEASURED, NOMINAL
from redolab.planning.results import KeepUp
from redolab.planning.topology import STATUS_ORDER, HopVerdict, SharedLinkVerdict, Topology
from redolab.planning.transport import Verdict

HOP, SHARED_LINK, DESTINATION = "hop", "shared_link", "destination"
OVER_TOPOLOGY = (
    "the answer is judged over every hop and every shared link (each hop carries one full copy of the redo, a "
    "shared link the sum of the copies crossing it) and every destination's own streams: the worst of them"
)
Destination = tuple[int, str, Card | None]  # a destination's id, name and own transport card, in position order


@dataclass(frozen=True)
class Part:
    """One part of the path beyond the first destination's link: a hop, a shared link, or another
    destination's own streams (its transport card, named only where it is worse than its hop)."""

    kind: str  # HOP | SHARED_LINK | DESTINATION
    label: str  # "Hop primary → dr2", "Shared link uplink", "Streams to dr2"
    status: str  # planning.card's statuses
    said: str  # its verdict in the Destinations section's words
    verdict: Verdict | None  # required against capacity (bytes/s); None: not judged
    basis: str | None  # MEASURED | NOMINAL | None
    to_measure: str = ""  # the run that would replace a nominal capacity with a measured one
    missing: str = ""  # what would judge it
    loopback: bool = False

    @property
    def sentence(self) -> str:
        return f"{self.label[:1].lower()}{self.label[1:]}: {self.said}"

    def to_json(self) -> dict:
        verdict = self.verdict
        return {
            "kind": self.kind,
            "name": self.label,
            "status": self.status,
            "headline": self.said,
            "required_bytes_per_second": verdict.required_bytes_per_second if verdict else None,
            "capacity_bytes_per_second": verdict.available_bytes_per_second if verdict else None,
            "margin_percent": verdict.margin_percent if verdict else None,
            "capacity_basis": self.basis,
            "missing": self.missing or None,
        }


@dataclass(frozen=True)
class OverTopology:
    """The parts the first answer is judged over, beyond its own link's verdicts."""

    parts: tuple[Part, ...]

    @property
    def failed(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.status == FAIL)

    @property
    def unjudged(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.status not in (PASS, FAIL))

    @property
    def judged(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.verdict is not None)

    @property
    def nominal(self) -> bool:
        return any(p.basis == NOMINAL for p in self.judged)

    @property
    def status(self) -> str:
        return max((p.status for p in self.parts), key=STATUS_ORDER.index, default=PASS)

    def to_json(self) -> dict:
        return {"status": self.status, "parts": [p.to_json() for p in self.parts]}


def judge_over_topology(
    card: Card, topology: Topology | None, destinations: Sequence[Destination] = ()
) -> tuple[Card, OverTopology, list[str]]:
    """The transport card judged over every hop and shared link, the parts, and the risks they found.
    `destinations`: each destination's own transport card, the first's being `card` itself. One
    destination and no shared link: the card as it is (its hop is its own link), unless that hop fails
    where the card does not (a card missing its single-stream runs while a run measured the hop short)."""
    over = OverTopology(_parts(card, topology, destinations) if topology is not None else ())
    if not over.parts:
        return card, over, []
    judged = replace(
        card,
        rows=[*card.rows, *((p.label, p.said) for p in over.parts)],
        working=[*card.working, OVER_TOPOLOGY],
        sources=list(card.sources),
        missing=[*card.missing, *(_missing(p) for p in over.unjudged)],
        values={**card.values, "over_topology": over.to_json()},
        nominal=card.nominal or over.nominal,
        loopback=card.loopback or any(p.loopback for p in over.parts),
    )
    if card.status == MISSING and not over.failed:  # nothing judged on the first link: still missing
        settle(judged, failed=False, judged=False)
    else:
        judged.headline = _headline(card, over, destinations)
        settle(judged, failed=card.status == FAIL or bool(over.failed), judged=True, warned=card.status == WARN)
    risks = [
        f"{p.label} carries {format_byte_rate(p.verdict.available_bytes_per_second)} but must carry "
        f"{format_byte_rate(p.verdict.required_bytes_per_second)}: the standby{'s' * (p.kind == SHARED_LINK)} "
        f"behind it will fall behind at peak."
        for p in over.failed
        if p.verdict is not None
    ]
    return judged, over, risks


def _parts(card: Card, topology: Topology, destinations: Sequence[Destination]) -> tuple[Part, ...]:
    """Every hop but the first destination's (the card judges its link, unless that hop fails where the card
    does not), every other destination's streams where worse than its hop, every shared link with copies."""
    first = destinations[0][0] if destinations else (topology.hops[0].hop.id if topology.hops else None)
    own = {ident: (name, transport) for ident, name, transport in destinations}
    parts, seen = [], set()
    for verdict in topology.hops:
        if verdict.hop.id in seen or verdict.required_bytes_per_second is None:
            continue  # a repeated id is the topology's problem; no history: the card says it is missing
        seen.add(verdict.hop.id)
        if verdict.hop.id == first:
            parts += [_hop_part(verdict)] * (verdict.status == FAIL and card.status != FAIL)
            continue
        parts.append(_hop_part(verdict))
        name, transport = own.get(verdict.hop.id, (verdict.name, None))
        if transport is not None and STATUS_ORDER.index(transport.status) > STATUS_ORDER.index(verdict.status):
            parts.append(_streams_part(name, transport))
    parts += [_link_part(v) for v in topology.shared_links if v.required_bytes_per_second is not None]
    return tuple(parts)


def _missing(part: Part) -> str:
    """What would judge a part: a hop's and a shared link's missing items name them already."""
    return part.missing if part.missing and part.kind != DESTINATION else f"{part.label}: {part.missing or part.said}"


def _verdict(judged: HopVerdict | SharedLinkVerdict) -> Verdict | None:
    if judged.required_bytes_per_second is None or judged.capacity_bytes_per_second is None:
        return None
    return Verdict(judged.name, judged.required_bytes_per_second, judged.capacity_bytes_per_second)


def _hop_part(verdict: HopVerdict) -> Part:
    to_measure = f"an ASYNC run over the hop {verdict.path} measures it" if verdict.basis == NOMINAL else ""
    return Part(
        HOP,
        f"Hop {verdict.path}",
        verdict.status,
        verdict.headline.removeprefix(f"{verdict.path}: "),
        _verdict(verdict),
        verdict.basis,
        to_measure,
        verdict.missing[0] if verdict.missing else "",
    )


def _link_part(verdict: SharedLinkVerdict) -> Part:
    to_measure = ""
    if verdict.basis == NOMINAL:
        hops = ", ".join(verdict.hop_names)
        to_measure = f"ASYNC runs to {hops} at once (a cluster run) measure the shared link {verdict.name}"
    return Part(
        SHARED_LINK,
        f"Shared link {verdict.name}",
        verdict.status,
        verdict.headline,
        _verdict(verdict),
        verdict.basis,
        to_measure,
        verdict.missing[0] if verdict.missing else "",
    )


def _streams_part(name: str, transport: Card) -> Part:
    """Another destination's own transport card, worse than its hop (a thread's single stream is short)."""
    result = transport.result if isinstance(transport.result, KeepUp) else None
    tightest = result.tightest if result is not None else None
    basis = (NOMINAL if transport.nominal else MEASURED) if tightest is not None else None
    to_measure = f"single-connection ASYNC runs to {name} measure its streams" if basis == NOMINAL else ""
    said = f"{transport.badge}: {transport.headline}"
    missing = transport.missing[0] if transport.missing else ""
    return Part(
        DESTINATION,
        f"Streams to {name}",
        transport.status,
        said,
        tightest,
        basis,
        to_measure,
        missing,
        transport.loopback,
    )


def _headline(card: Card, over: OverTopology, destinations: Sequence[Destination]) -> str:
    """FAIL: what is short, each part by name; else the card's own words and the tightest part if tighter."""
    own = bare_headline(card)
    if card.status == FAIL or over.failed:
        words = [own.removeprefix("Short: ")] if card.status == FAIL else []
        words += [p.sentence for p in over.failed]
        if card.status != FAIL and own:
            first = destinations[0][1] if destinations else "the first destination"
            words.append(f"the link to {first} alone: {own[:1].lower()}{own[1:]}")
        return "Short: " + "; ".join(words)
    result = card.result if isinstance(card.result, KeepUp) else None
    mine = result.tightest.margin_percent if result is not None and result.tightest is not None else None
    tightest = min(over.judged, key=lambda p: p.verdict.margin_percent, default=None)
    if tightest is not None and (mine is None or tightest.verdict.margin_percent < mine):
        verdict = tightest.verdict
        own += (
            f"{'; ' if own else ''}tighter on {tightest.label[:1].lower()}{tightest.label[1:]}: margin "
            f"{format_byte_rate(verdict.margin_bytes_per_second)} ({verdict.margin_percent:+,.1f} %)"
        )
    return own
