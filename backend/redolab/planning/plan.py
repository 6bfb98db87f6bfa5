"""The plan of one environment: verdicts, estimates, risks and settings, with the working shown.

Pure: it takes the environment's facts, the redo analysis and the measured runs, and returns cards.
Every card names what it was computed from and, when it cannot be computed, what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from redolab.core.units import format_byte_rate, format_bytes, format_duration, format_mbit
from redolab.planning.instantiation import instantiation_estimate
from redolab.planning.network import bandwidth_delay, tcp_window_bytes
from redolab.planning.settings import STANDARD_MTU_BYTES, recommended_snippets
from redolab.planning.transport import MODEL_MODE, commit_impact, replay_lag, transport_verdict
from redolab.probes.parser import RunMetrics
from redolab.redo.analytics import Analysis

# Statuses a card can have, from best to worst; the page colours them.
PASS, INFO, WARN, MISSING, FAIL = "pass", "info", "warn", "missing", "fail"


@dataclass(frozen=True)
class MeasuredRun:
    """A succeeded probe run from a primary node to a standby node, as planning sees it."""

    id: int
    label: str
    client_node: int
    server_node: int
    mode: str  # async | sync
    conns: int
    message_bytes: int
    bytes_per_second: float
    sync_write: bool
    loopback: bool  # both ends on the redolab machine: not the standby link
    mtu_bytes: int | None
    metrics: RunMetrics
    created_at: datetime

    @property
    def source(self) -> Source:
        what = f"{self.mode.upper()}, {self.conns} conn{'s' if self.conns > 1 else ''}"
        return Source(f"run #{self.id} ({what}{', ' + self.label if self.label else ''})", f"/runs/{self.id}")


@dataclass(frozen=True)
class Source:
    label: str
    url: str | None = None


@dataclass
class Card:
    key: str
    title: str
    status: str = MISSING
    headline: str = ""
    rows: list[tuple[str, str]] = field(default_factory=list)  # label, value with its unit
    working: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    values: dict = field(default_factory=dict)  # the JSON form, units in the keys
    lag_series: dict[int, list[tuple[datetime, float]]] | None = None

    def cite(self, source: Source) -> None:
        if source not in self.sources:
            self.sources.append(source)


@dataclass
class Plan:
    cards: list[Card]
    risks: list[str]
    snippets: list
    snippet_sources: list[Source]

    def card(self, key: str) -> Card:
        return next(c for c in self.cards if c.key == key)

    def to_json(self) -> dict:
        return {
            "cards": {
                c.key: {
                    "title": c.title,
                    "status": c.status,
                    "headline": c.headline,
                    "values": c.values,
                    "working": c.working,
                    "sources": [{"label": s.label, "url": s.url} for s in c.sources],
                    "missing": c.missing,
                }
                for c in self.cards
            },
            "risks": self.risks,
            "settings": [
                {"title": s.title, "target": s.target, "lines": [{"line": i.line, "why": i.why} for i in s.lines]}
                for s in self.snippets
            ],
            "settings_sources": [{"label": s.label, "url": s.url} for s in self.snippet_sources],
        }


@dataclass(frozen=True)
class Facts:
    """The environment's own numbers (what the team typed in)."""

    platform: str
    transport_mode: str
    database_bytes: int | None
    primary_nodes: int
    standby_nodes: int
    instantiation_goal_seconds: float | None
    headroom_percent: float
    apply_overhead_percent: float
    link_bits_per_second: float | None
    link_rtt_seconds: float | None
    data_interface: str | None = None


def _rate(bytes_per_second: float) -> str:
    return f"{format_byte_rate(bytes_per_second)} ({format_mbit(bytes_per_second * 8)})"


def _best(runs, key=lambda r: r.bytes_per_second):
    return max(runs, key=key, default=None)


