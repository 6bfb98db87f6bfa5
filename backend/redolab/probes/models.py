"""Experiment runs and the events the probes sent."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from redolab.core.db import Base, UTCDateTime, utcnow
from redolab.environments.models import Host, _enum


class RunStatus(StrEnum):
    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled)


class ProbeMode(StrEnum):
    async_ = "async"
    sync = "sync"


class RunSource(StrEnum):
    """Where a run's numbers came from: redoprobe run by redolab, or a file a team imported."""

    redoprobe = "redoprobe"
    oratcptest = "oratcptest"  # oratcptest client output (text)
    iperf3 = "iperf3"  # iperf3 -J

    @property
    def label(self) -> str:
        return {"redoprobe": "redoprobe", "oratcptest": "oratcptest output", "iperf3": "iperf3 JSON"}[self.value]


class SweepKind(StrEnum):
    connections = "connections"  # raise the connection count until the throughput stops improving
    sockbuf = "sockbuf"  # explicit socket buffer sizes (the probe's --sockbuf)
    kernel_max = "kernel_max"  # tcp_rmem/tcp_wmem maximum set by sysctl, autotuning (seed 000)

    @property
    def label(self) -> str:
        return {
            "connections": "Connection sweep",
            "sockbuf": "Socket-buffer sweep",
            "kernel_max": "Kernel-maximum sweep",
        }[self.value]


class Lifecycle:
    """Queued, running, then one of succeeded, failed, cancelled: who asked, when, and why it failed."""

    status: Mapped[RunStatus] = mapped_column(_enum(RunStatus), default=RunStatus.queued, index=True)
    failure_reason: Mapped[str | None] = mapped_column(Text)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    requested_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class Run(Lifecycle, Base):
    """One probe test from a client host (sends) to a server host (receives)."""

    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    client_host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="SET NULL"))
    server_host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="SET NULL"))
    # Names at request time, so a run stays readable after its hosts are edited or removed.
    client_host_name: Mapped[str] = mapped_column(String(100))
    server_host_name: Mapped[str] = mapped_column(String(100))
    mode: Mapped[ProbeMode] = mapped_column(_enum(ProbeMode))
    conns: Mapped[int] = mapped_column(Integer)
    message_bytes: Mapped[int] = mapped_column(BigInteger)
    sockbuf_bytes: Mapped[int | None] = mapped_column(BigInteger)
    duration_seconds: Mapped[float] = mapped_column(Float)
    interval_seconds: Mapped[float] = mapped_column(Float)
    delay_us: Mapped[int] = mapped_column(BigInteger, default=0)
    rate_bits_per_second: Mapped[int | None] = mapped_column(BigInteger)
    write_dir: Mapped[str | None] = mapped_column(String(500))
    sync_write: Mapped[bool] = mapped_column(Boolean, default=False)
    # redoprobe's link options: the data connections' congestion control and pacing cap, sendfile()
    # from a memfd, and reverse (the server host sends, the client host receives)
    congestion: Mapped[str | None] = mapped_column(String(15))
    fq_rate_bits_per_second: Mapped[int | None] = mapped_column(BigInteger)
    zerocopy: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    reverse: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    label: Mapped[str] = mapped_column(String(200), default="")
    notes: Mapped[str] = mapped_column(Text, default="")
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)

    # A run of a sweep: which grid point (in the order run) and which repetition of it.
    sweep_id: Mapped[int | None] = mapped_column(ForeignKey("sweeps.id", ondelete="SET NULL"), index=True)
    sweep_point: Mapped[int | None] = mapped_column(Integer)
    repetition: Mapped[int | None] = mapped_column(Integer)
    # The tcp_rmem/tcp_wmem maximum a kernel-maximum sweep set on both hosts for this run.
    kernel_max_bytes: Mapped[int | None] = mapped_column(BigInteger)
    schedule_id: Mapped[int | None] = mapped_column(ForeignKey("schedules.id", ondelete="SET NULL"), index=True)
    cluster_id: Mapped[int | None] = mapped_column(ForeignKey("clusters.id", ondelete="SET NULL"), index=True)

    # Imported results: the tool, the uploaded file's name and the text this run was read from.
    source: Mapped[RunSource] = mapped_column(
        _enum(RunSource), default=RunSource.redoprobe, server_default=RunSource.redoprobe.value, index=True
    )
    source_name: Mapped[str | None] = mapped_column(String(255))
    source_text: Mapped[str | None] = mapped_column(Text, deferred=True)

    # What was run, where, with what: everything needed to trust and compare it later.
    probe_version: Mapped[str | None] = mapped_column(String(50))
    probe_sha256: Mapped[str | None] = mapped_column(String(64))
    client_command: Mapped[str | None] = mapped_column(Text)
    server_command: Mapped[str | None] = mapped_column(Text)
    client_settings: Mapped[dict | None] = mapped_column(JSON)
    server_settings: Mapped[dict | None] = mapped_column(JSON)

    # Summary from the client's end event (bytes_received is the server's count).
    seconds: Mapped[float | None] = mapped_column(Float)
    bytes_sent: Mapped[int | None] = mapped_column(BigInteger)
    bytes_received: Mapped[int | None] = mapped_column(BigInteger)
    bytes_per_second: Mapped[float | None] = mapped_column(Float)
    retransmits: Mapped[int | None] = mapped_column(BigInteger)
    sndbuf_granted_bytes: Mapped[int | None] = mapped_column(BigInteger)
    rcvbuf_granted_bytes: Mapped[int | None] = mapped_column(BigInteger)

    client_host: Mapped[Host | None] = relationship(foreign_keys=[client_host_id])
    server_host: Mapped[Host | None] = relationship(foreign_keys=[server_host_id])
    events: Mapped[list[RunEvent]] = relationship(
        cascade="all, delete-orphan", order_by="RunEvent.seq", passive_deletes=True
    )


