"""The one writer of the plan's words: each card's rows, headline, working, missing items and risks,
written from its typed result (planning.results), and its JSON values from the result's `to_json()`.
Nothing is computed here but the wording; `settle` then sets the badge the headline must agree with.

Every writer returns the card and the risks it found, in the order the plan lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from redolab.core.sources import IBM_HADR_SIMULATOR, MAA_TRANSPORT_PAPER, ORACLE_NETWORK_NOTE
from redolab.core.units import format_byte_rate, format_bytes, format_count, format_duration, format_mbit
from redolab.planning.card import Card, settle
from redolab.planning.commit_card import cite_rtt
from redolab.planning.facts import NOMINAL_LINK, Measurements
from redolab.planning.network import SOCKET_BUFFER_RULE
from redolab.planning.results import (
    BEHIND,
    KEEPS_UP,
    SHORT,
    BufferSizing,
    CopyTime,
    KeepUp,
    LagExposure,
    ThreadReplay,
)
from redolab.planning.rpo_card import write_rpo
from redolab.planning.rpo_sizing import RpoSizing, granularity_note
from redolab.planning.wording import capacity_text, left_out, rate, verdict_text, with_left_out
from redolab.redo.requirement import Requirement
from redolab.runs.measured import Source

Show = Callable[[datetime | None], str]  # a UTC time on the database's clock
Written = tuple[Card, list[str]]  # a card and the risks it found

NO_HISTORY = "no redo history yet: upload a V$ARCHIVED_LOG export or AWR data"
NO_TIMED_HISTORY = "no redo history with log times yet: upload a V$ARCHIVED_LOG export"
SETTINGS_SOURCES = (Source(f"the socket-buffer card ({SOCKET_BUFFER_RULE})"),)


# -- transport -------------------------------------------------------------------------------------
def transport_card(
    result: KeepUp | None, measured: Measurements, *, no_history: str | None, show: Show, rpo: RpoSizing | None = None
) -> Written:
    card = Card("transport", "Redo transport", result=result)
    if result is None:
        card.missing.append(no_history or NO_HISTORY)
        settle(card, failed=False, judged=False)
        return card, []
    req, headroom = result.requirement, result.headroom_percent
    for judged in result.threads:
        need, stream = judged.need, judged.stream
        if stream is None:
            card.missing.append(
                with_left_out(
                    f"no single-connection ASYNC run from primary node {need.thread} and no nominal link rate: "
                    f"run one (1 connection) to measure what thread {need.thread}'s redo stream gets",
                    measured.excluded_runs(mode="async", conns=1, node=need.thread),
                    f"single-connection ASYNC (primary node {need.thread})",
                )
            )
            continue
        card.cite(stream.source)
        card.rows.append((judged.verdict.subject, verdict_text(judged.verdict, stream)))
        card.working.append(
            f"thread {need.thread}: peak {format_byte_rate(need.peak_bytes_per_second)}"
            f"{' at ' + show(need.peak_at) if need.peak_at else ''} ({need.basis.describe(show)}) "
            f"x (1 + {headroom:g} %) = {format_byte_rate(need.required_bytes_per_second)}"
        )
    if result.summed is not None:
        _write_summed(card, result, measured, show)
    for label in sorted({s for t in req.threads.values() for s in t.basis.imports}):
        card.cite(Source(label))
    card.nominal, card.loopback = result.nominal, result.loopback
    _write_capacity_notes(card, measured, nominal=result.nominal)
    card.values = result.to_json()
    card.working.append(
        f"required = peak redo rate x (1 + {headroom:g} %); available = the best receiver-confirmed "
        f"throughput measured (one ASYNC stream carries one instance's redo: {ORACLE_NETWORK_NOTE})"
    )
    write_rpo(card, rpo, result, show)
    card.headline = _transport_headline(result)
    if result.undecided:
        card.headline += "; undecided if every thread peaked at once"
    settle(card, failed=bool(result.failed), judged=bool(result.verdicts))
    risks = [
        f"{v.subject} carries {format_byte_rate(v.available_bytes_per_second)} but must carry "
        f"{format_byte_rate(v.required_bytes_per_second)}: the standby will fall behind at peak."
        for v in result.failed
    ]
    return card, risks


def _transport_headline(result: KeepUp) -> str:
    if result.failed:
        return "Short: " + "; ".join(
            f"{v.subject.split(':')[0].lower()} needs {format_byte_rate(v.required_bytes_per_second)}, "
            f"{'the link' if v.subject.startswith('All') else 'one stream'} carries "
            f"{format_byte_rate(v.available_bytes_per_second)}"
            for v in result.failed
        )
    worst = result.tightest
    if worst is None:
        return ""
    return (
        f"Keeps up: the tightest margin is {format_byte_rate(worst.margin_bytes_per_second)} "
        f"({worst.margin_percent:+,.1f} %)"
    )


def _write_summed(card: Card, result: KeepUp, measured: Measurements, show: Show) -> None:
    req, summed = result.requirement, result.summed
    if summed.verdict is None:
        card.missing.append(
            with_left_out(
                "no ASYNC run and no nominal link rate for all threads together",
                measured.excluded_runs(mode="async"),
                "ASYNC",
            )
        )
    else:
        card.cite(summed.stream.source)
        card.rows.append((summed.verdict.subject, verdict_text(summed.verdict, summed.stream)))
    card.working.append(
        f"all threads: {format_byte_rate(req.summed_peak_bytes_per_second)} ({req.summed_basis(show)}) x "
        f"(1 + {result.headroom_percent:g} %) = {format_byte_rate(req.summed_required_bytes_per_second)}"
    )
    bound = result.bound
    if bound is None:
        return
    card.working.append(
        f"if every thread peaked at once: {format_byte_rate(req.upper_bound_bytes_per_second)} x "
        f"(1 + {result.headroom_percent:g} %) = {format_byte_rate(bound.required_bytes_per_second)}"
    )
    if not result.undecided:
        card.rows.append((bound.subject, verdict_text(bound, summed.stream)))
        return
    card.rows.append(
        (
            bound.subject,
            f"undecided: needs up to {rate(bound.required_bytes_per_second)}, {capacity_text(summed.stream)}",
        )
    )
    card.missing.append(_what_decides(result))


def _what_decides(result: KeepUp) -> str:
    """What would settle a verdict only the upper bound (threads peaking together) fails."""
    untimed = result.untimed_threads
    history = (
        f"times for thread{'s' if len(untimed) > 1 else ''} {', '.join(map(str, untimed))} "
        "(V$ARCHIVED_LOG with FIRST_TIME and NEXT_TIME, per thread)"
        if untimed
        else "every thread's times over the same period (the imports' periods do not overlap)"
    )
    stream = result.summed.stream
    run = (
        "an ASYNC run over the link with more connections showing it carries more"
        if not stream.nominal
        else "an ASYNC run over the link (a connection sweep) showing what it really carries"
    )
    return (
        f"whether the threads peak together: if they did, all threads would need up to "
        f"{format_byte_rate(result.bound.required_bytes_per_second)}, above the "
        f"{format_byte_rate(stream.bytes_per_second)} the link carries ({stream.label}). A history with "
        f"{history} would decide it, or {run}"
    )


def _write_capacity_notes(card: Card, measured: Measurements, *, nominal: bool) -> None:
    """Say when the nominal link stands in although left-out runs measured it."""
    if not nominal:
        return
    found = left_out(measured.excluded_runs(mode="async"), "ASYNC")
    if found:
        card.working.append(f"the nominal link stands in for a measurement: {found}")


# -- instantiation ---------------------------------------------------------------------------------
def instantiation_card(result: CopyTime, measured: Measurements) -> Written:
    card = Card("instantiation", "Instantiation estimate", result=result)
    if result.database_bytes is None:
        card.missing.append("no database size: set it on the environment (Edit)")
    if result.no_throughput:
        card.missing.append(
            with_left_out(
                "no ASYNC run chosen and no nominal link rate: run a connection sweep (or a multi-connection "
                "run) from a primary node",
                measured.excluded_runs(mode="async"),
                "ASYNC",
            )
        )
    if card.missing:
        settle(card, failed=False, judged=False)
        return card, []
    estimate, pairs = result.estimate, result.node_pairs
    throughput = estimate.throughput_per_pair_bytes_per_second
    _write_throughput_basis(card, result, measured)
    card.nominal, card.loopback = result.nominal, result.loopback
    basis = " (nominal)" if card.nominal else " (loopback, capped at the link)" if card.loopback else ""
    card.rows += [
        ("Database size", format_bytes(estimate.database_bytes)),
        ("Throughput per node pair", rate(throughput) + basis),
        ("Node pairs", f"{pairs}"),
        ("Copy", format_duration(estimate.copy_seconds)),
        (f"With {estimate.overhead_percent:g} % apply overhead", format_duration(estimate.total_seconds)),
    ]
    card.working.append(
        f"copy = {format_bytes(estimate.database_bytes)} / ({format_byte_rate(throughput)} x {pairs}) = "
        f"{format_duration(estimate.copy_seconds)}; "
        f"total = copy x (1 + {estimate.overhead_percent:g} %) ({ORACLE_NETWORK_NOTE})"
    )
    card.values = result.to_json()
    total, goal, risks = format_duration(estimate.total_seconds), result.goal_seconds, []
    if goal is None:
        card.headline = f"About {total} (no goal set)"
    elif not result.over:
        card.headline = f"About {total}, within the {format_duration(goal)} goal"
    else:
        card.headline = f"About {total}, over the {format_duration(goal)} goal"
        risks.append(
            f"Instantiation takes about {total}, over the {format_duration(goal)} goal: add node pairs, "
            "raise per-pair throughput (more connections, larger buffers) or move the goal."
        )
    settle(card, failed=result.over, judged=True, info=goal is None)
    return card, risks


def _write_throughput_basis(card: Card, result: CopyTime, measured: Measurements) -> None:
    """Which throughput stands for each node pair, and why."""
    pairs, link = result.node_pairs, result.link_bits_per_second
    if result.slowest is None:
        card.cite(NOMINAL_LINK)
        found = left_out(measured.excluded_runs(mode="async"), "ASYNC")
        card.working.append(
            f"no ASYNC run chosen{' (' + found + ')' if found else ''}: the {format_mbit(link)} nominal link "
            f"shared by {format_count(pairs, 'node pair')} stands in for measured throughput (an upper bound: run a "
            "connection sweep)"
        )
        return
    card.cite(result.slowest.source)
    if result.slowest.loopback:
        card.working.append(
            f"run #{result.slowest.id} is a loopback run (this machine, not the link), chosen as evidence: it "
            "stands in for a node pair's throughput"
            + (", capped at the nominal link" if link else "; no nominal link rate to cap it")
        )
    if result.measured_pairs < pairs:
        card.working.append(
            f"{result.measured_pairs} of {pairs} node pairs measured; the others are assumed to match the slowest "
            "measured"
        )
    if result.single_only:
        card.working.append(
            "only single-connection runs so far: a connection sweep usually finds parallel streams carry "
            "more, which shortens this estimate"
        )
    if result.capped_from_bytes_per_second is not None:
        card.working.append(
            f"{pairs} pairs at {format_byte_rate(result.capped_from_bytes_per_second)} would exceed the "
            f"{format_mbit(link)} link: capped at the link rate"
        )


# -- socket buffers --------------------------------------------------------------------------------
def buffers_card(result: BufferSizing, measured: Measurements) -> Written:
    card = Card("buffers", "Socket buffers (bandwidth-delay product)", result=result)
    if result.bandwidth_source is not None:
        card.cite(result.bandwidth_source)
    if result.bandwidth_measured:
        card.loopback = result.bandwidth.loopback
        card.working.append(
            f"no nominal link rate: the best aggregate ({result.bandwidth.label}) is used as the bandwidth"
        )
    cite_rtt(card, result.rtt)
    if not result.bandwidth_bits_per_second:
        card.missing.append(
            with_left_out(
                "no link rate: set the nominal link rate on the environment or run an experiment",
                measured.excluded_runs(mode="async"),
                "ASYNC",
            )
        )
    if result.rtt is None:
        card.missing.append(
            with_left_out(
                "no round-trip time: set the link RTT on the environment or run an experiment",
                [e for e in measured.excluded if e.run.metrics.rtt_min_seconds],
                "timed",
            )
        )
    if card.missing:
        settle(card, failed=False, judged=False)
        return card, []
    bdp = result.bdp
    bandwidth, rtt = format_mbit(bdp.bandwidth_bits_per_second), format_duration(bdp.rtt_seconds)
    card.headline = f"Set socket buffers to {bdp.socket_buffer_bytes:,} bytes ({SOCKET_BUFFER_RULE})"
    card.rows += [
        ("Bandwidth", bandwidth),
        ("Round-trip time", rtt),
        ("Bandwidth-delay product", f"{bdp.bdp_bytes:,} bytes ({format_bytes(bdp.bdp_bytes)})"),
        (
            f"Socket buffers ({SOCKET_BUFFER_RULE})",
            f"{bdp.socket_buffer_bytes:,} bytes ({format_bytes(bdp.socket_buffer_bytes)})",
        ),
    ]
    card.working.append(
        f"BDP = {bandwidth} / 8 x {rtt} = {bdp.bdp_bytes:,} bytes; buffers = {SOCKET_BUFFER_RULE} "
        f"({MAA_TRANSPORT_PAPER})"
    )
    if result.window_stream is not None:
        stream = result.window_stream
        card.rows.append(
            ("Window the best single stream kept in flight", f"{result.window_bytes:,} bytes ({stream.label})")
        )
        card.working.append(
            f"window = {format_byte_rate(stream.bytes_per_second)} ({stream.label}) x {rtt} "
            f"= {result.window_bytes:,} bytes ({IBM_HADR_SIMULATOR})"
        )
        card.cite(stream.source)
        card.loopback = card.loopback or stream.loopback
    card.values = result.to_json()
    settle(card, failed=False, judged=True, info=True)
    return card, []


# -- ASYNC lag replay ------------------------------------------------------------------------------
LAG_MODEL = (
    "each thread's pieces (bytes over their duration) are queued and drained at the thread's best "
    "single-stream throughput; lag = queued bytes / throughput. Bursts within one piece are averaged, "
    "so this is a lower bound. A thread is 'never behind' only when its stream carries its requirement "
    "(the transport card's figure)."
)


def lag_card(result: LagExposure | None, measured: Measurements, *, no_history: str | None, show: Show) -> Written:
    card = Card("lag", "ASYNC lag replay", result=result)
    if result is None:
        card.missing.append(no_history or NO_TIMED_HISTORY)
        settle(card, failed=False, judged=False)
        return card, []
    for thread in result.threads:
        _write_replay(card, thread, measured, show)
    card.lag_series = result.series
    card.nominal, card.loopback = result.nominal, result.loopback
    card.values = result.to_json()
    card.working.append(LAG_MODEL)
    worst, short, risks = result.worst, result.in_state(SHORT), []
    if worst is not None:
        replay = worst.replay
        card.headline = (
            f"Up to {format_duration(replay.max_lag_seconds)} of redo at risk (thread {worst.need.thread} behind at "
            f"{show(replay.max_at)})"
        )
        risks.append(
            f"ASYNC transport lag reaches {format_duration(replay.max_lag_seconds)} on thread {worst.need.thread}: "
            f"a primary lost at that moment loses that much redo ({MAA_TRANSPORT_PAPER})."
        )
    elif short:
        card.headline = (
            f"Thread{'s' if len(short) > 1 else ''} {', '.join(str(t.need.thread) for t in short)} short of the "
            "requirement: no queue at the averages replayed, but bursts queue"
        )
    elif result.in_state(KEEPS_UP):
        card.headline = "Never behind: every replayed thread's stream carries its requirement"
    coarsest = max((t.need.replay_basis.interval_seconds or 0 for t in result.replayed), default=0)
    if card.headline and granularity_note(coarsest):
        card.headline += f" ({granularity_note(coarsest)})"
    settle(card, failed=result.failed, judged=bool(result.replayed), warned=bool(result.in_state(BEHIND) or short))
    return card, risks


def _write_replay(card: Card, thread: ThreadReplay, measured: Measurements, show: Show) -> None:
    need, stream, replay = thread.need, thread.stream, thread.replay
    if not need.replay:
        card.missing.append(
            f"thread {need.thread}'s history has no times ({need.basis.statistic}): upload an export with "
            "FIRST_TIME and NEXT_TIME to replay it"
        )
        return
    if stream is None:
        card.missing.append(
            with_left_out(
                f"no single-connection ASYNC run from primary node {need.thread} and no nominal link rate: "
                f"thread {need.thread} not replayed",
                measured.excluded_runs(mode="async", conns=1, node=need.thread),
                f"single-connection ASYNC (primary node {need.thread})",
            )
        )
        return
    card.cite(stream.source)
    for label in need.replay_basis.imports:
        card.cite(Source(label))
    drain, required = format_byte_rate(stream.bytes_per_second), format_byte_rate(need.required_bytes_per_second)
    label = f"Thread {need.thread} (drained at {drain}, {stream.label})"
    if thread.state == KEEPS_UP:
        said = f"never behind: the stream carries the {required} requirement, above every log"
    elif thread.state == BEHIND:
        drained = (
            f"drains in {format_duration(replay.drain_seconds)}"
            if replay.drained
            else "still behind when the history ends"
        )
        said = (
            f"behind: max lag {format_duration(replay.max_lag_seconds)} "
            f"({format_bytes(replay.max_backlog_bytes)} queued) at {show(replay.max_at)}; {drained}"
        )
    else:
        said = (
            f"short of the {required} requirement: no queue at the {need.replay_basis.statistic}s replayed, but "
            f"bursts above {drain} within them queue"
        )
    note = granularity_note(need.replay_basis.interval_seconds or 0)
    card.rows.append((label, f"{said}; {note}" if note else said))
    card.working.append(f"thread {need.thread} replayed from {need.replay_basis.describe(show)}")


# -- the plan's own risks --------------------------------------------------------------------------
def general_risks(measured: Measurements, requirement: Requirement | None) -> list[str]:
    risks = []
    loopback = sorted(r.id for r in measured.loopback)
    if loopback:
        ids = ", ".join(f"#{i}" for i in loopback[:6]) + (f" and {len(loopback) - 6} more" if len(loopback) > 6 else "")
        risks.append(
            f"Loopback run{'s' if len(loopback) > 1 else ''} {ids} measured this machine, not the link to the "
            "standby: chosen as evidence, they stand in for the link only where no run over the link measured "
            "the same thing, capped at the nominal link, and every card using one is marked 'loopback'; run "
            "between the real primary and standby hosts."
        )
    if requirement:
        risks.extend(requirement.warnings)
    return risks
