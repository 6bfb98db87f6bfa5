"""The Rehearsal card: the worst window of the environment's own redo replayed through the link,
its measured transport lag, drain time and redo at risk against the RPO goal, beside the model's
prediction for the same window (planning.rehearsal_model), with the disagreement explained.

A rehearsal is evidence like a run: over the link by default; a loopback one (both ends on this
machine) or a time-compressed one (a quick look: K times the redo rate) is used only when chosen,
and the card then says so. With none yet, the card says which window would be replayed and how
long it takes. Units: seconds, bytes, bytes per second."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from datetime import datetime

from redolab.core.units import format_byte_rate, format_bytes, format_count, format_duration
from redolab.planning.card import Card, settle
from redolab.planning.facts import Measurements
from redolab.planning.rehearsal_model import LagComparison, RehearsalPrediction, compare, predict_rehearsal
from redolab.planning.rpo_sizing import path_efficiency
from redolab.planning.tier_rehearsal import TierDrain, TierRehearsal, tier_lag
from redolab.redo.requirement import Requirement
from redolab.rehearsals.window import RehearsalRefused, Window, choose_window
from redolab.runs.measured import Source


@dataclass(frozen=True)
class RehearsalFact:
    """One finished rehearsal as the plan reads it (its measured result from rehearsals.results)."""

    id: int
    when: datetime
    window_kind: str
    window_start: datetime
    window_end: datetime
    window_label: str
    granularity_seconds: float | None
    granularity: str
    threads: tuple[int, ...]
    scale: float
    speedup: float
    mode: str
    loopback: bool
    status: str
    failure: str | None
    result: dict | None
    notes: tuple[str, ...] = ()  # threads left out of the replay and why, thin data
    # labels of the imports the replayed series came from (Rehearsal.imports); empty: not recorded
    imports: tuple[str, ...] = ()
    cap_bits_per_second: int | None = None  # capped at a link tier: its line rate, shared by the connections
    cap_label: str = ""

    @property
    def compressed(self) -> bool:
        return self.speedup > 1

    @property
    def at_volumes(self) -> str:
        """' at x1.3 volumes' (with a multiplication sign) when the replay multiplied the recorded redo ('' at
        1): said beside each figure it measured, as those are bytes and lag of the scaled redo."""
        return f" at ×{self.scale:g} volumes" if self.scale != 1 else ""

    @property
    def source(self) -> Source:
        return Source(f"rehearsal #{self.id}", f"/rehearsals/{self.id}")

    def window(self) -> Window:
        return Window(
            self.window_start,
            self.window_end,
            self.window_kind,
            self.window_label,
            self.granularity_seconds,
            self.granularity,
            "",
            self.threads,
            0.0,
        )


@dataclass(frozen=True)
class RehearsalOutcome:
    """The card's typed result: the rehearsal read, the model beside it, and the goal."""

    fact: RehearsalFact
    rpo_goal_seconds: float | None
    prediction: RehearsalPrediction | None
    drain: object | None  # the Capacity the prediction drained at
    comparison: LagComparison | None
    no_prediction: str | None  # why there is none

    @property
    def measured(self) -> dict:
        return self.fact.result or {}

    @property
    def within_goal(self) -> bool | None:
        if self.rpo_goal_seconds is None:
            return None
        return bool(self.measured.get("drained")) and self.measured["max_lag_seconds"] <= self.rpo_goal_seconds

    def to_json(self) -> dict:
        m, p = self.measured, self.prediction
        return {
            "rehearsal_id": self.fact.id,
            "window": {
                "label": self.fact.window_label,
                "start": self.fact.window_start.isoformat(),
                "end": self.fact.window_end.isoformat(),
                "granularity": self.fact.granularity,
                "notes": list(self.fact.notes),
            },
            "scale": self.fact.scale,
            "speedup": self.fact.speedup,
            "compressed": self.fact.compressed,
            "loopback": self.fact.loopback,
            "rpo_goal_seconds": self.rpo_goal_seconds,
            "within_goal": self.within_goal,
            "measured": {k: m.get(k) for k in ("max_lag_seconds", "max_backlog_bytes", "drain_seconds", "drained")},
            "predicted": None
            if p is None
            else {
                "max_lag_seconds": p.max_lag_seconds,
                "max_backlog_bytes": p.max_backlog_bytes,
                # from the worst moment (the model's), not from the last scheduled byte (the measured)
                "drain_after_worst_seconds": p.drain_seconds,
                "drain_bytes_per_second": p.drain_bytes_per_second,
            },
            "disagreement_ratio": self.comparison.disagreement_ratio if self.comparison else None,
            "explanation": self.comparison.explanation if self.comparison else None,
        }


