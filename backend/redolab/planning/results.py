"""What each plan card computes, as typed results (pure). Every number a card shows is computed here
once; planning.writer words it (rows, headline, working) and each result's `to_json()` is the card's
JSON values. Units: bytes, seconds, bytes or bits per second; times are UTC datetimes.

The transport card and the lag replay judge each thread against the same requirement and the same
stream (`Measurements.stream`), so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from redolab.planning.commit import AWR, FLUSH, MESSAGE, SyncCommit, sync_commit
from redolab.planning.facts import (
    LOOPBACK,
    MEASURED,
    NOMINAL,
    NOMINAL_BANDWIDTH,
    Capacity,
    Facts,
    Measurements,
    RoundTrip,
    Stream,
)
from redolab.planning.instantiation import InstantiationEstimate, instantiation_estimate
from redolab.planning.network import BandwidthDelay, bandwidth_delay, tcp_window_bytes
from redolab.planning.oracle_net import explicit_gain
from redolab.planning.settings import STANDARD_MTU_BYTES, SettingsBasis
from redolab.planning.transport import LagReplay, Verdict, replay_lag
from redolab.redo.requirement import Requirement, ThreadNeed
from redolab.runs.measured import MeasuredRun, Source

__all__ = [
    "AWR",
    "BEHIND",
    "FLUSH",
    "KEEPS_UP",
    "MESSAGE",
    "SHORT",
    "BufferSizing",
    "CopyTime",
    "KeepUp",
    "LagExposure",
    "StreamVerdict",
    "SyncCommit",
    "ThreadReplay",
    "ThreadVerdict",
    "buffer_sizing",
    "copy_time",
    "keep_up",
    "lag_exposure",
    "settings_basis",
    "sync_commit",
]

SUMMED_SUBJECT = "All threads together over the link"
BOUND_SUBJECT = "Upper bound: every thread peaking at once"


def thread_subject(thread: int) -> str:
    return f"Thread {thread}: one ASYNC stream from primary node {thread}"


def verdict_json(verdict: Verdict) -> dict:
    return {
        "required_bytes_per_second": verdict.required_bytes_per_second,
        "available_bytes_per_second": verdict.available_bytes_per_second,
        "margin_bytes_per_second": verdict.margin_bytes_per_second,
        "margin_percent": verdict.margin_percent,
        "passed": verdict.passed,
    }


# -- the transport card: does one stream keep up with each thread, and the link with all of them -----
@dataclass(frozen=True)
class StreamVerdict:
    """All threads' requirement against what the link carries; no stream: nothing to judge it against."""

    stream: Stream | None
    verdict: Verdict | None


@dataclass(frozen=True)
class ThreadVerdict:
    """One thread's requirement against one stream from its primary node."""

    need: ThreadNeed
    stream: Stream | None
    verdict: Verdict | None


@dataclass(frozen=True)
class KeepUp:
    """The transport card: does one ASYNC stream carry each thread's requirement (seed 000: one stream
    carries one instance's redo), and the link all threads' together?"""

    requirement: Requirement
    headroom_percent: float
    threads: tuple[ThreadVerdict, ...]
    summed: StreamVerdict | None  # None with one thread: its own verdict is the link's
    bound: Verdict | None = None  # every thread peaking at once (their overlap unknown), with headroom

    @property
    def judged(self) -> list[ThreadVerdict | StreamVerdict]:
        return [*self.threads, *([self.summed] if self.summed else [])]

    @property
    def undecided(self) -> bool:
        """All threads together pass at the known peak, but the upper bound (every thread peaking at
        once, with headroom) is above what the link carries: the history cannot say which holds."""
        summed = self.summed.verdict if self.summed else None
        return bool(summed and summed.passed and self.bound and not self.bound.passed)

    @property
    def untimed_threads(self) -> list[int]:
        """Threads without times: when they peak together with the others is unknown."""
        return sorted(t.thread for t in self.requirement.threads.values() if not t.timed)

    @property
    def loopback(self) -> bool:
        return any(j.stream is not None and j.stream.loopback for j in self.judged)

    @property
    def verdicts(self) -> list[Verdict]:
        return [j.verdict for j in self.judged if j.verdict is not None]

    @property
    def failed(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.passed]

    @property
    def tightest(self) -> Verdict | None:
        return min(self.verdicts, key=lambda v: v.margin_percent, default=None)

    @property
    def nominal(self) -> bool:
        return any(j.stream is not None and j.stream.nominal for j in self.judged)

    def to_json(self) -> dict:
        values = {}
        summed = self.summed
        if summed is not None and summed.verdict is not None:
            run = summed.stream.run
            values["summed"] = {
                "run_id": run.id if run else None,
                "nominal": summed.stream.nominal,
                "capacity": summed.stream.to_json(),
                "how": self.requirement.summed_how,
                **verdict_json(summed.verdict),
            }
        if self.bound is not None:
            values["upper_bound"] = {**verdict_json(self.bound), "undecided": self.undecided}
        values["threads"] = [
            {
                "thread": t.need.thread,
                "run_id": t.stream.run.id if t.stream.run else None,
                "nominal": t.stream.nominal,
                "capacity": t.stream.to_json(),
                "basis": t.need.basis.to_json(),
                **verdict_json(t.verdict),
            }
            for t in self.threads
            if t.verdict is not None
        ]
        values["headroom_percent"] = self.headroom_percent
        return values


