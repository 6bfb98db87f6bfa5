"""The plan of one environment: verdicts, estimates, risks and settings, with the working shown.

Pure: it takes the environment's facts, the requirement (planning/requirement.py) and the chosen
runs, and returns cards. Every card names what it was computed from and, when it cannot be
computed, what is missing. Each card's badge is decided by `settle` from its own outcomes, and the
headline is written for that badge, so the two cannot disagree; the transport card and the lag
replay judge each thread against the same requirement and the same stream, so they cannot either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from redolab.core.units import format_byte_rate, format_bytes, format_duration, format_mbit, wall_clock
from redolab.disktest.fit import Disk
from redolab.hadr.calculator import DEFAULT_FLUSH_BYTES
from redolab.planning.instantiation import instantiation_estimate
from redolab.planning.network import bandwidth_delay, tcp_window_bytes
from redolab.planning.settings import STANDARD_MTU_BYTES, recommended_snippets
from redolab.planning.transport import MODEL_MODE, Verdict, commit_impact, replay_lag
from redolab.redo.requirement import Requirement
from redolab.runs.measured import MeasuredRun, Source
from redolab.runs.parsers.redoprobe import RunMetrics

# Statuses a card can have, from best to worst; the page colours them.
PASS, INFO, WARN, PARTIAL, MISSING, FAIL = "pass", "info", "warn", "partial", "missing", "fail"
NOMINAL = "nominal link rate (not measured)"


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

    def cite(self, source: Source) -> None:
        if source not in self.sources:
            self.sources.append(source)

    @property
    def badge(self) -> str:
        nominal = self.nominal and self.status != MISSING
        return f"{self.status} (nominal)" if nominal else self.status


@dataclass(frozen=True)
class EvidenceItem:
    """One import or run the plan may use, and whether (and how) it does."""

    kind: str  # import | run
    id: int
    label: str
    when: str  # the period of an import, the time of a run
    chosen: bool
    note: str  # what it is used for, or why not
    tags: tuple[str, ...] = ()


@dataclass
class Plan:
    cards: list[Card]
    risks: list[str]
    snippets: list
    snippet_sources: list[Source]
    requirement: Requirement | None = None
    evidence: list[EvidenceItem] = field(default_factory=list)
    time_zone: str = "UTC"

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
    time_zone: str = "UTC"
    standby_disk: DiskFact | None = None  # the standby's fitted log disk (a disk test)
    hadr_buffer: tuple[int, str] | None = None  # DB2_HADR_BUF_SIZE pages and why, from the data
    hadr_syncmode: tuple[str, str] | None = None  # the calculator's advice


@dataclass(frozen=True)
class DiskFact:
    disk: Disk  # time per write = size / rate + overhead
    label: str  # host and directory


def _rate(bytes_per_second: float) -> str:
    return f"{format_byte_rate(bytes_per_second)} ({format_mbit(bytes_per_second * 8)})"


def _best(runs, key=lambda r: r.bytes_per_second):
    return max(runs, key=key, default=None)


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
        card.headline = f"Partly measured: {card.headline[0].lower()}{card.headline[1:]}" if card.headline else ""
    if card.nominal and card.status != MISSING and not card.headline.startswith("Nominal"):
        card.headline = f"Nominal, not measured: {card.headline[0].lower()}{card.headline[1:]}"


class _Planner:
    def __init__(
        self, facts: Facts, requirement: Requirement | None, runs: list[MeasuredRun], no_history: str | None = None
    ):
        self.facts, self.req = facts, requirement
        self.no_history = no_history  # why there is no requirement, when it is not "nothing imported yet"
        self.runs = runs  # the chosen runs: loopback ones only when chosen by name
        self.loopback = [r for r in runs if r.loopback]
        self.async_runs = [r for r in self.runs if r.mode == "async"]
        self.single = {}  # primary node -> best single-connection ASYNC run
        for run in self.async_runs:
            best = self.single.get(run.client_node)
            if run.conns == 1 and (best is None or run.bytes_per_second > best.bytes_per_second):
                self.single[run.client_node] = run
        self.best_aggregate = _best(self.async_runs)
        self.risks: list[str] = []
        self.link = facts.link_bits_per_second / 8 if facts.link_bits_per_second else None

    def show(self, moment: datetime | None) -> str:
        return show_time(moment, self.facts.time_zone)

    def stream(self, thread: int) -> tuple[float, Source, MeasuredRun | None] | None:
        """What one transport stream from primary node `thread` carries: the best single-connection
        ASYNC run from it, else the nominal link rate (labelled; no run), else nothing."""
        run = self.single.get(thread)
        if run is not None:
            return run.bytes_per_second, run.source, run
        if self.link:
            return self.link, Source(f"environment: {NOMINAL}"), None
        return None

    # -- cards ----------------------------------------------------------------------------------
    def transport(self) -> Card:
        card = Card("transport", "Redo transport")
        req, headroom = self.req, self.facts.headroom_percent
        if req is None:
            card.missing.append(self.no_history or "no redo history yet: upload a V$ARCHIVED_LOG export or AWR data")
            settle(card, failed=False, judged=False)
            return card
        verdicts: list[Verdict] = []
        thread_values = []
        for need in sorted(req.threads.values(), key=lambda t: t.thread):
            carried = self.stream(need.thread)
            subject = f"Thread {need.thread}: one ASYNC stream from primary node {need.thread}"
            if carried is None:
                card.missing.append(
                    f"no single-connection ASYNC run from primary node {need.thread} and no nominal link rate: "
                    f"run one (1 connection) to measure what thread {need.thread}'s redo stream gets"
                )
                continue
            available, source, run = carried
            nominal = run is None
            card.nominal |= nominal
            card.cite(source)
            verdict = Verdict(subject, need.required_bytes_per_second, available)
            verdicts.append(verdict)
            card.rows.append((subject, self._verdict_text(verdict, nominal)))
            card.working.append(
                f"thread {need.thread}: peak {format_byte_rate(need.peak_bytes_per_second)}"
                f"{' at ' + self.show(need.peak_at) if need.peak_at else ''} ({need.basis.describe(self.show)}) "
                f"x (1 + {headroom:g} %) = "
                f"{format_byte_rate(need.required_bytes_per_second)}"
            )
            thread_values.append(
                {
                    "thread": need.thread,
                    "run_id": run.id if run else None,
                    "nominal": nominal,
                    "basis": need.basis.to_json(),
                    **_verdict_json(verdict),
                }
            )
        if len(req.threads) > 1:
            aggregate = self.best_aggregate
            if aggregate is not None:
                available, source, nominal = aggregate.bytes_per_second, aggregate.source, False
            elif self.link:
                available, source, nominal = self.link, Source(f"environment: {NOMINAL}"), True
            else:
                available = None
                card.missing.append("no ASYNC run and no nominal link rate for all threads together")
            if available is not None:
                card.nominal |= nominal
                verdict = Verdict("All threads together over the link", req.summed_required_bytes_per_second, available)
                verdicts.append(verdict)
                card.cite(source)
                card.rows.append((verdict.subject, self._verdict_text(verdict, nominal)))
                card.values["summed"] = {
                    "run_id": None if nominal else aggregate.id,
                    "nominal": nominal,
                    "how": req.summed_how,
                    **_verdict_json(verdict),
                }
            card.working.append(
                f"all threads: {format_byte_rate(req.summed_peak_bytes_per_second)} "
                f"({req.summed_basis(self.show)}) x "
                f"(1 + {headroom:g} %) = {format_byte_rate(req.summed_required_bytes_per_second)}"
            )
        for label in sorted({s for t in req.threads.values() for s in t.basis.imports}):
            card.cite(Source(label))
        card.values["threads"] = thread_values
        card.values["headroom_percent"] = headroom
        card.working.append(
            f"required = peak redo rate x (1 + {headroom:g} %); available = the best receiver-confirmed "
            "throughput measured (seed 000: one ASYNC stream carries one instance's redo)"
        )
        failed = [v for v in verdicts if not v.passed]
        if failed:
            card.headline = "Short: " + "; ".join(
                f"{v.subject.split(':')[0].lower()} needs {format_byte_rate(v.required_bytes_per_second)}, "
                f"{'the link' if v.subject.startswith('All') else 'one stream'} carries "
                f"{format_byte_rate(v.available_bytes_per_second)}"
                for v in failed
            )
            self.risks.extend(
                f"{v.subject} carries {format_byte_rate(v.available_bytes_per_second)} but must carry "
                f"{format_byte_rate(v.required_bytes_per_second)}: the standby will fall behind at peak."
                for v in failed
            )
        elif verdicts:
            worst = min(verdicts, key=lambda v: v.margin_percent)
            card.headline = (
                f"Keeps up: the tightest margin is {format_byte_rate(worst.margin_bytes_per_second)} "
                f"({worst.margin_percent:+.0f} %)"
            )
        settle(card, failed=bool(failed), judged=bool(verdicts))
        return card

    @staticmethod
    def _verdict_text(verdict: Verdict, nominal: bool) -> str:
        word = "pass" if verdict.passed else "SHORT"
        return (
            f"{word}: needs {_rate(verdict.required_bytes_per_second)}, "
            f"{'nominal link' if nominal else 'measured'} {_rate(verdict.available_bytes_per_second)}, margin "
            f"{format_byte_rate(verdict.margin_bytes_per_second)} ({verdict.margin_percent:+.1f} %)"
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
        if not per_pair and not self.link:
            card.missing.append(
                "no ASYNC run yet and no nominal link rate: run a connection sweep (or a multi-connection run) "
                "from a primary node"
            )
        if card.missing:
            settle(card, failed=False, judged=False)
            return card
        link = facts.link_bits_per_second
        if per_pair:
            slowest = min(per_pair.values(), key=lambda r: r.bytes_per_second)
            throughput = slowest.bytes_per_second
            card.cite(slowest.source)
            if len(per_pair) < pairs:
                card.working.append(
                    f"{len(per_pair)} of {pairs} node pairs measured; the others are assumed to match the slowest "
                    "measured"
                )
            if slowest.conns == 1 and not any(r.conns > 1 for r in self.async_runs):
                card.working.append(
                    "only single-connection runs so far: a connection sweep usually finds parallel streams carry "
                    "more, which shortens this estimate"
                )
            if link and throughput * pairs * 8 > link:
                card.working.append(
                    f"{pairs} pairs at {format_byte_rate(throughput)} would exceed the {format_mbit(link)} link: "
                    "capped at the link rate"
                )
                throughput = link / 8 / pairs
        else:
            throughput = self.link / pairs
            card.nominal = True
            card.cite(Source(f"environment: {NOMINAL}"))
            card.working.append(
                f"no ASYNC run yet: the {format_mbit(link)} nominal link shared by {pairs} node pair(s) stands in "
                "for measured throughput (an upper bound: run a connection sweep)"
            )
        estimate = instantiation_estimate(
            database_bytes=facts.database_bytes,
            throughput_per_pair_bytes_per_second=throughput,
            node_pairs=pairs,
            overhead_percent=facts.apply_overhead_percent,
        )
        card.rows += [
            ("Database size", format_bytes(facts.database_bytes)),
            ("Throughput per node pair", _rate(throughput) + (" (nominal)" if card.nominal else "")),
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
            "nominal": card.nominal,
        }
        total = format_duration(estimate.total_seconds)
        goal = facts.instantiation_goal_seconds
        over = goal is not None and estimate.total_seconds > goal
        if goal is None:
            card.headline = f"About {total} (no goal set)"
        elif not over:
            card.headline = f"About {total}, within the {format_duration(goal)} goal"
        else:
            card.headline = f"About {total}, over the {format_duration(goal)} goal"
            self.risks.append(
                f"Instantiation takes about {total}, over the {format_duration(goal)} goal: add node pairs, "
                "raise per-pair throughput (more connections, larger buffers) or move the goal."
            )
        settle(card, failed=over, judged=True, info=goal is None)
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
            settle(card, failed=False, judged=False)
            return card, None
        bdp = bandwidth_delay(bandwidth_bits_per_second=bandwidth, rtt_seconds=rtt)
        card.headline = f"Set socket buffers to {bdp.socket_buffer_bytes:,} bytes (3 x BDP)"
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
        settle(card, failed=False, judged=True, info=True)
        return card, bdp

    def lag(self) -> Card:
        card = Card("lag", "ASYNC lag replay")
        req = self.req
        if req is None:
            card.missing.append(self.no_history or "no redo history with log times yet: upload a V$ARCHIVED_LOG export")
            settle(card, failed=False, judged=False)
            return card
        card.lag_series, threads = {}, []
        behind, short, kept = [], [], []
        for need in sorted(req.threads.values(), key=lambda t: t.thread):
            carried = self.stream(need.thread)
            if not need.replay:
                card.missing.append(
                    f"thread {need.thread}'s history has no times ({need.basis.statistic}): upload an export with "
                    "FIRST_TIME and NEXT_TIME to replay it"
                )
                continue
            if carried is None:
                card.missing.append(
                    f"no single-connection ASYNC run from primary node {need.thread} and no nominal link rate: "
                    f"thread {need.thread} not replayed"
                )
                continue
            drain, source, run = carried
            nominal = run is None
            card.nominal |= nominal
            card.cite(source)
            for label in need.replay_basis.imports:
                card.cite(Source(label))
            replay = replay_lag(need.replay, drain_bytes_per_second=drain)
            card.lag_series[need.thread] = replay.series
            carries = drain >= need.required_bytes_per_second
            state = "keeps up" if carries else ("behind" if replay.max_backlog_bytes else "short")
            threads.append(
                {
                    "thread": need.thread,
                    "state": state,
                    "run_id": run.id if run else None,
                    "nominal": nominal,
                    "drain_bytes_per_second": drain,
                    "required_bytes_per_second": need.required_bytes_per_second,
                    "max_lag_seconds": replay.max_lag_seconds,
                    "max_backlog_bytes": replay.max_backlog_bytes,
                    "max_at": replay.max_at.isoformat() if replay.max_at else None,
                    "drain_seconds": replay.drain_seconds,
                    "drained": replay.drained,
                    "lagging_seconds": replay.lagging_seconds,
                    "basis": need.replay_basis.to_json(),
                }
            )
            label = f"Thread {need.thread} (drained at {format_byte_rate(drain)}{', nominal' if nominal else ''})"
            if state == "keeps up":
                kept.append(need.thread)
                card.rows.append(
                    (label, f"never behind: the stream carries the {format_byte_rate(need.required_bytes_per_second)} "
                     "requirement, above every log")
                )  # fmt: skip
            elif state == "behind":
                behind.append((need.thread, replay))
                drained = (
                    f"drains in {format_duration(replay.drain_seconds)}"
                    if replay.drained
                    else "still behind when the history ends"
                )
                card.rows.append(
                    (
                        label,
                        f"behind: max lag {format_duration(replay.max_lag_seconds)} "
                        f"({format_bytes(replay.max_backlog_bytes)} queued) at {self.show(replay.max_at)}; {drained}",
                    )
                )
            else:
                short.append(need.thread)
                card.rows.append(
                    (
                        label,
                        f"short of the {format_byte_rate(need.required_bytes_per_second)} requirement: no queue at "
                        f"the {need.replay_basis.statistic}s replayed, but bursts above {format_byte_rate(drain)} "
                        "within them queue",
                    )
                )
            card.working.append(f"thread {need.thread} replayed from {need.replay_basis.describe(self.show)}")
        card.values = {"threads": threads}
        card.working.append(
            "each thread's pieces (bytes over their duration) are queued and drained at the thread's best "
            "single-stream throughput; lag = queued bytes / throughput. Bursts within one piece are averaged, "
            "so this is a lower bound. A thread is 'never behind' only when its stream carries its requirement "
            "(the transport card's figure)."
        )
        worst = max(behind, key=lambda b: b[1].max_lag_seconds, default=None)
        if worst is not None:
            thread, replay = worst
            card.headline = (
                f"Up to {format_duration(replay.max_lag_seconds)} of redo at risk (thread {thread} behind at "
                f"{self.show(replay.max_at)})"
            )
            self.risks.append(
                f"ASYNC transport lag reaches {format_duration(replay.max_lag_seconds)} on thread {thread}: "
                "a primary lost at that moment loses that much redo (seed 003)."
            )
        elif short:
            card.headline = (
                f"Thread{'s' if len(short) > 1 else ''} {', '.join(map(str, short))} short of the requirement: "
                "no queue at the averages replayed, but bursts queue"
            )
        elif kept:
            card.headline = "Never behind: every replayed thread's stream carries its requirement"
        failed = worst is not None and not worst[1].drained
        settle(card, failed=failed, judged=bool(threads), warned=bool(behind or short))
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
        write_bytes = self.req.avg_redo_write_bytes if self.req else None
        disk = facts.standby_disk
        if write_run is None and disk is None:
            card.missing.append(
                "no standby write measurement: run a SYNC experiment with a standby write directory and "
                "synchronous write (O_DSYNC), or a disk test on the standby"
            )
        if stream is None:
            card.missing.append("no single-connection ASYNC run yet: it gives the send time")
        if rtt is None:
            card.missing.append("no round-trip time: set the link RTT or run an experiment")
        if card.missing:
            settle(card, failed=False, judged=False)
            return card
        if write_bytes is None:
            write_bytes = write_run.message_bytes if write_run is not None else DEFAULT_FLUSH_BYTES
            card.working.append(
                "no AWR 'redo size' and 'redo writes' in the history: "
                + (f"the probe message size ({format_bytes(write_bytes)})" if write_run is not None
                   else f"{format_bytes(write_bytes)} (a 16-page flush)")
                + " stands in for the average redo write"
            )  # fmt: skip
        if write_run is not None:
            write_seconds = write_run.metrics.server_write_seconds / write_run.metrics.ack_count
            write_said = (
                f"write = {format_duration(write_seconds)} per {format_bytes(write_run.message_bytes)} write on the "
                f"standby (run #{write_run.id})"
            )
        else:
            write_seconds = disk.disk.write_seconds(write_bytes)
            write_said = (
                f"write = {format_bytes(write_bytes)} / {format_byte_rate(disk.disk.rate_bytes_per_second)} + "
                f"{format_duration(disk.disk.overhead_seconds, 6)} = {format_duration(write_seconds)} on the standby "
                f"(disk test on {disk.label})"
            )
        impact = commit_impact(
            write_bytes=write_bytes,
            write_seconds=write_seconds,
            throughput_bytes_per_second=stream.bytes_per_second,
            rtt_seconds=rtt,
        )
        if write_run is not None:
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
        metrics = write_run.metrics if write_run is not None else RunMetrics(None, 0, None, None)
        card.values = {
            "write_bytes": write_bytes,
            "write_seconds": write_seconds,
            "send_seconds": impact.send_seconds,
            "rtt_seconds": rtt,
            "modes": modes,
            "environment_mode": mode,
            "ack_p50_seconds": metrics.ack_p50_seconds,
            "ack_p95_seconds": metrics.ack_p95_seconds,
            "ack_p99_seconds": metrics.ack_p99_seconds,
        }
        card.working += [
            f"{write_said}; send = {format_bytes(write_bytes)} / {format_byte_rate(stream.bytes_per_second)} "
            f"= {format_duration(impact.send_seconds)}; RTT {format_duration(rtt)}",
            "SYNC ~ 2 x write + send + RTT; NEARSYNC ~ max(write, send + RTT); ASYNC ~ max(write, send) "
            "(IBM hadrCalculator). Data Guard SYNC AFFIRM behaves as SYNC, FASTSYNC as NEARSYNC.",
            f"ceiling = the redo one log writer can ship per second when each {format_bytes(write_bytes)} write "
            "waits for the mode's time before the next: write size / time per write. A redo peak above the "
            "ceiling makes commits queue.",
            "Seed 002: in SYNC the round-trip time, not the bandwidth, sets the commit time; a faster link "
            "does not help a distant standby.",
        ]
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
                ("Measured standby write", f"{format_duration(write_seconds)} per message, run #{write_run.id}")
            )
        else:
            said = f"{format_duration(write_seconds)} per {format_bytes(write_bytes)} write, {disk.label}"
            card.rows.append(("Standby write (disk test)", said))
        added = impact.added_seconds(mode)
        if mode == "ASYNC":
            card.headline = (
                f"ASYNC adds nothing to commits; SYNC would add about {format_duration(impact.added_seconds('SYNC'))}"
            )
        else:
            card.headline = f"{mode} adds about {format_duration(added)} to each commit"
        peak = self.req.summed_peak_bytes_per_second if self.req else None
        ceiling = impact.ceiling_bytes_per_second(mode)
        queues = bool(peak and ceiling < peak and mode != "ASYNC")
        if queues:
            card.headline += f"; commits queue at peak (ceiling {format_byte_rate(ceiling)})"
            self.risks.append(
                f"In {mode} one log writer tops out near {format_byte_rate(ceiling)}, below the redo peak of "
                f"{format_byte_rate(peak)}: commits will queue at peak."
            )
        settle(card, failed=queues, judged=True, info=True)
        return card

    def settings(self, bdp) -> tuple[list, list[Source]]:
        if bdp is None:
            return [], []
        # only runs over the link: the loopback's MTU (65,536 bytes) is not the data link's
        mtus = [r.mtu_bytes for r in sorted(self.runs, key=lambda r: r.created_at) if r.mtu_bytes and not r.loopback]
        return recommended_snippets(
            platform=self.facts.platform,
            socket_buffer_bytes=bdp.socket_buffer_bytes,
            bdp_bytes=bdp.bdp_bytes,
            mtu_bytes=mtus[-1] if mtus else STANDARD_MTU_BYTES,
            interface=self.facts.data_interface,
            avg_redo_write_bytes=self.req.avg_redo_write_bytes if self.req else None,
            hadr_buffer=self.facts.hadr_buffer,
            hadr_syncmode=self.facts.hadr_syncmode,
        ), [Source("the socket-buffer card (3 x BDP)")]

    def general_risks(self) -> None:
        if self.runs and len(self.loopback) == len(self.runs):
            self.risks.append(
                "Every run chosen so far measured this machine's loopback, not the link to the standby: "
                "they are left out of the verdicts; run between the real primary and standby hosts."
            )
        if self.req:
            self.risks.extend(self.req.warnings)


def _verdict_json(verdict) -> dict:
    return {
        "required_bytes_per_second": verdict.required_bytes_per_second,
        "available_bytes_per_second": verdict.available_bytes_per_second,
        "margin_bytes_per_second": verdict.margin_bytes_per_second,
        "margin_percent": verdict.margin_percent,
        "passed": verdict.passed,
    }


def build_plan(
    *,
    facts: Facts,
    requirement: Requirement | None,
    runs: list[MeasuredRun],
    evidence: list[EvidenceItem] | None = None,
    no_history: str | None = None,
) -> Plan:
    """All cards, in the order the page shows them, then the risks they found. Loopback runs never
    feed a verdict or a setting: they are not the link."""
    planner = _Planner(facts, requirement, runs, no_history)
    buffers, bdp = planner.buffers()
    cards = [planner.transport(), planner.instantiation(), buffers, planner.lag(), planner.commit()]
    planner.general_risks()
    snippets, sources = planner.settings(bdp)
    return Plan(cards, planner.risks, snippets, sources, requirement, list(evidence or []), facts.time_zone)
