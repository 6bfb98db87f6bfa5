"""The answer strip that opens the environment page and the report's first page: the link for the RPO,
then one line per question a change board asks, with the card's badge and its number, read from the
card's typed result (planning.results); nothing is computed here but words.

A verdict resting on the environment's nominal link says which run would make it a measured one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from redolab.core.units import format_bit_rate, format_byte_rate, format_bytes, format_duration
from redolab.planning.apply import ApplySide
from redolab.planning.card import MISSING, PARTIAL, PASS, WARN, Card
from redolab.planning.compression import compressed_link
from redolab.planning.over_topology import OverTopology
from redolab.planning.plan import Plan
from redolab.planning.rehearsal_card import RehearsalOutcome
from redolab.planning.results import SHORT, BufferSizing, CopyTime, KeepUp, LagExposure, SyncCommit

Show = Callable[[datetime | None], str]


@dataclass(frozen=True)
class Answer:
    """One question's line: the card's badge, its figure with the unit (or what is missing), and what
    would turn a nominal verdict into a measured one."""

    key: str  # the card it reads ("risks": the plan's risk list)
    question: str
    status: str
    badge: str
    number: str
    to_measure: str = ""


QUESTIONS = {  # in the order a change board reads them (issue 55): the first five open the environment page
    "transport": "Does the link keep up with the redo?",
    "apply": "Standby apply: keeps up, within the RTO?",
    "instantiation": "Instantiation time against the goal",
    "lag": "ASYNC lag and data at risk",
    "commit": "SYNC commit cost",
    "rehearsal": "The worst window replayed: lag against the RPO goal",
    "buffers": "Settings to apply",
    "risks": "Open risks",
}
# the strip on the environment page
FIRST_SCREEN = ("transport", "apply", "instantiation", "lag", "commit", "rehearsal")


def answers(plan: Plan, show: Show) -> list[Answer]:
    """The answers in the order a change board reads them."""
    return [
        _from_card(plan.card("transport"), lambda result: _keep_up(result, plan.over_topology)),
        _from_card(plan.card("apply"), _apply),
        _from_card(plan.card("instantiation"), _copy_time),
        _from_card(plan.card("lag"), lambda result: _lag(result, show)),
        _from_card(plan.card("commit"), _commit),
        _from_card(plan.card("rehearsal"), _rehearsal),
        _from_card(plan.card("buffers"), lambda result: _settings(result, plan)),
        _risks(plan),
    ]


NEEDS = {"history": "import redo history", "goal": "set an RPO goal"}  # what the link for the RPO waits for


@dataclass(frozen=True)
class RpoLink:
    """The strip's first line: the least link rate that keeps transport lag within the RPO all of the time
    (the plan's `rpo_sizing`), or what it still needs: `needs` holds "history" and/or "goal"."""

    figure: str = ""
    needs: tuple[str, ...] = ()

    @property
    def words(self) -> str:
        """The figure, or what to do first: "import redo history and set an RPO goal"."""
        return self.figure or " and ".join(NEEDS[need] for need in self.needs)

    @property
    def text(self) -> str:
        return f"Link for the RPO: {self.words}"

    @property
    def steps(self) -> tuple[tuple[str, str], ...]:
        """What it waits for, each as (need, words): the page links each to where it is done."""
        return tuple((need, NEEDS[need]) for need in self.needs)


@dataclass(frozen=True)
class Strip:
    """The answer strip that opens the environment page and the report: the link for the RPO, then one
    line per question."""

    rpo_link: RpoLink
    answers: list[Answer]


def answer_strip(plan: Plan, show: Show, *, rpo_goal_seconds: float | None, keys=FIRST_SCREEN) -> Strip:
    """The link for the RPO and the answers to `keys` (every question when None), in QUESTIONS' order."""
    found = [answer for answer in answers(plan, show) if keys is None or answer.key in keys]
    return Strip(rpo_link(plan, rpo_goal_seconds), found)


def rpo_link(plan: Plan, rpo_goal_seconds: float | None) -> RpoLink:
    """The link for the RPO from the plan's `rpo_sizing` (planning.rpo_sizing; its first target is 100 % of
    the time, its bits per second the line rate needed); without one, what it waits for: the redo history,
    the RPO goal. Where one thread's own stream cannot hold the RPO, no link size does: said instead."""
    sizing = plan.rpo_sizing
    if sizing is None:
        needs = (*(("history",) if plan.requirement is None else ()), *(("goal",) if rpo_goal_seconds is None else ()))
        return (
            RpoLink(needs=needs) if needs else RpoLink(figure="no figure yet: the redo history has no times to replay")
        )
    rpo = format_duration(sizing.rpo_seconds)
    short = [thread.thread for thread in sizing.streams_short]
    if short:
        threads = ", ".join(str(t) for t in short)
        return RpoLink(
            figure=f"no link size holds the RPO of {rpo}: the single stream of thread{'s' if len(short) > 1 else ''} "
            f"{threads} is too slow"
        )
    if not sizing.targets:
        return RpoLink(figure="no figure yet: see the transport card")
    first = sizing.targets[0]
    reserved = f"; {sizing.reserved_note}" if sizing.reserved_note else ""
    compressed = compressed_link(plan.compression, plan.requirement, sizing)
    return RpoLink(
        figure=f"{format_bit_rate(first.bits_per_second)}{' as written' if compressed else ''} "
        f"({first.share_of_time * 100:g} % of the time within the RPO of {rpo}{reserved})"
        + (f"; {compressed.words}" if compressed else "")
    )


def _from_card(card: Card, words: Callable[[object], tuple[str, str]]) -> Answer:
    """A card's badge with its figure; a card with nothing to judge names what it is missing."""
    question = QUESTIONS[card.key]
    if card.status == MISSING or card.result is None:
        missing = card.missing[0] if card.missing else "nothing to compute from"
        head, colon, rest = missing.partition(":")
        if colon and head.endswith(" yet"):  # "no figure yet: no rehearsal yet: ..." said "yet" twice
            missing = head.removesuffix(" yet") + colon + rest
        return Answer(card.key, question, card.status, card.badge, f"no figure yet: {missing}")
    number, to_measure = words(card.result)
    if card.status == PARTIAL and card.missing:
        number += f"; still missing: {card.missing[0]}"
    if card.loopback and not card.nominal:  # a run on this machine stands in for the link
        to_measure = "a run between the primary and the standby over the link replaces the loopback run"
    return Answer(
        card.key, question, card.status, card.badge, number, to_measure if card.nominal or card.loopback else ""
    )


def _streams_to_run(threads: list[int]) -> str:
    if not threads:
        return ""
    nodes = ", ".join(str(t) for t in threads)
    return (
        f"a single-connection ASYNC run from primary node{'s' if len(threads) > 1 else ''} {nodes} to the "
        "standby replaces the nominal link rate with a measured one"
    )


def _keep_up(result: KeepUp, over: OverTopology | None = None) -> tuple[str, str]:
    """The tightest verdict over the first link's streams and, with several destinations, every hop and
    shared link (planning.over_topology): a shared link that fails is the one named."""
    judged = [(v.subject.split(":")[0], v) for v in result.verdicts]
    judged += [(p.label, p.verdict) for p in (over.judged if over is not None else ())]
    if not judged:
        return "no stream to judge against", ""
    subject, tightest = min(judged, key=lambda pair: pair[1].margin_percent)
    failed = sum(not verdict.passed for _, verdict in judged)
    needs, carries = tightest.required_bytes_per_second, tightest.available_bytes_per_second
    number = (
        f"{subject}: margin {tightest.margin_percent:+,.1f} % (needs {format_byte_rate(needs)}, "
        f"carries {format_byte_rate(carries)})"
    )
    if failed > 1:
        number += f"; {failed} of {len(judged)} verdicts short"
    nominal = [t.need.thread for t in result.threads if t.stream is not None and t.stream.nominal]
    to_measure = _streams_to_run(nominal)
    summed = result.summed
    if summed is not None and summed.stream is not None and summed.stream.nominal:
        to_measure += ("; " if to_measure else "") + "an ASYNC run over the link (any connection count) measures all "
        to_measure += "threads together"
    parts = [p.to_measure for p in (over.judged if over is not None else ()) if p.to_measure]
    to_measure = "; ".join([*([to_measure] if to_measure else []), *parts])
    return number, to_measure


def _apply(result: ApplySide) -> tuple[str, str]:
    """The apply rate against the summed peak, and what a failover applies first against the RTO goal."""
    rate, peak = format_byte_rate(result.apply_bytes_per_second), format_byte_rate(result.peak_bytes_per_second)
    number = f"{rate} against a {peak} peak" + ("" if result.keeps_up else ": falls behind")
    if result.apply_backlog_seconds is not None:
        goal = f" (RTO goal {format_duration(result.rto_goal_seconds)})" if result.rto_goal_seconds else ""
        number += f"; a failover applies up to {format_duration(result.apply_backlog_seconds)} first{goal}"
    return number, ""


def _lag(result: LagExposure, show: Show) -> tuple[str, str]:
    worst, short = result.worst, result.in_state(SHORT)
    if worst is not None:
        replay = worst.replay
        number = (
            f"up to {format_duration(replay.max_lag_seconds)} of redo at risk ({format_bytes(replay.max_backlog_bytes)}"
            f" queued) on thread {worst.need.thread} at {show(replay.max_at)}"
        )
        if not replay.drained:
            number += "; still behind when the history ends"
    elif short:
        threads = ", ".join(str(t.need.thread) for t in short)
        number = f"0 s at the averages replayed; thread{'s' if len(short) > 1 else ''} {threads} short: bursts queue"
    else:
        number = "0 s: never behind, every replayed thread's stream carries its requirement"
    nominal = [t.need.thread for t in result.replayed if t.stream.nominal]
    return number, _streams_to_run(nominal)


def _rehearsal(result: RehearsalOutcome) -> tuple[str, str]:
    measured, goal = result.measured, result.rpo_goal_seconds
    number = (
        f"largest lag {format_duration(measured['max_lag_seconds'])}, {format_bytes(measured['max_backlog_bytes'])} "
        f"at risk, measured over {result.fact.window_label}{result.fact.at_volumes}"
    )
    if goal is not None:
        number += f" ({'within' if result.within_goal else 'over'} the {format_duration(goal)} RPO goal)"
    if result.prediction is not None:
        number += f"; the model predicted {format_duration(result.prediction.max_lag_seconds)}"
    return number, ""


def _commit(result: SyncCommit) -> tuple[str, str]:
    if result.impact is None:
        return "no figure yet", ""
    sync = format_duration(result.impact.added_seconds("SYNC"))
    if result.mode == "ASYNC":
        number = f"ASYNC adds 0 s per commit; SYNC would add {sync}"
    else:
        number = (
            f"{result.mode} adds {format_duration(result.added_seconds)} per commit, "
            f"ceiling {format_byte_rate(result.ceiling_bytes_per_second)}"
        )
    if result.queues:
        number += f"; commits queue at the {format_byte_rate(result.peak_bytes_per_second)} peak"
    return number, ""


def _copy_time(result: CopyTime) -> tuple[str, str]:
    if result.estimate is None:
        return "no figure yet", ""
    total, goal = format_duration(result.estimate.total_seconds), result.goal_seconds
    if goal is None:
        number = f"about {total} (no goal set)"
    else:
        number = f"about {total} against the {format_duration(goal)} goal ({'over' if result.over else 'within'})"
    to_measure = ""
    if result.nominal:
        to_measure = (
            "an ASYNC run from each primary node, best a connection sweep, replaces the nominal link shared by "
            f"{result.node_pairs} node pair{'s' if result.node_pairs > 1 else ''}"
        )
    return number, to_measure


def _settings(result: BufferSizing, plan: Plan) -> tuple[str, str]:
    if result.bdp is None:
        return "no figure yet", ""
    socket = result.bdp.socket_buffer_bytes
    count = sum(len(snippet.lines) for snippet in plan.snippets)
    files = len(plan.snippets)
    return (
        f"socket buffers {socket:,} bytes ({format_bytes(socket)}); {count} setting{'s' if count != 1 else ''} "
        f"in {files} place{'s' if files != 1 else ''}",
        "",
    )


def _risks(plan: Plan) -> Answer:
    """WARN with the count when the plan found risks; none found is a PASS only when something was judged."""
    count = len(plan.risks)
    if count:
        return Answer("risks", QUESTIONS["risks"], WARN, WARN, f"{count} open risk{'s' if count != 1 else ''}")
    if all(card.status == MISSING for card in plan.cards):
        return Answer("risks", QUESTIONS["risks"], MISSING, MISSING, "none found yet: nothing could be judged so far")
    return Answer("risks", QUESTIONS["risks"], PASS, PASS, "none found in the data so far")