def keep_up(facts: Facts, requirement: Requirement, measured: Measurements) -> KeepUp:
    """Required = each thread's peak x (1 + headroom) against one stream from its primary node; with
    more than one thread, the summed requirement against the best aggregate run (or the nominal link)."""
    threads = []
    for need in sorted(requirement.threads.values(), key=lambda t: t.thread):
        stream = measured.stream(need.thread)
        verdict = None
        if stream is not None:
            verdict = Verdict(thread_subject(need.thread), need.required_bytes_per_second, stream.bytes_per_second)
        threads.append(ThreadVerdict(need, stream, verdict))
    summed, bound = None, None
    if len(requirement.threads) > 1:
        stream = measured.aggregate()
        verdict = None
        if stream is not None:
            verdict = Verdict(SUMMED_SUBJECT, requirement.summed_required_bytes_per_second, stream.bytes_per_second)
            upper = requirement.upper_bound_required_bytes_per_second
            if upper is not None and upper > requirement.summed_required_bytes_per_second:
                bound = Verdict(BOUND_SUBJECT, upper, stream.bytes_per_second)
        summed = StreamVerdict(stream, verdict)
    return KeepUp(requirement, facts.headroom_percent, tuple(threads), summed, bound)


# -- the instantiation card -------------------------------------------------------------------------
@dataclass(frozen=True)
class CopyTime:
    """How long copying the database takes: the slowest measured node pair (or the nominal link shared
    by the pairs) for every pair, capped at the link."""

    database_bytes: int | None
    node_pairs: int
    measured_pairs: int  # node pairs with an ASYNC run
    slowest: MeasuredRun | None
    single_only: bool  # the slowest pair's run has one connection and no run has more
    link_bits_per_second: float | None
    capped_from_bytes_per_second: float | None  # the measured per-pair throughput the link capped
    estimate: InstantiationEstimate | None  # None: no size, or no throughput
    goal_seconds: float | None

    @property
    def nominal(self) -> bool:
        return self.estimate is not None and self.slowest is None

    @property
    def loopback(self) -> bool:
        return self.estimate is not None and self.slowest is not None and self.slowest.loopback

    @property
    def origin(self) -> str:
        return NOMINAL if self.slowest is None else LOOPBACK if self.slowest.loopback else MEASURED

    @property
    def no_throughput(self) -> bool:
        return self.slowest is None and not self.link_bits_per_second

    @property
    def over(self) -> bool:
        """Longer than the goal."""
        goal = self.goal_seconds
        return self.estimate is not None and goal is not None and self.estimate.total_seconds > goal

    def to_json(self) -> dict:
        estimate = self.estimate
        if estimate is None:
            return {}
        return {
            "database_bytes": estimate.database_bytes,
            "throughput_per_pair_bytes_per_second": estimate.throughput_per_pair_bytes_per_second,
            "node_pairs": estimate.node_pairs,
            "overhead_percent": estimate.overhead_percent,
            "copy_seconds": estimate.copy_seconds,
            "total_seconds": estimate.total_seconds,
            "total_hours": estimate.total_hours,
            "goal_seconds": self.goal_seconds,
            "nominal": self.nominal,
            "capacity_origin": self.origin,
            "run_id": self.slowest.id if self.slowest else None,
        }


