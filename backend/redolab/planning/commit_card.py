"""The SYNC commit card's words (part of planning.writer, the one writer of the plan's words): rows,
headline, working and missing items, written from its typed result (planning.commit)."""

from __future__ import annotations

from redolab.core.sources import SYNC_DELAY_ARTICLE
from redolab.core.units import format_byte_rate, format_bytes, format_duration
from redolab.planning.card import Card, settle
from redolab.planning.commit import FLUSH, MESSAGE, AckUnderLoad, SyncCommit
from redolab.planning.facts import Measurements, RoundTrip
from redolab.planning.wording import with_left_out

Written = tuple[Card, list[str]]  # a card and the risks it found


def cite_rtt(card: Card, rtt: RoundTrip | None) -> None:
    if rtt is None:
        return
    card.cite(rtt.source)
    if rtt.loopback:
        card.loopback = True
        card.working.append(
            "no link RTT on the environment and no run over the link: the round trip of a loopback run (this "
            "machine, not the link) is used; set the link RTT on the environment"
        )
    elif rtt.measured:
        card.working.append("no link RTT on the environment: the minimum TCP_INFO rtt measured is used")


# -- SYNC commit impact ----------------------------------------------------------------------------
def commit_card(result: SyncCommit, measured: Measurements) -> Written:
    card = Card("commit", "SYNC commit impact", result=result)
    cite_rtt(card, result.rtt)
    if result.write_run is None and result.disk is None:
        card.missing.append(_no_write_measurement(measured))
    if result.stream is None:
        card.missing.append(
            with_left_out(
                "no single-connection ASYNC run chosen: it gives the send time",
                measured.excluded_runs(mode="async", conns=1),
                "single-connection ASYNC",
            )
        )
    if result.rtt is None:
        card.missing.append("no round-trip time: set the link RTT or run an experiment")
    if result.under_load is not None:
        card.rows.append(under_load_row(result.under_load))
    if card.missing:
        settle(card, failed=False, judged=False)
        return card, []
    if result.write_run is not None:
        card.cite(result.write_run.source)
    card.cite(result.stream.source)
    card.loopback = card.loopback or result.loopback
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


def under_load_row(found: AckUnderLoad) -> tuple[str, str]:
    """Acknowledgement p50 and p99 idle beside under load: what a SYNC commit waits while backups or the
    instantiation copy load the path."""
    idle, loaded = found.idle.metrics, found.loaded.metrics
    load = f", loaded by run #{found.load_run}" if found.load_run is not None else ""
    return (
        "SYNC acknowledgement idle / under load",
        f"p50 {format_duration(idle.ack_p50_seconds)} / {format_duration(loaded.ack_p50_seconds)}; "
        f"p99 {format_duration(idle.ack_p99_seconds)} / {format_duration(loaded.ack_p99_seconds)} "
        f"(+{format_duration(max(found.added_p99_seconds, 0.0))} at p99) per "
        f"{format_bytes(found.loaded.message_bytes)} message; idle run #{found.idle.id}, under load run "
        f"#{found.loaded.id}{load}",
    )


def _no_write_measurement(measured: Measurements) -> str:
    """What is missing for the standby write time, with the runs that exist but do not give it."""
    said = (
        "no standby write measurement: run a SYNC experiment with a standby write directory and "
        "synchronous write (O_DSYNC), or a disk test on the standby"
    )
    unsynced = [r.id for r in measured.runs if r.mode == "sync" and r.metrics.server_write_seconds and not r.sync_write]
    if unsynced:
        said += (
            f" (run{'s' if len(unsynced) > 1 else ''} {', '.join(f'#{i}' for i in unsynced)} wrote to a standby "
            "directory without synchronous write: page-cache writes, not the log disk's; repeat with O_DSYNC)"
        )
    return with_left_out(said, measured.excluded_runs(mode="sync", write=True), "SYNC with a standby write")


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
        where = " (loopback: this machine's disk, not the standby's)" if write_run.loopback else ""
        card.rows.append(
            (
                "Measured standby write",
                f"{format_duration(result.write_seconds)} per message, run #{write_run.id}{where}",
            )
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
        f"({result.stream.label}) "
        f"= {format_duration(result.impact.send_seconds)}; RTT {format_duration(result.rtt.seconds)}",
        "SYNC ~ 2 x write + send + RTT; NEARSYNC ~ max(write, send + RTT); ASYNC ~ max(write, send) "
        "(IBM hadrCalculator). Data Guard SYNC AFFIRM behaves as SYNC, FASTSYNC as NEARSYNC.",
        f"ceiling = the redo one log writer can ship per second when each {format_bytes(write_bytes)} write "
        "waits for the mode's time before the next: write size / time per write. A redo peak above the "
        "ceiling makes commits queue.",
        "In SYNC the round-trip time, not the bandwidth, sets the commit time; a faster link does not help a "
        f"distant standby ({SYNC_DELAY_ARTICLE}).",
    ]
