"""The instantiation card when the copy's channels are set (pure): the copy as RMAN runs it
(planning.copy_time) from the measured node pair, the redo that piles up meanwhile and the catch-up at
the link the transport card judges. Units: bytes, seconds, bytes per second.

Without channels the card stays the seed's estimate (planning.writer.instantiation_card). With them,
the card's CopyTime carries an InstantiationEstimate whose copy is the modelled copy and whose total is
the copy plus the catch-up, so the answer strip, the report and the JSON read one number.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from redolab.core.units import format_byte_rate, format_bytes, format_duration
from redolab.planning import copy_time as model
from redolab.planning.card import settle
from redolab.planning.facts import Facts, Measurements
from redolab.planning.instantiation import InstantiationEstimate
from redolab.planning.results import CopyTime, copy_time
from redolab.planning.rpo_sizing import summed_pieces
from redolab.planning.writer import instantiation_card as seed_card
from redolab.redo.requirement import Requirement
from redolab.runs.measured import Source

RMAN = Source("Oracle Database Backup and Recovery Reference: RESTORE (FROM SERVICE, SECTION SIZE)")


@dataclass(frozen=True)
class CopyRun:
    """The copy as it will run: the settings, the rates the channels get and why, the schedule (None
    without a datafile list: the even share stands in), the redo piled up and its catch-up."""

    settings: model.CopySettings
    nodes: int
    rates: model.ChannelRates
    basis: tuple[str, ...]  # where each rate comes from
    schedule: model.CopyPlan | None
    copy_seconds: float
    pile: model.PileUp | None  # None: no redo history with times
    database_bytes: int | None = None  # the environment's size, to compare with the datafile list

    @property
    def finish_seconds(self) -> float:
        """The copy, then the catch-up when it is known."""
        catch_up = self.pile.catch_up_seconds if self.pile is not None else None
        return self.copy_seconds + (catch_up or 0.0)

    def to_json(self) -> dict:
        return {
            "channels_per_node": self.settings.channels_per_node,
            "nodes": self.nodes,
            "section_bytes": self.settings.section_bytes,
            "per_channel_bytes_per_second": self.rates.per_channel_bytes_per_second,
            "pair_aggregate_bytes_per_second": self.rates.pair_aggregate_bytes_per_second,
            "standby_write_bytes_per_second": self.rates.standby_write_bytes_per_second,
            "link_bytes_per_second": self.rates.link_bytes_per_second,
            "copy_seconds": self.copy_seconds,
            "finish_seconds": self.finish_seconds,
            "schedule": self.schedule.to_json() if self.schedule is not None else None,
            "redo": self.pile.to_json() if self.pile is not None else None,
        }


def channel_rates(facts: Facts, measured: Measurements, result: CopyTime, per_node: int) -> tuple:
    """The rates of one node pair's channels and the words for their basis: one channel the measured
    pair's throughput over its connections, the pair at most that throughput, the standby node at most
    its disk's write rate, every node together at most the link."""
    pair = result.estimate.throughput_per_pair_bytes_per_second
    conns = result.slowest.conns if result.slowest is not None else per_node
    basis = [
        f"one channel: {format_byte_rate(pair / conns)} (the node pair's {format_byte_rate(pair)} over "
        f"{conns} connection{'s' if conns > 1 else ''}); a node's channels together at most {format_byte_rate(pair)}"
    ]
    if conns < per_node:
        basis.append(
            f"measured with {conns} connections, below the {per_node} channels: more channels are assumed to add "
            "nothing (run a connection sweep up to the channel count)"
        )
    disk = facts.standby_disk
    if disk is not None:
        basis.append(f"the standby writes at most {format_byte_rate(disk.disk.rate_bytes_per_second)} ({disk.label})")
    link = measured.link_bytes_per_second
    rates = model.ChannelRates(pair / conns, pair, disk.disk.rate_bytes_per_second if disk else None, link)
    return rates, tuple(basis)


