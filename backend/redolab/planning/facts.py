"""What a plan is computed from: the environment's own numbers (Facts) and the chosen runs as the
cards read them (Measurements: one stream per primary node, the best aggregate, the round-trip time).
Pure. Units: bytes, seconds, bits or bytes per second."""

from __future__ import annotations

from dataclasses import dataclass

from redolab.disktest.fit import Disk
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


@dataclass(frozen=True)
class Stream:
    """What one transport stream carries (bytes/s): a measured run, or the nominal link (no run)."""

    bytes_per_second: float
    source: Source
    run: MeasuredRun | None = None

    @property
    def nominal(self) -> bool:
        return self.run is None

    @classmethod
    def measured(cls, run: MeasuredRun) -> Stream:
        return cls(run.bytes_per_second, run.source, run)


@dataclass(frozen=True)
class RoundTrip:
    seconds: float
    source: Source
    measured: bool  # no link RTT on the environment: the minimum TCP_INFO rtt of a run stands in


@dataclass(frozen=True)
class Measurements:
    """The chosen runs as the cards read them (loopback ones only when chosen by name)."""

    runs: tuple[MeasuredRun, ...]
    single: dict[int, MeasuredRun]  # primary node -> its best single-connection ASYNC run
    best_aggregate: MeasuredRun | None  # the best ASYNC run, any connection count
    link_bytes_per_second: float | None  # the environment's nominal link
    rtt: RoundTrip | None

    @classmethod
    def of(cls, facts: Facts, runs: list[MeasuredRun]) -> Measurements:
        single: dict[int, MeasuredRun] = {}
        for run in runs:
            best = single.get(run.client_node)
            if (
                run.mode == "async"
                and run.conns == 1
                and (best is None or run.bytes_per_second > best.bytes_per_second)
            ):
                single[run.client_node] = run
        link = facts.link_bits_per_second / 8 if facts.link_bits_per_second else None
        return cls(tuple(runs), single, _best(r for r in runs if r.mode == "async"), link, _round_trip(facts, runs))

    @property
    def async_runs(self) -> list[MeasuredRun]:
        return [r for r in self.runs if r.mode == "async"]

    @property
    def loopback(self) -> list[MeasuredRun]:
        return [r for r in self.runs if r.loopback]

    @property
    def best_single(self) -> MeasuredRun | None:
        """The best single-connection ASYNC run from any primary node."""
        return _best(self.single.values())

    def stream(self, thread: int) -> Stream | None:
        """What one transport stream from primary node `thread` carries: the best single-connection
        ASYNC run from it, else the nominal link rate (no run), else nothing."""
        run = self.single.get(thread)
        if run is not None:
            return Stream.measured(run)
        if self.link_bytes_per_second:
            return Stream(self.link_bytes_per_second, NOMINAL_LINK)
        return None

    def aggregate(self) -> Stream | None:
        """What the link carries for all threads: the best ASYNC run, else the nominal link, else nothing."""
        if self.best_aggregate is not None:
            return Stream.measured(self.best_aggregate)
        if self.link_bytes_per_second:
            return Stream(self.link_bytes_per_second, NOMINAL_LINK)
        return None


def _best(runs) -> MeasuredRun | None:
    return max(runs, key=lambda r: r.bytes_per_second, default=None)


def _round_trip(facts: Facts, runs: list[MeasuredRun]) -> RoundTrip | None:
    """The environment's link RTT, else the minimum TCP_INFO rtt measured."""
    if facts.link_rtt_seconds:
        return RoundTrip(facts.link_rtt_seconds, LINK_RTT, measured=False)
    run = min((r for r in runs if r.metrics.rtt_min_seconds), key=lambda r: r.metrics.rtt_min_seconds, default=None)
    return RoundTrip(run.metrics.rtt_min_seconds, run.source, measured=True) if run is not None else None