def outcome(
    fact: RehearsalFact, *, requirement: Requirement | None, measured: Measurements, rpo_goal_seconds: float | None
) -> RehearsalOutcome:
    """The rehearsal's result beside the model's prediction for the same window, drained at the
    slowest of its threads' single-stream capacities (the plan's own)."""
    prediction = drain = comparison = None
    streams = [measured.stream(t) for t in fact.threads]
    why = not_the_same_redo(fact, requirement)
    if why is not None:
        pass
    elif fact.cap_bits_per_second is None and any(s is None for s in streams):
        why = "the model needs a rate to drain at: a single-connection ASYNC run, or the link's nominal rate"
    else:
        # capped at a tier: each connection drains at its share of the tier (its pacing), not at a run's rate
        drain = (
            tier_drain(fact, measured)
            if fact.cap_bits_per_second is not None
            else min(streams, key=lambda s: s.bytes_per_second)
        )
        prediction = predict_rehearsal(
            requirement,
            fact.window(),
            drain_bytes_per_second=drain.bytes_per_second,
            scale=fact.scale,
            speedup=fact.speedup,
        )
        if fact.result:
            comparison = compare(
                fact.result["max_lag_seconds"],
                prediction.max_lag_seconds,
                drain_bytes_per_second=drain.bytes_per_second,
            )
    return RehearsalOutcome(fact, rpo_goal_seconds, prediction, drain, comparison, why)


def not_the_same_redo(fact: RehearsalFact, requirement: Requirement | None) -> str | None:
    """Why the model cannot predict the rehearsal from the plan's history now (None: it can)."""
    if requirement is None or any(
        t not in requirement.threads or not requirement.threads[t].timed for t in fact.threads
    ):
        return "the redo history it replayed is no longer chosen in the plan's evidence"
    if fact.imports and set(fact.imports) != set(replay_imports(requirement, fact.threads)):
        # another import over the same hours gives the threads a replay series too: the model would
        # predict from redo that was not replayed, and call the difference a fault of the link
        return (
            f"the redo history it replayed ({', '.join(fact.imports)}) is not the plan's chosen history now "
            f"({', '.join(replay_imports(requirement, fact.threads)) or 'none'}): the model's prediction would "
            "not be of the same redo; rehearse again to compare"
        )
    return None


TIERS_SHOWN = 4  # capped rehearsals listed on the card: the newest at each tier, fastest first


def tier_rehearsals(
    chosen: list[RehearsalFact], *, requirement: Requirement | None, measured: Measurements, rpo_goal_seconds
) -> list[TierRehearsal]:
    """The newest finished capped rehearsal at each tier (of the chosen ones), its measured worst lag beside
    the model's at the tier (planning.tier_rehearsal) for the same replay (its scale and speedup)."""
    newest: dict[int, RehearsalFact] = {}
    for fact in sorted(chosen, key=lambda f: f.id):
        if fact.cap_bits_per_second and fact.result and not not_the_same_redo(fact, requirement):
            newest[fact.cap_bits_per_second] = fact
    found = []
    for cap in sorted(newest, reverse=True)[:TIERS_SHOWN]:
        fact = newest[cap]
        drain, m = tier_drain(fact, measured), fact.result
        lag = tier_lag(
            requirement, fact.window(), drain, rpo_seconds=rpo_goal_seconds, scale=fact.scale, speedup=fact.speedup
        )
        drained = bool(m.get("drained"))
        found.append(
            TierRehearsal(fact.id, lag, m["max_lag_seconds"], drained, rpo_goal_seconds, fact.at_volumes, fact.speedup)
        )
    return found