def copy_run(facts: Facts, requirement: Requirement | None, measured: Measurements, result: CopyTime) -> CopyRun:
    settings = facts.copy
    nodes = settings.nodes or max(1, facts.standby_nodes)
    rates, basis = channel_rates(facts, measured, result, settings.channels_per_node)
    shape = {"channels_per_node": settings.channels_per_node, "nodes": nodes, "rates": rates}
    schedule = None
    if settings.datafiles:
        schedule = model.plan_copy(list(settings.datafiles), section_bytes=settings.section_bytes, **shape)
        copy = schedule.copy_seconds
    else:
        copy = model.even_share_seconds(facts.database_bytes, **shape)
    pieces = summed_pieces(requirement) if requirement is not None else None
    aggregate = measured.aggregate()
    pile = None
    if pieces is not None:
        link = aggregate.bytes_per_second if aggregate is not None else None
        pile = model.pile_up(pieces, copy, link_bytes_per_second=link, archive_free_bytes=settings.archive_free_bytes)
    return CopyRun(settings, nodes, rates, basis, schedule, copy, pile, facts.database_bytes)


def with_copy_run(facts: Facts, requirement: Requirement | None, measured: Measurements, result: CopyTime):
    """The card's result with the copy as it will run (unchanged without channels, a size or a rate)."""
    if facts.copy is None or result.estimate is None:
        return result, None
    run = copy_run(facts, requirement, measured, result)
    old = result.estimate
    overhead = (run.finish_seconds / run.copy_seconds - 1) * 100
    estimate = InstantiationEstimate(
        old.database_bytes,
        old.throughput_per_pair_bytes_per_second,
        run.nodes,
        overhead,
        run.copy_seconds,
        run.finish_seconds,
    )
    return replace(result, estimate=estimate), run


def sentence(run: CopyRun) -> str:
    """ASR-style: when the copy finishes, with what, the redo that piles up and the catch-up."""
    channels = run.settings.channels_per_node * run.nodes
    said = (
        f"finishes in {format_duration(run.copy_seconds)} with {channels} channels "
        f"({run.settings.channels_per_node} per node) on {run.nodes} node{'s' if run.nodes > 1 else ''}"
    )
    if run.pile is not None:
        said += f"; {format_bytes(run.pile.redo_bytes)} of redo piles up"
        if run.pile.catch_up_seconds is not None:
            said += f"; {format_duration(run.pile.catch_up_seconds)} to catch up"
    return said


def instantiation_card(facts: Facts, requirement: Requirement | None, measured: Measurements):
    """The instantiation card: the copy as it will run when its channels are set, else the seed's estimate."""
    result, run = with_copy_run(facts, requirement, measured, copy_time(facts, measured))
    card, risks = seed_card(result, measured)
    if run is None:
        return card, risks
    card.title = "Instantiation as it will run"
    card.rows = _rows(run, result)
    card.working = [*card.working[:-1], *_working(run)]  # the pair's basis, then this model (not the seed's formula)
    card.values = {**result.to_json(), "copy": run.to_json()}
    goal, finish = result.goal_seconds, format_duration(run.finish_seconds)
    card.headline = sentence(run)[0].upper() + sentence(run)[1:]
    if goal is not None:
        card.headline += f": {finish} in all, {'over' if result.over else 'within'} the {format_duration(goal)} goal"
    at_risk = _at_risk(run.pile)
    if at_risk:
        card.headline += "; " + "; ".join(at_risk)
    risks = [r for r in risks if not r.startswith("Instantiation takes")]
    if result.over:
        risks.append(
            f"Instantiation takes about {finish} with the copy and its catch-up, over the "
            f"{format_duration(goal)} goal: add channels or nodes, set SECTION SIZE where a bigfile caps the copy, "
            "or move the goal."
        )
    if run.pile is not None and run.pile.fits is False:
        risks.append(
            f"The {format_bytes(run.pile.redo_bytes)} of redo generated during the copy does not fit the "
            f"{format_bytes(run.pile.archive_free_bytes)} free on the archive destination: add space or shorten "
            "the copy."
        )
    card.cite(RMAN)
    settle(card, failed=result.over, judged=True, warned=bool(at_risk), info=goal is None)
    return card, risks


