"""The one writer of the plan's words: each card's rows, headline, working, missing items and risks,
written from its typed result (planning.results), and its JSON values from the result's `to_json()`.
Nothing is computed here but the wording; `settle` then sets the badge the headline must agree with.

Every writer returns the card and the risks it found, in the order the plan lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from redolab.core.units import (
    format_byte_rate,
    format_byte_rate_in_mbit,
    format_bytes,
    format_duration,
    format_mbit,
)
from redolab.planning.card import Card, settle
from redolab.planning.facts import NOMINAL_LINK, Measurements, RoundTrip
from redolab.planning.network import SOCKET_BUFFER_RULE
from redolab.planning.results import (
    BEHIND,
    FLUSH,
    KEEPS_UP,
    MESSAGE,
    SHORT,
    BufferSizing,
    CopyTime,
    KeepUp,
    LagExposure,
    SyncCommit,
    ThreadReplay,
)
from redolab.planning.transport import Verdict
from redolab.redo.requirement import Requirement
from redolab.runs.measured import Source

Show = Callable[[datetime | None], str]  # a UTC time on the database's clock
Written = tuple[Card, list[str]]  # a card and the risks it found

NO_HISTORY = "no redo history yet: upload a V$ARCHIVED_LOG export or AWR data"
NO_TIMED_HISTORY = "no redo history with log times yet: upload a V$ARCHIVED_LOG export"
SETTINGS_SOURCES = (Source(f"the socket-buffer card ({SOCKET_BUFFER_RULE})"),)


def rate(bytes_per_second: float) -> str:
    """A rate as a redo volume per second and as a link rate."""
    return f"{format_byte_rate(bytes_per_second)} ({format_byte_rate_in_mbit(bytes_per_second)})"


def verdict_text(verdict: Verdict, nominal: bool) -> str:
    word = "pass" if verdict.passed else "SHORT"
    return (
        f"{word}: needs {rate(verdict.required_bytes_per_second)}, "
        f"{'nominal link' if nominal else 'measured'} {rate(verdict.available_bytes_per_second)}, margin "
        f"{format_byte_rate(verdict.margin_bytes_per_second)} ({verdict.margin_percent:+.1f} %)"
    )


def _cite_rtt(card: Card, rtt: RoundTrip | None) -> None:
    if rtt is None:
        return
    card.cite(rtt.source)
    if rtt.measured:
        card.working.append("no link RTT on the environment: the minimum TCP_INFO rtt measured is used")


# -- transport -------------------------------------------------------------------------------------
def transport_card(result: KeepUp | None, *, no_history: str | None, show: Show) -> Written:
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
                f"no single-connection ASYNC run from primary node {need.thread} and no nominal link rate: "
                f"run one (1 connection) to measure what thread {need.thread}'s redo stream gets"
            )
            continue
        card.cite(stream.source)
        card.rows.append((judged.verdict.subject, verdict_text(judged.verdict, stream.nominal)))
        card.working.append(
            f"thread {need.thread}: peak {format_byte_rate(need.peak_bytes_per_second)}"
            f"{' at ' + show(need.peak_at) if need.peak_at else ''} ({need.basis.describe(show)}) "
            f"x (1 + {headroom:g} %) = {format_byte_rate(need.required_bytes_per_second)}"
        )
    if result.summed is not None:
        _write_summed(card, result, show)
    for label in sorted({s for t in req.threads.values() for s in t.basis.imports}):
        card.cite(Source(label))
    card.nominal = result.nominal
    card.values = result.to_json()
    card.working.append(
        f"required = peak redo rate x (1 + {headroom:g} %); available = the best receiver-confirmed "
        "throughput measured (seed 000: one ASYNC stream carries one instance's redo)"
    )
    card.headline = _transport_headline(result)
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
        f"({worst.margin_percent:+.0f} %)"
    )


def _write_summed(card: Card, result: KeepUp, show: Show) -> None:
    req, summed = result.requirement, result.summed
    if summed.verdict is None:
        card.missing.append("no ASYNC run and no nominal link rate for all threads together")
    else:
        card.cite(summed.stream.source)
        card.rows.append((summed.verdict.subject, verdict_text(summed.verdict, summed.stream.nominal)))
    card.working.append(
        f"all threads: {format_byte_rate(req.summed_peak_bytes_per_second)} ({req.summed_basis(show)}) x "
        f"(1 + {result.headroom_percent:g} %) = {format_byte_rate(req.summed_required_bytes_per_second)}"
    )


# -- instantiation ---------------------------------------------------------------------------------
def instantiation_card(result: CopyTime) -> Written:
    card = Card("instantiation", "Instantiation estimate", result=result)
    if result.database_bytes is None:
        card.missing.append("no database size: set it on the environment (Edit)")
    if result.no_throughput:
        card.missing.append(
            "no ASYNC run yet and no nominal link rate: run a connection sweep (or a multi-connection run) "
            "from a primary node"
        )
    if card.missing:
        settle(card, failed=False, judged=False)
        return card, []
    estimate, pairs = result.estimate, result.node_pairs
    throughput = estimate.throughput_per_pair_bytes_per_second
    _write_throughput_basis(card, result)
    card.nominal = result.nominal
    card.rows += [
        ("Database size", format_bytes(estimate.database_bytes)),
        ("Throughput per node pair", rate(throughput) + (" (nominal)" if card.nominal else "")),
        ("Node pairs", f"{pairs}"),
        ("Copy", format_duration(estimate.copy_seconds)),
        (f"With {estimate.overhead_percent:g} % apply overhead", format_duration(estimate.total_seconds)),
    ]
    card.working.append(
        f"copy = {format_bytes(estimate.database_bytes)} / ({format_byte_rate(throughput)} x {pairs}) = "
        f"{format_duration(estimate.copy_seconds)}; "
        f"total = copy x (1 + {estimate.overhead_percent:g} %) (seed 000)"
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


def _write_throughput_basis(card: Card, result: CopyTime) -> None:
    """Which throughput stands for each node pair, and why."""
    pairs, link = result.node_pairs, result.link_bits_per_second
    if result.slowest is None:
        card.cite(NOMINAL_LINK)
        card.working.append(
            f"no ASYNC run yet: the {format_mbit(link)} nominal link shared by {pairs} node pair(s) stands in "
            "for measured throughput (an upper bound: run a connection sweep)"
        )
        return
    card.cite(result.slowest.source)
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
def buffers_card(result: BufferSizing) -> Written:
    card = Card("buffers", "Socket buffers (bandwidth-delay product)", result=result)
    if result.bandwidth_source is not None:
        card.cite(result.bandwidth_source)
    if result.bandwidth_measured:
        card.working.append("no nominal link rate: the best measured aggregate is used as the bandwidth")
    _cite_rtt(card, result.rtt)
    if not result.bandwidth_bits_per_second:
        card.missing.append("no link rate: set the nominal link rate on the environment or run an experiment")
    if result.rtt is None:
        card.missing.append("no round-trip time: set the link RTT on the environment or run an experiment")
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
        f"BDP = {bandwidth} / 8 x {rtt} = {bdp.bdp_bytes:,} bytes; buffers = {SOCKET_BUFFER_RULE} (seed 003)"
    )
    if result.window_run is not None:
        card.rows.append(("Window the best single stream kept in flight", f"{result.window_bytes:,} bytes"))
        card.working.append(
            f"window = {format_byte_rate(result.window_run.bytes_per_second)} x {rtt} "
            f"= {result.window_bytes:,} bytes (seed 001)"
        )
        card.cite(result.window_run.source)
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


def lag_card(result: LagExposure | None, *, no_history: str | None, show: Show) -> Written:
    card = Card("lag", "ASYNC lag replay", result=result)
    if result is None:
        card.missing.append(no_history or NO_TIMED_HISTORY)
        settle(card, failed=False, judged=False)
        return card, []
    for thread in result.threads:
        _write_replay(card, thread, show)
    card.lag_series = result.series
    card.nominal = result.nominal
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
            "a primary lost at that moment loses that much redo (seed 003)."
        )
    elif short:
        card.headline = (
            f"Thread{'s' if len(short) > 1 else ''} {', '.join(str(t.need.thread) for t in short)} short of the "
            "requirement: no queue at the averages replayed, but bursts queue"
        )
    elif result.in_state(KEEPS_UP):
        card.headline = "Never behind: every replayed thread's stream carries its requirement"
    settle(card, failed=result.failed, judged=bool(result.replayed), warned=bool(result.in_state(BEHIND) or short))
    return card, risks


def _write_replay(card: Card, thread: ThreadReplay, show: Show) -> None:
    need, stream, replay = thread.need, thread.stream, thread.replay
    if not need.replay:
        card.missing.append(
            f"thread {need.thread}'s history has no times ({need.basis.statistic}): upload an export with "
            "FIRST_TIME and NEXT_TIME to replay it"
        )
        return
    if stream is None:
        card.missing.append(
            f"no single-connection ASYNC run from primary node {need.thread} and no nominal link rate: "
            f"thread {need.thread} not replayed"
        )
        return
    card.cite(stream.source)
    for label in need.replay_basis.imports:
        card.cite(Source(label))
    drain, required = format_byte_rate(stream.bytes_per_second), format_byte_rate(need.required_bytes_per_second)
    label = f"Thread {need.thread} (drained at {drain}{', nominal' if stream.nominal else ''})"
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
    card.rows.append((label, said))
    card.working.append(f"thread {need.thread} replayed from {need.replay_basis.describe(show)}")


# -- SYNC commit impact ----------------------------------------------------------------------------
def commit_card(result: SyncCommit) -> Written:
    card = Card("commit", "SYNC commit impact", result=result)
    _cite_rtt(card, result.rtt)
    if result.write_run is None and result.disk is None:
        card.missing.append(
            "no standby write measurement: run a SYNC experiment with a standby write directory and "
            "synchronous write (O_DSYNC), or a disk test on the standby"
        )
    if result.stream is None:
        card.missing.append("no single-connection ASYNC run yet: it gives the send time")
    if result.rtt is None:
        card.missing.append("no round-trip time: set the link RTT or run an experiment")
    if card.missing:
        settle(card, failed=False, judged=False)
        return card, []
    if result.write_run is not None:
        card.cite(result.write_run.source)
    card.cite(result.stream.source)
    _write_commit_rows(card, result)
    card.working += _commit_working(result)
    card.values = result.to_json()
    impact, mode, risks = result.impact, result.mode, []
    if mode == "ASYNC":
        card.headline = (
            f"ASYNC adds nothing to commits; SYNC would add about {format_duration(impact.added_seconds('SYNC'))}"
        )
    else:
        card.headline = f"{mode} adds about {format_duration(result.added_seconds)} to each commit"
    if result.queues:
        ceiling = format_byte_rate(result.ceiling_bytes_per_second)
        card.headline += f"; commits queue at peak (ceiling {ceiling})"
        risks.append(
            f"In {mode} one log writer tops out near {ceiling}, below the redo peak of "
            f"{format_byte_rate(result.peak_bytes_per_second)}: commits will queue at peak."
        )
    settle(card, failed=result.queues, judged=True, info=True)
    return card, risks


def _write_commit_rows(card: Card, result: SyncCommit) -> None:
    impact, write_run, metrics = result.impact, result.write_run, result.metrics
    for name, seconds in impact.modes.items():
        marker = " (this environment)" if name == result.mode else ""
        card.rows.append(
            (
                f"{name}{marker}",
                f"{format_duration(seconds)} per redo write, "
                f"+{format_duration(impact.added_seconds(name))} per commit, "
                f"ceiling {format_byte_rate(impact.ceiling_bytes_per_second(name))}",
            )
        )
    if metrics.ack_avg_seconds:
        percentiles = ", ".join(
            f"{name} {format_duration(value)}"
            for name, value in (
                ("p50", metrics.ack_p50_seconds),
                ("p95", metrics.ack_p95_seconds),
                ("p99", metrics.ack_p99_seconds),
            )
            if value is not None
        )
        card.rows.append(
            (
                "Measured SYNC acknowledgement",
                f"avg {format_duration(metrics.ack_avg_seconds)}{'; ' + percentiles if percentiles else ''} per "
                f"{format_bytes(write_run.message_bytes)} message, run #{write_run.id}",
            )
        )
    if write_run is not None:
        card.rows.append(
            ("Measured standby write", f"{format_duration(result.write_seconds)} per message, run #{write_run.id}")
        )
    else:
        said = (
            f"{format_duration(result.write_seconds)} per {format_bytes(result.write_bytes)} write, {result.disk.label}"
        )
        card.rows.append(("Standby write (disk test)", said))


def _commit_working(result: SyncCommit) -> list[str]:
    write_bytes, write_seconds, write_run = result.write_bytes, result.write_seconds, result.write_run
    working = []
    if result.write_size_from == MESSAGE:
        working.append(
            f"no AWR 'redo size' and 'redo writes' in the history: the probe message size "
            f"({format_bytes(write_bytes)}) stands in for the average redo write"
        )
    elif result.write_size_from == FLUSH:
        working.append(
            f"no AWR 'redo size' and 'redo writes' in the history: {format_bytes(write_bytes)} (a 16-page flush) "
            "stands in for the average redo write"
        )
    if write_run is not None:
        write_said = (
            f"write = {format_duration(write_seconds)} per {format_bytes(write_run.message_bytes)} write on the "
            f"standby (run #{write_run.id})"
        )
    else:
        disk = result.disk
        write_said = (
            f"write = {format_bytes(write_bytes)} / {format_byte_rate(disk.disk.rate_bytes_per_second)} + "
            f"{format_duration(disk.disk.overhead_seconds, 6)} = {format_duration(write_seconds)} on the standby "
            f"(disk test on {disk.label})"
        )
    return [
        *working,
        f"{write_said}; send = {format_bytes(write_bytes)} / {format_byte_rate(result.stream.bytes_per_second)} "
        f"= {format_duration(result.impact.send_seconds)}; RTT {format_duration(result.rtt.seconds)}",
        "SYNC ~ 2 x write + send + RTT; NEARSYNC ~ max(write, send + RTT); ASYNC ~ max(write, send) "
        "(IBM hadrCalculator). Data Guard SYNC AFFIRM behaves as SYNC, FASTSYNC as NEARSYNC.",
        f"ceiling = the redo one log writer can ship per second when each {format_bytes(write_bytes)} write "
        "waits for the mode's time before the next: write size / time per write. A redo peak above the "
        "ceiling makes commits queue.",
        "Seed 002: in SYNC the round-trip time, not the bandwidth, sets the commit time; a faster link "
        "does not help a distant standby.",
    ]


# -- the plan's own risks --------------------------------------------------------------------------
def general_risks(measured: Measurements, requirement: Requirement | None) -> list[str]:
    risks = []
    if measured.runs and len(measured.loopback) == len(measured.runs):
        risks.append(
            "Every run chosen so far measured this machine's loopback, not the link to the standby: "
            "they are left out of the verdicts; run between the real primary and standby hosts."
        )
    if requirement:
        risks.extend(requirement.warnings)
    return risks