def tier_drain(fact: RehearsalFact, measured: Measurements) -> TierDrain:
    """A capped rehearsal's drain: the tier shared by its connections, at the path's efficiency."""
    return TierDrain(fact.cap_label, fact.cap_bits_per_second or 0, len(fact.threads), path_efficiency(measured))


def replay_imports(requirement: Requirement, threads: tuple[int, ...]) -> tuple[str, ...]:
    """The labels of the imports the threads' replay series come from, sorted (as a rehearsal stores them)."""
    bases = [requirement.threads[t].replay_basis for t in threads if t in requirement.threads]
    return tuple(sorted({label for basis in bases if basis is not None for label in basis.imports}))


def rehearsal_card(
    result: RehearsalOutcome | None,
    *,
    requirement: Requirement | None,
    left_out: list[tuple[RehearsalFact, str]],
    rpo_goal_seconds: float | None,
    no_history: str | None,
    zone: str,
    tiers: list[TierRehearsal] = (),
) -> tuple[Card, list[str]]:
    card = Card("rehearsal", "Rehearsal: the worst window replayed", result=result)
    if result is None:
        card.missing.append(_none_yet(requirement, left_out, no_history, zone))
        settle(card, failed=False, judged=False)
        return card, []
    fact, m = result.fact, result.measured
    card.cite(fact.source)
    if not m:
        card.missing.append(
            f"rehearsal #{fact.id} {fact.status} before any interval arrived"
            + (f" ({fact.failure})" if fact.failure else "")
            + ": start it again"
        )
        settle(card, failed=False, judged=False)
        return card, []
    card.loopback = fact.loopback
    card.values = {**result.to_json(), "tiers": [tier.to_json() for tier in tiers]}
    _rows(card, result)
    _tier_rows(card, tiers)
    risks = []
    if fact.compressed:
        card.missing.append(
            f"time compressed {fact.speedup:g}x (a quick look at {fact.speedup:g} times the redo rate): "
            "rehearse at speedup 1 for a verdict"
        )
    if rpo_goal_seconds is None:
        card.missing.append("an RPO goal on the environment (the data loss the business accepts, e.g. 30 s)")
    lag, at_risk = format_duration(m["max_lag_seconds"]), format_bytes(m["max_backlog_bytes"])
    failed = result.within_goal is False and not fact.compressed
    volumes, goal = fact.at_volumes, format_duration(rpo_goal_seconds) if rpo_goal_seconds is not None else ""
    if result.within_goal is None:
        card.headline = f"Largest transport lag {lag}, {at_risk} of redo at risk over {fact.window_label}{volumes}"
    elif result.within_goal:
        card.headline = f"Within the {goal} RPO goal: largest lag {lag}, {at_risk} at risk{volumes}"
    else:
        said = f"largest lag {lag}" if m.get("drained") else "the backlog had not drained when the replay stopped"
        card.headline = f"Over the {goal} RPO goal: {said}, {at_risk} at risk{volumes}"
        if failed and m.get("drained"):
            risks.append(
                f"Rehearsal #{fact.id} replayed {fact.window_label}{volumes} through the link: the transport lag "
                f"reached {lag}, over the {goal} RPO goal; a primary lost then loses that much redo."
            )
        elif failed:
            risks.append(
                f"Rehearsal #{fact.id} replayed {fact.window_label}{volumes} through the link and the backlog had not "
                f"drained when the replay stopped (largest lag {lag} by then, {at_risk} at risk): the link did not "
                f"keep up, and how far past the {goal} RPO goal the lag went is unknown."
            )
    settle(card, failed=failed, judged=True, info=rpo_goal_seconds is None)
    return card, risks