def _at_risk(pile: model.PileUp | None) -> list[str]:
    """What the redo of the copy puts at risk: the archive destination, or a catch-up that never ends."""
    if pile is None:
        return []
    found = []
    if pile.fits is False:
        found.append(
            f"the archive destination is at risk: {format_bytes(pile.redo_bytes)} against "
            f"{format_bytes(pile.archive_free_bytes)} free"
        )
    if pile.link_bytes_per_second is not None and pile.catch_up_seconds is None and not pile.history_shorter:
        found.append("the catch-up is at risk: the link stays below the redo that follows")
    return found


def _rows(run: CopyRun, result: CopyTime) -> list[tuple[str, str]]:
    settings, schedule = run.settings, run.schedule
    rows = [
        (
            "Channels",
            f"{settings.channels_per_node} per node x {run.nodes} nodes = {settings.channels_per_node * run.nodes}",
        ),
        ("SECTION SIZE", format_bytes(settings.section_bytes) if settings.section_bytes else "not used (whole files)"),
        ("One channel", format_byte_rate(run.rates.per_channel_bytes_per_second)),
        ("Copy", format_duration(run.copy_seconds)),
    ]
    if schedule is not None:
        largest = schedule.largest_file
        rows += [
            ("Without SECTION SIZE", format_duration(schedule.whole_files_seconds)),
            (
                "Largest file",
                f"{format_bytes(largest.bytes)} ({largest.tablespace}{', bigfile' if largest.bigfile else ''}): "
                f"at least {format_duration(schedule.largest_file_seconds)} on its one channel",
            ),
            ("Every channel busy to the end", format_duration(schedule.even_share_seconds)),
            (
                "SECTION SIZE that lifts the cap",
                format_bytes(schedule.lifting_section_bytes)
                if schedule.lifting_section_bytes
                else "none: the rates cap it",
            ),
        ]
    pile = run.pile
    if pile is not None:
        free = "not given" if pile.fits is None else ("fits" if pile.fits else "does not fit")
        rows += [
            (
                "Redo during the copy",
                format_bytes(pile.redo_bytes) + (" (at least: the history is shorter)" if pile.history_shorter else ""),
            ),
            (
                "Archive destination free",
                f"{format_bytes(pile.archive_free_bytes)}: {free}" if pile.archive_free_bytes else free,
            ),
            (
                "Catch-up at the link",
                format_duration(pile.catch_up_seconds) if pile.catch_up_seconds is not None else "not known",
            ),
        ]
    rows.append(("Copy and catch-up", format_duration(run.finish_seconds)))
    return rows


def _working(run: CopyRun) -> list[str]:
    said = list(run.basis)
    said.append(
        "the copy: RMAN RESTORE ... FROM SERVICE hands the files (with SECTION SIZE: their sections, at most 256 a "
        "file), largest first, to the first free channel; a node's busy channels share its rate (the manual: "
        "Instantiation as it will run)"
    )
    if run.schedule is None:
        said.append(
            "no datafile list yet: every channel is assumed busy to the end (the even share); a bigfile copied "
            "without SECTION SIZE can take longer on its one channel (collect DBA_DATA_FILES)"
        )
    elif run.database_bytes and run.schedule.total_bytes < run.database_bytes * 0.99:
        said.append(
            f"the datafile list adds up to {format_bytes(run.schedule.total_bytes)}, below the database's "
            f"{format_bytes(run.database_bytes)}: in a CDB's root DBA_DATA_FILES lists the root's files only, so the "
            "copy is longer than shown (collect from each PDB, or give the size of the whole)"
        )
    elif run.schedule.capped_by_largest_file:
        whole, even = run.schedule.whole_files_seconds, run.schedule.even_share_seconds
        said.append(
            f"without SECTION SIZE the largest file caps the copy at {format_duration(whole)}, "
            f"{format_duration(whole - even)} over the even share"
        )
    if run.pile is None:
        said.append(
            "no redo history with times: the redo piling up during the copy is not known (import V$ARCHIVED_LOG)"
        )
    else:
        said.append(
            f"the redo of the worst {format_duration(run.copy_seconds)} of the history waits on the primary, then "
            "ships at the link the transport card judges while later redo keeps coming (the RPO model's drain after "
            "an outage)"
        )
    return said
