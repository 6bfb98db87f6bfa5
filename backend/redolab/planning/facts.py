"""What a plan is computed from: the environment's own numbers (Facts) and the chosen runs as the
cards read them (Measurements: one stream per primary node, the best aggregate, the round-trip time).
Pure. Units: bytes, seconds, bits or bytes per second."""

from __future__ import annotations

from dataclasses import dataclass

from redolab.disktest.fit import Disk
from redolab.environments.releases import Release
from redolab.planning.copy_time import CopySettings
from redolab.planning.encryption import HostCeiling
from redolab.planning.settings import HostKernel
from redolab.runs.measured import MeasuredRun, Source

NOMINAL_LINK = Source("environment: nominal link rate (not measured)")
NOMINAL_BANDWIDTH = Source("environment: nominal link rate")
LINK_RTT = Source("environment: link RTT")


@dataclass(frozen=True)
class DiskFact:
    disk: Disk  # time per write = size / rate + overhead
    label: str  # host and directory


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
    hadr_pairs: tuple = ()  # hadr.pairs.PairView of the db2pd captures: the values in use
    host_kernels: tuple[HostKernel, ...] = ()  # each host's kernel settings as a run last captured them
    host_ceilings: tuple[HostCeiling, ...] = ()  # each host's encryption ceiling (openssl speed), if measured
    rpo_goal_seconds: float | None = None  # the data loss the business accepts (the Rehearsal card)
    release: Release | None = None  # the database release: the Oracle Net defaults and maximums
    rto_goal_seconds: float | None = None  # the failover time the business accepts (the apply side)
    apply_rate_bytes_per_second: float | None = None  # the standby's redo apply rate, measured or entered
    fast_start_failover: bool = False
    apply_rate_source: str = "entered on the environment"  # or the pasted V$RECOVERY_PROGRESS it came from
    # Db2: the largest log received but not replayed (bytes) and when, as db2pd captured it: a takeover replays it
    takeover_gap: tuple[int, str] | None = None
    copy: CopySettings | None = None  # the instantiation copy as it will run (None: channels not set)
    link_reserved_share: float = 0.0  # of the link, kept for other traffic (0 to 0.9): redo gets the rest


NOMINAL, MEASURED, LOOPBACK = "nominal", "measured", "loopback"  # where a capacity comes from


@dataclass(frozen=True)
class Capacity:
    """What one transport stream, or the link for all threads, carries (bytes/s) and where that comes
    from: the nominal link (no run), a run over the link, or a loopback run chosen as evidence (this
    machine, not the link: capped at the nominal link when it is faster). Every card reads these."""

    bytes_per_second: float
    source: Source
    run: MeasuredRun | None = None
    capped_from_bytes_per_second: float | None = None  # the loopback run's own rate, above the nominal link

    @property
    def origin(self) -> str:
        if self.run is None:
            return NOMINAL
        return LOOPBACK if self.run.loopback else MEASURED

    @property
    def nominal(self) -> bool:
        return self.run is None

    @property
    def loopback(self) -> bool:
        return self.run is not None and self.run.loopback

    @property
    def label(self) -> str:
        """Where the figure comes from, as every card says it."""
        if self.run is None:
            return "nominal link"
        if not self.run.loopback:
            return f"measured over the link, run #{self.run.id}"
        capped = ", capped at the nominal link" if self.capped_from_bytes_per_second is not None else ""
        return f"loopback run #{self.run.id}: this machine, not the link{capped}"

    @classmethod
    def of_run(cls, run: MeasuredRun, link_bytes_per_second: float | None = None) -> Capacity:
        """A run's throughput; a loopback run above the nominal link is capped at it (only a run over
        the link may show the link carrying more than its nominal rate)."""
        if run.loopback and link_bytes_per_second and run.bytes_per_second > link_bytes_per_second:
            return cls(link_bytes_per_second, run.source, run, run.bytes_per_second)
        return cls(run.bytes_per_second, run.source, run)

    def to_json(self) -> dict:
        return {
            "bytes_per_second": self.bytes_per_second,
            "origin": self.origin,
            "label": self.label,
            "run_id": self.run.id if self.run else None,
            "capped_from_bytes_per_second": self.capped_from_bytes_per_second,
        }


Stream = Capacity  # the name the cards' results use for one stream's capacity


@dataclass(frozen=True)
class Excluded:
    """A run the plan does not use, and why (not chosen, a loopback run not ticked, a left-out tag)."""

    run: MeasuredRun
    why: str