def _rows(card: Card, result: RehearsalOutcome) -> None:
    fact, m, p = result.fact, result.measured, result.prediction
    volumes = fact.at_volumes
    card.rows.append(("Window replayed", f"{fact.window_label}{volumes} ({format_count(len(fact.threads), 'thread')})"))
    card.rows.append(("Granularity", fact.granularity or "–"))
    if fact.notes:
        card.rows.append(("Left out or thin", "; ".join(fact.notes)))
    worst = max(m.get("threads") or [], key=lambda t: t.get("max_lag_seconds") or 0, default=None)
    thread = f" (thread {worst['thread']})" if worst and len(fact.threads) > 1 else ""
    card.rows.append(("Largest transport lag, measured", f"{format_duration(m['max_lag_seconds'])}{thread}{volumes}"))
    card.rows.append(("Largest redo at risk (backlog)", f"{format_bytes(m['max_backlog_bytes'])}{volumes}"))
    drained = m.get("drain_seconds")
    card.rows.append(
        (
            "Drain time after the last scheduled byte",
            format_duration(drained)
            if m.get("drained") and drained is not None
            else ("no backlog to drain" if m.get("drained") else "not drained when the replay stopped"),
        )
    )
    goal = result.rpo_goal_seconds
    card.rows.append(("RPO goal", format_duration(goal) if goal is not None else "not set"))
    if p is None:
        card.rows.append(("Model's prediction, same window", f"none: {result.no_prediction}"))
    else:
        card.rows.append(
            (
                "Model's prediction, same window",
                f"largest lag {format_duration(p.max_lag_seconds)}, {format_bytes(p.max_backlog_bytes)} queued, "
                f"each stream drained at {format_byte_rate(p.drain_bytes_per_second)} ({result.drain.label})",
            )
        )
        card.cite(result.drain.source)
    if result.comparison is not None:
        c = result.comparison
        card.rows.append(("Measured against the model", c.verdict))
        if c.explanation:
            card.working.append(c.explanation)
    card.working.append(
        "redoprobe replayed the window's redo slot by slot per thread, never sending a byte before its "
        "recorded time; the lag is the age of the oldest byte generated and not yet received by the "
        "standby host (as V$DATAGUARD_STATS' transport lag), the receiver's count being the truth."
    )


def _tier_rows(card: Card, tiers: list[TierRehearsal]) -> None:
    """Per tier rehearsed: measured worst lag beside the model's at the tier, and whether the RPO held."""
    for tier in tiers:
        card.rows.append(tier.row())
        card.cite(Source(f"rehearsal #{tier.rehearsal_id}", f"/rehearsals/{tier.rehearsal_id}"))
    if tiers:
        card.working.append(
            "at a tier: each of the rehearsal's connections (one a thread) was paced at the tier's line rate shared "
            "by the threads; the model drains each thread's redo of the window first in, first out at that share's "
            f"payload (line rate x efficiency / 8; {tiers[0].lag.drain.efficiency.basis})"
        )


# The worst hour of each requirement the process holds (stored requirements are kept per analysis, so
# one object per history): adding up a year of logs again costs ~0.1 s a page otherwise.
_WORST: dict[tuple[int, str], tuple[weakref.ref, Window | RehearsalRefused]] = {}


def _worst_hour(requirement: Requirement, zone: str) -> Window | RehearsalRefused:
    key = (id(requirement), zone)
    found = _WORST.get(key)
    if found is not None and found[0]() is requirement:
        return found[1]
    try:
        window: Window | RehearsalRefused = choose_window(requirement, "worst-60m", zone=zone)
    except RehearsalRefused as refused:
        window = refused
    if len(_WORST) > 256:
        _WORST.clear()
    _WORST[key] = (weakref.ref(requirement), window)
    return window


def _none_yet(
    requirement: Requirement | None, left_out: list[tuple[RehearsalFact, str]], no_history: str | None, zone: str
) -> str:
    if left_out:
        fact, why = left_out[0]
        return f"rehearsal #{fact.id} is not used ({why})"
    if requirement is None:
        return no_history or "no redo history yet: a rehearsal replays the history's worst hour"
    window = _worst_hour(requirement, zone)
    if isinstance(window, RehearsalRefused):
        return f"no rehearsal possible: {window}"
    return (
        f"no rehearsal yet: Rehearse would replay {window.label} ({format_count(len(window.threads), 'thread')}, "
        f"{format_byte_rate(window.bytes_per_second)} on average) through the link; it takes "
        f"{format_duration(window.seconds)} plus the time to drain"
    )
