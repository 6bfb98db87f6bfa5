"""The SYNC commit card's typed result (pure): what a standby adds to each commit under each transport
mode, from the standby write time, the send time of the best single stream and the RTT. Units:
bytes, seconds, bytes per second."""

from __future__ import annotations

from dataclasses import dataclass, replace

from redolab.hadr.calculator import DEFAULT_FLUSH_BYTES
from redolab.planning.facts import Capacity, DiskFact, Facts, Measurements, RoundTrip
from redolab.planning.transport import MODEL_MODE, CommitImpact, commit_impact
from redolab.redo.requirement import Requirement
from redolab.runs.loaded import UNDER_LOAD, load_run_id
from redolab.runs.measured import MeasuredRun
from redolab.runs.parsers.redoprobe import RunMetrics

# -- the SYNC commit card ---------------------------------------------------------------------------
AWR, MESSAGE, FLUSH = "awr", "message", "flush"  # where the average redo write size comes from


@dataclass(frozen=True)
class AckUnderLoad:
    """One SYNC connection's acknowledgement percentiles on an idle path and under a load on the same
    path (runs.loaded), seconds."""

    idle: MeasuredRun
    loaded: MeasuredRun

    @property
    def load_run(self) -> int | None:
        return load_run_id(self.loaded.tags)

    @property
    def added_p99_seconds(self) -> float:
        return self.loaded.metrics.ack_p99_seconds - self.idle.metrics.ack_p99_seconds

    def to_json(self) -> dict:
        return {
            "idle_run_id": self.idle.id,
            "loaded_run_id": self.loaded.id,
            "load_run_id": self.load_run,
            "idle_ack_p50_seconds": self.idle.metrics.ack_p50_seconds,
            "idle_ack_p99_seconds": self.idle.metrics.ack_p99_seconds,
            "loaded_ack_p50_seconds": self.loaded.metrics.ack_p50_seconds,
            "loaded_ack_p99_seconds": self.loaded.metrics.ack_p99_seconds,
        }


def ack_under_load(measured: Measurements) -> AckUnderLoad | None:
    """The newest SYNC run under load and the newest idle one beside it (over the link first, the same
    message size first); None without both."""
    sync = [r for r in measured.runs if r.mode == "sync" and r.conns == 1 and r.metrics.ack_p99_seconds is not None]
    loaded = max((r for r in sync if UNDER_LOAD in r.tags), key=lambda r: (not r.loopback, r.created_at), default=None)
    if loaded is None:
        return None
    idle = max(
        (r for r in sync if UNDER_LOAD not in r.tags),
        key=lambda r: (r.loopback == loaded.loopback, r.message_bytes == loaded.message_bytes, r.created_at),
        default=None,
    )
    return AckUnderLoad(idle, loaded) if idle is not None else None


@dataclass(frozen=True)
class SyncCommit:
    """What a standby adds to each commit under each transport mode (IBM hadrCalculator), from the
    standby write time (a SYNC run with O_DSYNC writes, else a disk test), the send time of the best
    single stream and the RTT."""

    rtt: RoundTrip | None
    stream: Capacity | None  # the best single stream, as the transport card reads it
    write_run: MeasuredRun | None
    disk: DiskFact | None
    mode: str  # the model mode the environment's transport behaves as
    peak_bytes_per_second: float | None  # all threads' peak redo rate
    write_bytes: float | None = None
    write_size_from: str = AWR
    write_seconds: float | None = None
    impact: CommitImpact | None = None  # None: a measurement is missing
    under_load: AckUnderLoad | None = None  # acknowledgements idle and under load, when both were measured

    @property
    def metrics(self) -> RunMetrics:
        return self.write_run.metrics if self.write_run is not None else RunMetrics(None, 0, None, None)

    @property
    def loopback(self) -> bool:
        """The send time or the standby write comes from a loopback run (this machine)."""
        runs = (self.stream.run if self.stream else None, self.write_run)
        return self.impact is not None and any(r is not None and r.loopback for r in runs)

    @property
    def added_seconds(self) -> float:
        return self.impact.added_seconds(self.mode)

    @property
    def ceiling_bytes_per_second(self) -> float:
        return self.impact.ceiling_bytes_per_second(self.mode)

    @property
    def queues(self) -> bool:
        """Commits queue at peak: one log writer's ceiling in this mode is below the redo peak."""
        peak = self.peak_bytes_per_second
        return bool(peak and self.ceiling_bytes_per_second < peak and self.mode != "ASYNC")

    def to_json(self) -> dict:
        impact, metrics = self.impact, self.metrics
        if impact is None:
            return {}
        modes = {
            name: {
                "commit_seconds": seconds,
                "added_seconds": impact.added_seconds(name),
                "ceiling_bytes_per_second": impact.ceiling_bytes_per_second(name),
            }
            for name, seconds in impact.modes.items()
        }
        return {
            "write_bytes": self.write_bytes,
            "write_seconds": self.write_seconds,
            "send_seconds": impact.send_seconds,
            "rtt_seconds": self.rtt.seconds,
            "modes": modes,
            "environment_mode": self.mode,
            "ack_under_load": self.under_load.to_json() if self.under_load is not None else None,
            "send_capacity": self.stream.to_json(),
            "write_run_id": self.write_run.id if self.write_run else None,
            "write_loopback": bool(self.write_run and self.write_run.loopback),
            "ack_p50_seconds": metrics.ack_p50_seconds,
            "ack_p95_seconds": metrics.ack_p95_seconds,
            "ack_p99_seconds": metrics.ack_p99_seconds,
        }


def sync_commit(facts: Facts, requirement: Requirement | None, measured: Measurements) -> SyncCommit:
    written = [
        r
        for r in measured.runs
        if r.mode == "sync" and r.sync_write and r.metrics.server_write_seconds and r.metrics.ack_count
    ]
    write_run = max(written, key=lambda r: (not r.loopback, r.created_at), default=None)  # over the link first
    result = SyncCommit(
        rtt=measured.rtt,
        stream=measured.best_single_stream(),
        write_run=write_run,
        disk=facts.standby_disk,
        mode=MODEL_MODE.get(facts.transport_mode, "ASYNC"),
        peak_bytes_per_second=requirement.summed_peak_bytes_per_second if requirement else None,
        under_load=ack_under_load(measured),
    )
    if (write_run is None and result.disk is None) or result.stream is None or result.rtt is None:
        return result
    write_bytes, size_from = requirement.avg_redo_write_bytes if requirement else None, AWR
    if write_bytes is None and write_run is not None:
        write_bytes, size_from = write_run.message_bytes, MESSAGE
    elif write_bytes is None:
        write_bytes, size_from = DEFAULT_FLUSH_BYTES, FLUSH
    if write_run is not None:
        write_seconds = write_run.metrics.server_write_seconds / write_run.metrics.ack_count
    else:
        write_seconds = result.disk.disk.write_seconds(write_bytes)
    impact = commit_impact(
        write_bytes=write_bytes,
        write_seconds=write_seconds,
        throughput_bytes_per_second=result.stream.bytes_per_second,
        rtt_seconds=result.rtt.seconds,
    )
    return replace(
        result, write_bytes=write_bytes, write_size_from=size_from, write_seconds=write_seconds, impact=impact
    )
