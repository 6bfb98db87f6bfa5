"""A plan card as the page, the JSON API and the report show it, and the one rule for its badge.

A card carries its typed result (`result`, one of planning.cards' dataclasses) and the words
planning.writer wrote from it: the headline, the rows, the working. `settle` decides the badge from
the card's own outcomes and rewrites the headline for it, so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from redolab.core.units import wall_clock
from redolab.runs.measured import Source

# Statuses a card can have, from best to worst; the page colours them.
PASS, INFO, WARN, PARTIAL, MISSING, FAIL = "pass", "info", "warn", "partial", "missing", "fail"


@dataclass
class Card:
    key: str
    title: str
    status: str = MISSING
    headline: str = ""
    rows: list[tuple[str, str]] = field(default_factory=list)  # label, value with its unit
    working: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # what would complete the card
    values: dict = field(default_factory=dict)  # the JSON form, units in the keys
    lag_series: dict[int, list[tuple[datetime, float]]] | None = None
    nominal: bool = False  # a verdict rests on the environment's nominal link, not a measurement
    result: object | None = None  # the typed result the words and the values were written from
    loopback: bool = False  # a figure rests on a loopback run chosen as evidence (this machine, not the link)

    def cite(self, source: Source) -> None:
        if source not in self.sources:
            self.sources.append(source)

    @property
    def capacity_basis(self) -> str | None:
        """What the card's capacity rests on when it is not a run over the link, in the badge's words."""
        said = [word for word, on in (("nominal", self.nominal), ("loopback", self.loopback)) if on]
        return " and ".join(said) if said and self.status != MISSING else None

    @property
    def badge(self) -> str:
        basis = self.capacity_basis
        return f"{self.status} ({basis})" if basis else self.status

    @property
    def more_missing(self) -> list[str]:
        """The missing items the headline does not already say (a MISSING card's headline is its first)."""
        return self.missing[1:] if self.status == MISSING else self.missing


def show_time(moment: datetime | None, zone: str) -> str:
    """A UTC time as the database's clock shows it, with the zone's name."""
    if moment is None:
        return "–"
    return f"{wall_clock(moment, zone):%Y-%m-%d %H:%M} {zone}"


def settle(card: Card, *, failed: bool, judged: bool, warned: bool = False, info: bool = False) -> None:
    """The one rule for a card's badge: FAIL when a judged figure falls short, WARN for a risk short of
    failure, PARTIAL when what is judged passes but something is still missing, MISSING when nothing
    could be judged, INFO for a figure that is not a verdict, else PASS."""
    if failed:
        card.status = FAIL
    elif warned:
        card.status = WARN
    elif not judged:
        card.status = MISSING
    elif card.missing:
        card.status = PARTIAL
    elif info:
        card.status = INFO
    else:
        card.status = PASS
    if card.status == MISSING:
        card.headline = "Missing: " + (card.missing[0] if card.missing else "nothing to compute from")
    elif card.status == PARTIAL:
        card.headline = f"Partly measured: {_after_prefix(card.headline)}" if card.headline else ""
    prefix = _capacity_prefix(card)
    if prefix and card.headline and not card.headline.startswith(prefix):
        card.headline = f"{prefix}{_after_prefix(card.headline)}"


def bare_headline(card: Card) -> str:
    """The headline as its writer wrote it, before `settle` prefixed it ("Nominal, not measured: ",
    "Partly measured: "): what a card judged again over more parts is settled from ("" for MISSING)."""
    if card.status == MISSING:
        return ""
    headline = card.headline.removeprefix(_capacity_prefix(card))
    if card.status == PARTIAL:
        headline = headline.removeprefix("Partly measured: ").removeprefix("partly measured: ")
    return headline[:1].upper() + headline[1:]


def _after_prefix(headline: str) -> str:
    """A headline continued after a prefix: its first word in lower case, unless an acronym (SYNC)."""
    return headline if headline[1:2].isupper() else headline[0].lower() + headline[1:]


def _capacity_prefix(card: Card) -> str:
    """The headline's first words when a figure does not rest on a run over the link."""
    if card.status == MISSING:
        return ""
    if card.nominal and card.loopback:
        return "Nominal and loopback, not measured on the link: "
    if card.nominal:
        return "Nominal, not measured: "
    return "Loopback, not the link: " if card.loopback else ""