class _Planner:
    def __init__(self, facts: Facts, analysis: Analysis | None, imports: list[Source], runs: list[MeasuredRun]):
        self.facts, self.analysis, self.imports, self.runs = facts, analysis, imports, runs
        self.async_runs = [r for r in runs if r.mode == "async"]
        self.single = {}  # primary node -> best single-connection ASYNC run
        for run in self.async_runs:
            best = self.single.get(run.client_node)
            if run.conns == 1 and (best is None or run.bytes_per_second > best.bytes_per_second):
                self.single[run.client_node] = run
        self.best_aggregate = _best(self.async_runs)
        self.risks: list[str] = []

    # -- cards ----------------------------------------------------------------------------------
    def transport(self) -> Card:
        card = Card("transport", "Redo transport")
        analysis, headroom = self.analysis, self.facts.headroom_percent / 100
        if analysis is None or not analysis.threads:
            card.missing.append("no redo history yet: upload a V$ARCHIVED_LOG export or AWR data")
            return card
        for source in self.imports:
            card.cite(source)
        verdicts, thread_values = [], []
        for thread in sorted(analysis.threads.values(), key=lambda t: t.thread):
            if thread.peak_bytes_per_second <= 0:
                continue
            run = self.single.get(thread.thread)
            if run is None:
                card.missing.append(
                    f"no single-connection ASYNC run from primary node {thread.thread} yet: "
                    f"run one (1 connection) to measure what thread {thread.thread}'s redo stream gets"
                )
                continue
            verdict = transport_verdict(
                subject=f"Thread {thread.thread}: one ASYNC stream from primary node {thread.thread}",
                peak_bytes_per_second=thread.peak_bytes_per_second,
                headroom_ratio=headroom,
                available_bytes_per_second=run.bytes_per_second,
            )
            verdicts.append(verdict)
            card.cite(run.source)
            card.rows.append((verdict.subject, self._verdict_text(verdict)))
            thread_values.append({"thread": thread.thread, "run_id": run.id, **_verdict_json(verdict)})
        required = analysis.required_bytes_per_second
        if required and len(analysis.threads) > 1 and self.best_aggregate:
            verdict = transport_verdict(
                subject="All threads together over the link",
                peak_bytes_per_second=analysis.peak_for_requirement,
                headroom_ratio=headroom,
                available_bytes_per_second=self.best_aggregate.bytes_per_second,
            )
            verdicts.append(verdict)
            card.cite(self.best_aggregate.source)
            card.rows.append((verdict.subject, self._verdict_text(verdict)))
            card.values["summed"] = {"run_id": self.best_aggregate.id, **_verdict_json(verdict)}
        card.values["threads"] = thread_values
        card.values["headroom_percent"] = self.facts.headroom_percent
        card.working.append(
            f"required = peak redo rate x (1 + {self.facts.headroom_percent:g} %); available = the best "
            "receiver-confirmed throughput measured (seed 000: one ASYNC stream carries one instance's redo)"
        )
        if not verdicts:
            return card
        failed = [v for v in verdicts if not v.passed]
        card.status = FAIL if failed else (MISSING if card.missing else PASS)
        if failed:
            card.headline = f"{len(failed)} of {len(verdicts)} short: " + "; ".join(
                f"{v.subject.split(':')[0]} lacks {format_byte_rate(-v.margin_bytes_per_second)}" for v in failed
            )
            self.risks.extend(
                f"{v.subject} carries {format_byte_rate(v.available_bytes_per_second)} but must carry "
                f"{format_byte_rate(v.required_bytes_per_second)}: the standby will fall behind at peak."
                for v in failed
            )
        else:
            worst = min(verdicts, key=lambda v: v.margin_percent)
            card.headline = (
                f"{'What is measured keeps up' if card.missing else 'Keeps up'}: the tightest margin is "
                f"{format_byte_rate(worst.margin_bytes_per_second)} ({worst.margin_percent:+.0f} %)"
            )
        return card

    @staticmethod
    def _verdict_text(verdict) -> str:
        word = "pass" if verdict.passed else "FAIL"
        return (
            f"{word}: needs {_rate(verdict.required_bytes_per_second)}, measured "
            f"{_rate(verdict.available_bytes_per_second)}, margin {format_byte_rate(verdict.margin_bytes_per_second)} "
            f"({verdict.margin_percent:+.1f} %)"
        )

    def instantiation(self) -> Card:
        card = Card("instantiation", "Instantiation estimate")
        facts = self.facts
        pairs = max(1, min(facts.primary_nodes, facts.standby_nodes))
        per_pair: dict[tuple[int, int], MeasuredRun] = {}
        for run in self.async_runs:
            key = (run.client_node, run.server_node)
            if key not in per_pair or run.bytes_per_second > per_pair[key].bytes_per_second:
                per_pair[key] = run
        if facts.database_bytes is None:
            card.missing.append("no database size: set it on the environment (Edit)")
        if not per_pair:
            card.missing.append(
                "no ASYNC run yet: run a connection sweep (or a multi-connection run) from a primary node"
            )
        if card.missing:
            return card
        slowest = min(per_pair.values(), key=lambda r: r.bytes_per_second)
        throughput = slowest.bytes_per_second
        card.cite(slowest.source)
        if len(per_pair) < pairs:
            card.working.append(
                f"{len(per_pair)} of {pairs} node pairs measured; the others are assumed to match the slowest measured"
            )
        if slowest.conns == 1 and not any(r.conns > 1 for r in self.async_runs):
            card.missing.append(
                "no multi-connection run yet: run a connection sweep; parallel streams usually carry more"
            )
        link = facts.link_bits_per_second
        if link and throughput * pairs * 8 > link:
            card.working.append(
                f"{pairs} pairs at {format_byte_rate(throughput)} would exceed the {format_mbit(link)} link: "
                "capped at the link rate"
            )
            throughput = link / 8 / pairs
        estimate = instantiation_estimate(
            database_bytes=facts.database_bytes,
            throughput_per_pair_bytes_per_second=throughput,
            node_pairs=pairs,
            overhead_percent=facts.apply_overhead_percent,
        )
        card.rows += [
            ("Database size", format_bytes(facts.database_bytes)),
            ("Throughput per node pair", _rate(throughput)),
            ("Node pairs", f"{pairs}"),
            ("Copy", format_duration(estimate.copy_seconds)),
            (f"With {facts.apply_overhead_percent:g} % apply overhead", format_duration(estimate.total_seconds)),
        ]
        card.working.append(
            f"copy = {format_bytes(facts.database_bytes)} / ({format_byte_rate(throughput)} x {pairs}) = "
            f"{format_duration(estimate.copy_seconds)}; "
            f"total = copy x (1 + {facts.apply_overhead_percent:g} %) (seed 000)"
        )
        card.values = {
            "database_bytes": facts.database_bytes,
            "throughput_per_pair_bytes_per_second": throughput,
            "node_pairs": pairs,
            "overhead_percent": facts.apply_overhead_percent,
            "copy_seconds": estimate.copy_seconds,
            "total_seconds": estimate.total_seconds,
            "total_hours": estimate.total_hours,
            "goal_seconds": facts.instantiation_goal_seconds,
        }
        total = format_duration(estimate.total_seconds)
        goal = facts.instantiation_goal_seconds
        if goal is None:
            card.status, card.headline = INFO, f"About {total} (no goal set)"
        elif estimate.total_seconds <= goal:
            card.status, card.headline = PASS, f"About {total}, within the {format_duration(goal)} goal"
        else:
            card.status, card.headline = FAIL, f"About {total}, over the {format_duration(goal)} goal"
            self.risks.append(
                f"Instantiation takes about {total}, over the {format_duration(goal)} goal: add node pairs, "
                "raise per-pair throughput (more connections, larger buffers) or move the goal."
            )
        if card.missing and card.status == PASS:
            card.status = INFO
        return card

    def _rtt(self, card: Card) -> float | None:
        """The environment's link RTT, else the minimum TCP_INFO rtt measured; cited on `card`."""
        if self.facts.link_rtt_seconds:
            card.cite(Source("environment: link RTT"))
            return self.facts.link_rtt_seconds
        run = min(
            (r for r in self.runs if r.metrics.rtt_min_seconds), key=lambda r: r.metrics.rtt_min_seconds, default=None
        )
        if run is None:
            return None
        card.cite(run.source)
        card.working.append("no link RTT on the environment: the minimum TCP_INFO rtt measured is used")
        return run.metrics.rtt_min_seconds

    def buffers(self) -> tuple[Card, object | None]:
        card = Card("buffers", "Socket buffers (bandwidth-delay product)")
        bandwidth = self.facts.link_bits_per_second
        if bandwidth:
            card.cite(Source("environment: nominal link rate"))
        elif self.best_aggregate:
            bandwidth = self.best_aggregate.bytes_per_second * 8
            card.cite(self.best_aggregate.source)
            card.working.append("no nominal link rate: the best measured aggregate is used as the bandwidth")
        rtt = self._rtt(card)
        if not bandwidth:
            card.missing.append("no link rate: set the nominal link rate on the environment or run an experiment")
        if not rtt:
            card.missing.append("no round-trip time: set the link RTT on the environment or run an experiment")
        if card.missing:
            return card, None
        bdp = bandwidth_delay(bandwidth_bits_per_second=bandwidth, rtt_seconds=rtt)
        card.status, card.headline = INFO, f"Set socket buffers to {bdp.socket_buffer_bytes:,} bytes (3 x BDP)"
        card.rows += [
            ("Bandwidth", format_mbit(bandwidth)),
            ("Round-trip time", format_duration(rtt)),
            ("Bandwidth-delay product", f"{bdp.bdp_bytes:,} bytes ({format_bytes(bdp.bdp_bytes)})"),
            (
                "Socket buffers (3 x BDP)",
                f"{bdp.socket_buffer_bytes:,} bytes ({format_bytes(bdp.socket_buffer_bytes)})",
            ),
        ]
        card.working.append(
            f"BDP = {format_mbit(bandwidth)} / 8 x {format_duration(rtt)} = {bdp.bdp_bytes:,} bytes; "
            "buffers = 3 x BDP (seed 003)"
        )
        card.values = {
            "bandwidth_bits_per_second": bandwidth,
            "rtt_seconds": rtt,
            "bdp_bytes": bdp.bdp_bytes,
            "socket_buffer_bytes": bdp.socket_buffer_bytes,
        }
        stream = _best(self.single.values())
        if stream:
            window = tcp_window_bytes(send_bytes_per_second=stream.bytes_per_second, rtt_seconds=rtt)
            card.rows.append(("Window the best single stream kept in flight", f"{window:,} bytes"))
            card.working.append(
                f"window = {format_byte_rate(stream.bytes_per_second)} x {format_duration(rtt)} "
                f"= {window:,} bytes (seed 001)"
            )
            card.values["measured_window_bytes"] = window
            card.cite(stream.source)
        return card, bdp

    def lag(self) -> Card:
        card = Card("lag", "ASYNC lag replay")
        analysis = self.analysis
        if analysis is None or not analysis.thread_segments:
            card.missing.append("no redo history with log times yet: upload a V$ARCHIVED_LOG export")
        if not self.single:
            card.missing.append("no single-connection ASYNC run yet: run one from each primary node")
        if card.missing:
            return card
        for source in self.imports:
            card.cite(source)
        card.lag_series, threads, worst = {}, [], None
        for thread, segments in sorted(analysis.thread_segments.items()):
            run = self.single.get(thread)
            if run is None:
                card.missing.append(
                    f"no single-connection ASYNC run from primary node {thread}: thread {thread} not replayed"
                )
                continue
            card.cite(run.source)
            replay = replay_lag(segments, drain_bytes_per_second=run.bytes_per_second)
            card.lag_series[thread] = replay.series
            threads.append(
                {
                    "thread": thread,
                    "run_id": run.id,
                    "drain_bytes_per_second": run.bytes_per_second,
                    "max_lag_seconds": replay.max_lag_seconds,
                    "max_backlog_bytes": replay.max_backlog_bytes,
                    "max_at": replay.max_at.isoformat() if replay.max_at else None,
                    "drain_seconds": replay.drain_seconds,
                    "drained": replay.drained,
                    "lagging_seconds": replay.lagging_seconds,
                }
            )
            if replay.max_backlog_bytes:
                when = replay.max_at.strftime("%Y-%m-%d %H:%M UTC")
                drain = (
                    f"drains in {format_duration(replay.drain_seconds)}"
                    if replay.drained
                    else "still behind when the history ends"
                )
                card.rows.append(
                    (
                        f"Thread {thread} (drained at {format_byte_rate(run.bytes_per_second)})",
                        f"max lag {format_duration(replay.max_lag_seconds)} ({format_bytes(replay.max_backlog_bytes)} "
                        f"queued) at {when}; {drain}",
                    )
                )
            else:
                card.rows.append((f"Thread {thread}", "never behind: the stream outruns every log"))
            if worst is None or replay.max_lag_seconds > worst[1].max_lag_seconds:
                worst = (thread, replay)
        card.values = {"threads": threads}
        card.working.append(
            "each thread's logs (bytes over their duration) are queued and drained at the thread's best "
            "single-stream throughput; lag = queued bytes / throughput. Bursts within one log are averaged, "
            "so this is a lower bound."
        )
        if worst is None:
            return card
        thread, replay = worst
        if replay.max_backlog_bytes == 0:
            card.status, card.headline = PASS, "No transport lag: every thread's stream keeps up with every log"
        else:
            card.status = WARN if replay.drained else FAIL
            card.headline = (
                f"Up to {format_duration(replay.max_lag_seconds)} of redo at risk (thread {thread}, "
                f"{replay.max_at.strftime('%Y-%m-%d %H:%M UTC')})"
            )
            self.risks.append(
                f"ASYNC transport lag reaches {format_duration(replay.max_lag_seconds)} on thread {thread}: "
                "a primary lost at that moment loses that much redo (seed 003)."
            )
        return card

    def commit(self) -> Card:
        card = Card("commit", "SYNC commit impact")
        facts = self.facts
        written = [
            r
            for r in self.runs
            if r.mode == "sync" and r.sync_write and r.metrics.server_write_seconds and r.metrics.ack_count
        ]
        write_run = max(written, key=lambda r: r.created_at, default=None)
        stream = _best(self.single.values())
        rtt = self._rtt(card)
        write_bytes = self.analysis.avg_redo_write_bytes if self.analysis else None
        if write_run is None:
            card.missing.append(
                "no standby write measurement: run a SYNC experiment with a standby write directory and "
                "synchronous write (O_DSYNC)"
            )
        if stream is None:
            card.missing.append("no single-connection ASYNC run yet: it gives the send time")
        if rtt is None:
            card.missing.append("no round-trip time: set the link RTT or run an experiment")
        if card.missing:
            return card
        if write_bytes is None:
            write_bytes = write_run.message_bytes
            card.working.append(
                f"no AWR 'redo size' and 'redo writes' in the history: the probe message size "
                f"({format_bytes(write_bytes)}) stands in for the average redo write"
            )
        else:
            for source in self.imports:
                card.cite(source)
        write_seconds = write_run.metrics.server_write_seconds / write_run.metrics.ack_count
        impact = commit_impact(
            write_bytes=write_bytes,
            write_seconds=write_seconds,
            throughput_bytes_per_second=stream.bytes_per_second,
            rtt_seconds=rtt,
        )
        card.cite(write_run.source)
        card.cite(stream.source)
        mode = MODEL_MODE.get(facts.transport_mode, "ASYNC")
        modes = {}
        for name, seconds in impact.modes.items():
            marker = " (this environment)" if name == mode else ""
            card.rows.append(
                (
                    f"{name}{marker}",
                    f"{format_duration(seconds)} per redo write, "
                    f"+{format_duration(impact.added_seconds(name))} per commit, "
                    f"ceiling {format_byte_rate(impact.ceiling_bytes_per_second(name))}",
                )
            )
            modes[name] = {
                "commit_seconds": seconds,
                "added_seconds": impact.added_seconds(name),
                "ceiling_bytes_per_second": impact.ceiling_bytes_per_second(name),
            }
        card.values = {
            "write_bytes": write_bytes,
            "write_seconds": write_seconds,
            "send_seconds": impact.send_seconds,
            "rtt_seconds": rtt,
            "modes": modes,
            "environment_mode": mode,
        }
        card.working += [
            f"write = {format_duration(write_seconds)} per {format_bytes(write_run.message_bytes)} "
            "write on the standby "
            f"(run #{write_run.id}); send = {format_bytes(write_bytes)} / {format_byte_rate(stream.bytes_per_second)} "
            f"= {format_duration(impact.send_seconds)}; RTT {format_duration(rtt)}",
            "SYNC ~ 2 x write + send + RTT; NEARSYNC ~ max(write, send + RTT); ASYNC ~ max(write, send) "
            "(IBM hadrCalculator). Data Guard SYNC AFFIRM behaves as SYNC, FASTSYNC as NEARSYNC.",
            "Seed 002: in SYNC the round-trip time, not the bandwidth, sets the commit time; a faster link "
            "does not help a distant standby.",
        ]
        if write_run.metrics.ack_avg_seconds:
            card.rows.append(
                (
                    "Measured SYNC acknowledgement (avg)",
                    f"{format_duration(write_run.metrics.ack_avg_seconds)} per "
                    f"{format_bytes(write_run.message_bytes)} message, run #{write_run.id}",
                )
            )
        added = impact.added_seconds(mode)
        if mode == "ASYNC":
            headline = (
                f"ASYNC adds nothing to commits; SYNC would add about {format_duration(impact.added_seconds('SYNC'))}"
            )
        else:
            headline = f"{mode} adds about {format_duration(added)} to each commit"
        card.status, card.headline = INFO, headline
        peak = self.analysis.peak_for_requirement if self.analysis else None
        ceiling = impact.ceiling_bytes_per_second(mode)
        if peak and ceiling < peak and mode != "ASYNC":
            card.status = FAIL
            self.risks.append(
                f"In {mode} one log writer tops out near {format_byte_rate(ceiling)}, below the redo peak of "
                f"{format_byte_rate(peak)}: commits will queue at peak."
            )
        return card

    def settings(self, bdp) -> tuple[list, list[Source]]:
        if bdp is None:
            return [], []
        mtus = [r.mtu_bytes for r in sorted(self.runs, key=lambda r: r.created_at) if r.mtu_bytes]
        return recommended_snippets(
            platform=self.facts.platform,
            socket_buffer_bytes=bdp.socket_buffer_bytes,
            bdp_bytes=bdp.bdp_bytes,
            mtu_bytes=mtus[-1] if mtus else STANDARD_MTU_BYTES,
            interface=self.facts.data_interface,
            avg_redo_write_bytes=self.analysis.avg_redo_write_bytes if self.analysis else None,
        ), [Source("the socket-buffer card (3 x BDP)")]

    def general_risks(self) -> None:
        if self.runs and all(r.loopback for r in self.runs):
            self.risks.append(
                "Every run so far measured this machine's loopback, not the link to the standby: "
                "run between the real primary and standby hosts before trusting these verdicts."
            )
        if self.analysis:
            self.risks.extend(self.analysis.warnings)


def _verdict_json(verdict) -> dict:
    return {
        "required_bytes_per_second": verdict.required_bytes_per_second,
        "available_bytes_per_second": verdict.available_bytes_per_second,
        "margin_bytes_per_second": verdict.margin_bytes_per_second,
        "margin_percent": verdict.margin_percent,
        "passed": verdict.passed,
    }


def build_plan(*, facts: Facts, analysis: Analysis | None, imports: list[Source], runs: list[MeasuredRun]) -> Plan:
    """All cards, in the order the page shows them, then the risks they found."""
    planner = _Planner(facts, analysis, imports, runs)
    buffers, bdp = planner.buffers()
    cards = [planner.transport(), planner.instantiation(), buffers, planner.lag(), planner.commit()]
    planner.general_risks()
    snippets, sources = planner.settings(bdp)
    return Plan(cards, planner.risks, snippets, sources)