@dataclass(frozen=True)
class RoundTrip:
    seconds: float
    source: Source
    measured: bool  # no link RTT on the environment: the minimum TCP_INFO rtt of a run stands in
    loopback: bool = False  # that run is a loopback one: this machine's round trip, not the link's


@dataclass(frozen=True)
class Measurements:
    """The chosen runs as the cards read them (loopback ones only when chosen by name)."""

    runs: tuple[MeasuredRun, ...]
    single: dict[int, MeasuredRun]  # primary node -> its best single-connection ASYNC run
    best_aggregate: MeasuredRun | None  # the best ASYNC run, any connection count
    link_bytes_per_second: float | None  # the environment's nominal link
    rtt: RoundTrip | None
    excluded: tuple[Excluded, ...] = ()  # runs of the environment the plan does not use, and why

    @classmethod
    def of(cls, facts: Facts, runs: list[MeasuredRun], excluded: list[Excluded] | None = None) -> Measurements:
        """Runs over the link come before loopback runs: a loopback run stands in only where no run
        over the link measured the same thing."""
        single: dict[int, MeasuredRun] = {}
        for node in {r.client_node for r in runs}:
            best = _best(r for r in runs if r.client_node == node and r.mode == "async" and r.conns == 1)
            if best is not None:
                single[node] = best
        link = facts.link_bits_per_second / 8 if facts.link_bits_per_second else None
        aggregate = _best(r for r in runs if r.mode == "async")
        return cls(tuple(runs), single, aggregate, link, _round_trip(facts, runs), tuple(excluded or ()))

    @property
    def async_runs(self) -> list[MeasuredRun]:
        return [r for r in self.runs if r.mode == "async"]

    @property
    def loopback(self) -> list[MeasuredRun]:
        return [r for r in self.runs if r.loopback]

    @property
    def best_single(self) -> MeasuredRun | None:
        """The best single-connection ASYNC run from any primary node (over the link first)."""
        return _best(self.single.values())

    def capacity(self, run: MeasuredRun) -> Capacity:
        """A run's throughput as every card reads it (a loopback run capped at the nominal link)."""
        return Capacity.of_run(run, self.link_bytes_per_second)

    def best_single_stream(self) -> Capacity | None:
        run = self.best_single
        return self.capacity(run) if run is not None else None

    def stream(self, thread: int) -> Capacity | None:
        """What one transport stream from primary node `thread` carries: the best single-connection
        ASYNC run from it, else the nominal link rate (no run), else nothing."""
        run = self.single.get(thread)
        if run is not None:
            return self.capacity(run)
        if self.link_bytes_per_second:
            return Capacity(self.link_bytes_per_second, NOMINAL_LINK)
        return None

    def aggregate(self) -> Capacity | None:
        """What the link carries for all threads: the best ASYNC run, else the nominal link, else nothing."""
        if self.best_aggregate is not None:
            return self.capacity(self.best_aggregate)
        if self.link_bytes_per_second:
            return Capacity(self.link_bytes_per_second, NOMINAL_LINK)
        return None

    def excluded_runs(self, *, mode: str, conns: int | None = None, node: int | None = None, write=False):
        """The left-out runs that would measure what a card misses (of `mode`; one connection when
        `conns` is 1; from primary node `node`; with a standby write when `write`)."""
        return [
            e
            for e in self.excluded
            if e.run.mode == mode
            and (conns is None or e.run.conns == conns)
            and (node is None or e.run.client_node == node)
            and (not write or (e.run.sync_write and e.run.metrics.server_write_seconds and e.run.metrics.ack_count))
        ]


def _best(runs) -> MeasuredRun | None:
    """The fastest run over the link; a loopback run only when no run over the link qualifies."""
    return max(runs, key=lambda r: (not r.loopback, r.bytes_per_second), default=None)


def _round_trip(facts: Facts, runs: list[MeasuredRun]) -> RoundTrip | None:
    """The environment's link RTT, else the minimum TCP_INFO rtt measured (over the link first: a
    loopback run's round trip is this machine's, never the WAN's)."""
    if facts.link_rtt_seconds:
        return RoundTrip(facts.link_rtt_seconds, LINK_RTT, measured=False)
    timed = [r for r in runs if r.metrics.rtt_min_seconds]
    run = min(timed, key=lambda r: (r.loopback, r.metrics.rtt_min_seconds), default=None)
    if run is None:
        return None
    return RoundTrip(run.metrics.rtt_min_seconds, run.source, measured=True, loopback=run.loopback)