def copy_time(facts: Facts, measured: Measurements) -> CopyTime:
    pairs = max(1, min(facts.primary_nodes, facts.standby_nodes))
    per_pair: dict[tuple[int, int], MeasuredRun] = {}
    for run in measured.async_runs:  # per pair its fastest run, over the link first
        key, best = (run.client_node, run.server_node), per_pair.get((run.client_node, run.server_node))
        if best is None or (not run.loopback, run.bytes_per_second) > (not best.loopback, best.bytes_per_second):
            per_pair[key] = run
    slowest = min(per_pair.values(), key=lambda r: r.bytes_per_second, default=None)
    link, capped_from, throughput = facts.link_bits_per_second, None, None
    if slowest is not None:
        throughput = slowest.bytes_per_second
        if link and throughput * pairs * 8 > link:
            capped_from, throughput = throughput, link / 8 / pairs
    elif measured.link_bytes_per_second:
        throughput = measured.link_bytes_per_second / pairs
    estimate = None
    if facts.database_bytes is not None and throughput is not None:
        estimate = instantiation_estimate(
            database_bytes=facts.database_bytes,
            throughput_per_pair_bytes_per_second=throughput,
            node_pairs=pairs,
            overhead_percent=facts.apply_overhead_percent,
        )
    single_only = slowest is not None and slowest.conns == 1 and not any(r.conns > 1 for r in measured.async_runs)
    return CopyTime(
        facts.database_bytes,
        pairs,
        len(per_pair),
        slowest,
        single_only,
        link,
        capped_from,
        estimate,
        facts.instantiation_goal_seconds,
    )


# -- the socket-buffer card -------------------------------------------------------------------------
@dataclass(frozen=True)
class BufferSizing:
    """The bandwidth-delay product from the nominal link (or the best aggregate run) and the RTT, and
    the window the best single stream kept in flight."""

    bandwidth_bits_per_second: float | None
    bandwidth_source: Source | None
    bandwidth_measured: bool  # no nominal link rate: the best aggregate run stands in
    rtt: RoundTrip | None
    bdp: BandwidthDelay | None  # None: no bandwidth or no RTT
    window_stream: Capacity | None = None  # the best single stream, as the transport card reads it
    window_bytes: int | None = None
    bandwidth: Capacity | None = None  # the aggregate standing in for the bandwidth (no nominal link)

    @property
    def window_run(self) -> MeasuredRun | None:
        return self.window_stream.run if self.window_stream else None

    @property
    def loopback(self) -> bool:
        return any(c is not None and c.loopback for c in (self.window_stream, self.bandwidth)) or bool(
            self.rtt and self.rtt.loopback
        )

    def to_json(self) -> dict:
        if self.bdp is None:
            return {}
        values = {
            "bandwidth_bits_per_second": self.bdp.bandwidth_bits_per_second,
            "bandwidth_origin": self.bandwidth.origin if self.bandwidth else NOMINAL,
            "rtt_seconds": self.bdp.rtt_seconds,
            "bdp_bytes": self.bdp.bdp_bytes,
            "socket_buffer_bytes": self.bdp.socket_buffer_bytes,
        }
        if self.window_bytes is not None:
            values["measured_window_bytes"] = self.window_bytes
            values["window_capacity"] = self.window_stream.to_json()
        return values


def buffer_sizing(facts: Facts, measured: Measurements) -> BufferSizing:
    """The BDP from the nominal link (else the aggregate capacity) and the RTT; the window of the best
    single stream's capacity (a loopback run capped at the link: never its own rate x the WAN RTT)."""
    bandwidth, aggregate, rtt = facts.link_bits_per_second, measured.aggregate(), measured.rtt
    if bandwidth:
        sizing = BufferSizing(bandwidth, NOMINAL_BANDWIDTH, False, rtt, None)
    elif aggregate:
        bandwidth = aggregate.bytes_per_second * 8
        sizing = BufferSizing(bandwidth, aggregate.source, True, rtt, None, bandwidth=aggregate)
    else:
        sizing = BufferSizing(None, None, False, rtt, None)
    if not bandwidth or rtt is None:
        return sizing
    sizing = replace(sizing, bdp=bandwidth_delay(bandwidth_bits_per_second=bandwidth, rtt_seconds=rtt.seconds))
    stream = measured.best_single_stream()
    if stream is None:
        return sizing
    window = tcp_window_bytes(send_bytes_per_second=stream.bytes_per_second, rtt_seconds=rtt.seconds)
    return replace(sizing, window_stream=stream, window_bytes=window)


def settings_basis(
    facts: Facts, requirement: Requirement | None, measured: Measurements, bdp: BandwidthDelay | None
) -> SettingsBasis | None:
    """What the recommended settings are sized from: the socket-buffer card's BDP, and the MTU of the
    latest run over the link (the loopback's 65,536 bytes are not the data link's)."""
    if bdp is None:
        return None
    mtus = [r.mtu_bytes for r in sorted(measured.runs, key=lambda r: r.created_at) if r.mtu_bytes and not r.loopback]
    return SettingsBasis(
        platform=facts.platform,
        socket_buffer_bytes=bdp.socket_buffer_bytes,
        bdp_bytes=bdp.bdp_bytes,
        mtu_bytes=mtus[-1] if mtus else STANDARD_MTU_BYTES,
        interface=facts.data_interface,
        avg_redo_write_bytes=requirement.avg_redo_write_bytes if requirement else None,
        hadr_buffer=facts.hadr_buffer,
        hadr_syncmode=facts.hadr_syncmode,
        hadr_pairs=facts.hadr_pairs,
        hosts=facts.host_kernels,
        release=facts.release,
        transport_mode=facts.transport_mode,
        explicit_gain=explicit_gain(measured.runs),
    )