class RunEvent(Base):
    """One JSON line from a probe, stored as it arrived (charts are redrawn from these)."""

    __tablename__ = "run_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(10))  # client or server
    event: Mapped[str] = mapped_column(String(20))
    line: Mapped[str] = mapped_column(Text)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Sweep(Lifecycle, Base):
    """A declarative grid of runs between one host pair, expanded into child runs as it goes.

    `parameters` holds what every child run shares (mode, message size, duration, ...), as the
    RunCreate fields; `values` the swept axis (connection counts or sizes in bytes); `conns_values`
    the connection counts each buffer size is run at.
    """

    __tablename__ = "sweeps"

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    client_host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="SET NULL"))
    server_host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="SET NULL"))
    client_host_name: Mapped[str] = mapped_column(String(100))
    server_host_name: Mapped[str] = mapped_column(String(100))
    kind: Mapped[SweepKind] = mapped_column(_enum(SweepKind))
    parameters: Mapped[dict] = mapped_column(JSON)
    values: Mapped[list[int]] = mapped_column(JSON)
    conns_values: Mapped[list[int]] = mapped_column(JSON, default=list)
    repetitions: Mapped[int] = mapped_column(Integer, default=1)
    threshold_percent: Mapped[float] = mapped_column(Float, default=5.0)
    patience: Mapped[int] = mapped_column(Integer, default=3)
    label: Mapped[str] = mapped_column(String(200), default="")
    notes: Mapped[str] = mapped_column(Text, default="")
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)

    schedule_id: Mapped[int | None] = mapped_column(ForeignKey("schedules.id", ondelete="SET NULL"), index=True)

    # The connection count where the throughput stopped improving (connection sweeps).
    best_conns: Mapped[int | None] = mapped_column(Integer)
    # Kernel-maximum sweeps: each host's tcp_rmem/tcp_wmem before the sweep, and whether they
    # were put back ({"client": {"tcp_rmem": [..], "tcp_wmem": [..]}, "server": {...}}).
    kernel_original: Mapped[dict | None] = mapped_column(JSON)
    kernel_restored: Mapped[bool | None] = mapped_column(Boolean)

    client_host: Mapped[Host | None] = relationship(foreign_keys=[client_host_id])
    server_host: Mapped[Host | None] = relationship(foreign_keys=[server_host_id])
    runs: Mapped[list[Run]] = relationship(
        order_by="(Run.sweep_point, Run.repetition, Run.id)", foreign_keys="Run.sweep_id", viewonly=True
    )


class ScheduleStatus(StrEnum):
    active = "active"
    finished = "finished"  # its end date passed
    stopped = "stopped"  # a user stopped it


class Schedule(Base):
    """Repeat a run or a sweep every N seconds until a date (oratcptest's -freq), to see how the
    bandwidth varies over the day. An occurrence is skipped, and says so, when the hosts are busy."""

    __tablename__ = "schedules"

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    what: Mapped[str] = mapped_column(String(10))  # run or sweep
    template: Mapped[dict] = mapped_column(JSON)  # the RunCreate or SweepCreate fields
    client_host_name: Mapped[str] = mapped_column(String(100))
    server_host_name: Mapped[str] = mapped_column(String(100))
    every_seconds: Mapped[float] = mapped_column(Float)
    until: Mapped[datetime] = mapped_column(UTCDateTime())
    next_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    status: Mapped[ScheduleStatus] = mapped_column(_enum(ScheduleStatus), default=ScheduleStatus.active, index=True)
    label: Mapped[str] = mapped_column(String(200), default="")
    # Occurrences not started: [{"at": ISO time, "reason": text}], newest last (at most 500 kept).
    skipped: Mapped[list[dict]] = mapped_column(JSON, default=list)
    requested_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Cluster(Base):
    """A cluster run (seed 000, Task 3): node 1 -> node 1, node 2 -> node 2, ... at the same time,
    each pair an ordinary run with the same parameters; the cluster's throughput is their sum."""

    __tablename__ = "clusters"

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    reverse: Mapped[bool] = mapped_column(Boolean, default=False)  # standby nodes send to primary nodes
    template: Mapped[dict] = mapped_column(JSON)  # the RunCreate fields every pair shares
    label: Mapped[str] = mapped_column(String(200), default="")
    requested_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    runs: Mapped[list[Run]] = relationship(order_by="Run.id", foreign_keys="Run.cluster_id", viewonly=True)