# -- the ASYNC lag replay ---------------------------------------------------------------------------
KEEPS_UP, BEHIND, SHORT = "keeps up", "behind", "short"


@dataclass(frozen=True)
class ThreadReplay:
    """One thread's history replayed through its stream; no replay: no times, or no stream."""

    need: ThreadNeed
    stream: Stream | None
    replay: LagReplay | None

    @property
    def state(self) -> str:
        """KEEPS_UP when the stream carries the requirement (the transport card passes it), BEHIND when
        the replay queues, SHORT when it is short of the requirement but no average replayed queues."""
        if self.stream.bytes_per_second >= self.need.required_bytes_per_second:
            return KEEPS_UP
        return BEHIND if self.replay.max_backlog_bytes else SHORT

    def to_json(self) -> dict:
        replay, stream = self.replay, self.stream
        return {
            "thread": self.need.thread,
            "state": self.state,
            "run_id": stream.run.id if stream.run else None,
            "nominal": stream.nominal,
            "capacity": stream.to_json(),
            "drain_bytes_per_second": stream.bytes_per_second,
            "required_bytes_per_second": self.need.required_bytes_per_second,
            "max_lag_seconds": replay.max_lag_seconds,
            "max_backlog_bytes": replay.max_backlog_bytes,
            "max_at": replay.max_at.isoformat() if replay.max_at else None,
            "drain_seconds": replay.drain_seconds,
            "drained": replay.drained,
            "lagging_seconds": replay.lagging_seconds,
            "basis": self.need.replay_basis.to_json(),
        }


@dataclass(frozen=True)
class LagExposure:
    threads: tuple[ThreadReplay, ...]  # every thread, replayed or not

    @property
    def replayed(self) -> list[ThreadReplay]:
        return [t for t in self.threads if t.replay is not None]

    def in_state(self, state: str) -> list[ThreadReplay]:
        return [t for t in self.replayed if t.state == state]

    @property
    def worst(self) -> ThreadReplay | None:
        """The thread furthest behind."""
        return max(self.in_state(BEHIND), key=lambda t: t.replay.max_lag_seconds, default=None)

    @property
    def failed(self) -> bool:
        """The worst backlog is still queued when the history ends."""
        return self.worst is not None and not self.worst.replay.drained

    @property
    def nominal(self) -> bool:
        return any(t.stream.nominal for t in self.replayed)

    @property
    def loopback(self) -> bool:
        return any(t.stream.loopback for t in self.replayed)

    @property
    def series(self) -> dict[int, list]:
        return {t.need.thread: t.replay.series for t in self.replayed}

    def to_json(self) -> dict:
        return {"threads": [t.to_json() for t in self.replayed]}


# Replays of the series this process holds (a stored requirement is one object per history, kept while
# its analysis is current): (id of the series, drain rate) -> (the series, its replay). A page shows the
# plan often and its history rarely changes; a year of logs replays in ~20 ms.
_REPLAYS: dict[tuple[int, float], tuple[list, LagReplay]] = {}
_REPLAYS_KEPT = 64


def _replayed(series: list, drain_bytes_per_second: float) -> LagReplay:
    key = (id(series), drain_bytes_per_second)
    found = _REPLAYS.get(key)
    if found is not None and found[0] is series:
        return found[1]
    replay = replay_lag(series, drain_bytes_per_second=drain_bytes_per_second)
    if len(_REPLAYS) >= _REPLAYS_KEPT:
        _REPLAYS.clear()
    _REPLAYS[key] = (series, replay)
    return replay


def lag_exposure(requirement: Requirement, measured: Measurements) -> LagExposure:
    """Each timed thread's finest series drained at its stream's rate (seed 003: the lag is the loss)."""
    threads = []
    for need in sorted(requirement.threads.values(), key=lambda t: t.thread):
        stream = measured.stream(need.thread)
        replay = None
        if need.replay and stream is not None:
            replay = _replayed(need.replay, stream.bytes_per_second)
        threads.append(ThreadReplay(need, stream, replay))
    return LagExposure(tuple(threads))
