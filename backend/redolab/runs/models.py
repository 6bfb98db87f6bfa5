"""Experiment runs and the events the probes sent."""

from __future__ import annotations

import secrets
from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from redolab.core.db import Base, UTCDateTime, enum_column, utcnow
from redolab.environments.models import HostPair
from redolab.jobs.models import WorkStatus

RunStatus = WorkStatus  # queued, running, succeeded, failed, cancelled


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


def new_mark() -> int:
    """A run's change mark: 40 random bits (the sum over a million runs still fits in 64 bits)."""
    return secrets.randbits(40)


class Lifecycle:
    """Queued, running, then one of succeeded, failed, cancelled: who asked, when, and why it failed."""

    status: Mapped[RunStatus] = mapped_column(enum_column(RunStatus), default=RunStatus.queued, index=True)
    failure_reason: Mapped[str | None] = mapped_column(Text)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    requested_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class Run(HostPair, Lifecycle, Base):
    """One probe test from a client host (sends) to a server host (receives)."""

    __tablename__ = "runs"
    __table_args__ = (
        # covers measured_stamp's count, newest and change marks of the runs the plan reads: at 10,000
        # runs in one environment (a month of a watch) the query read every row, 4.2 ms; covered, 1.3 ms
        Index("ix_runs_measured", "environment_id", "status", "rehearsal_id", "bytes_per_second", "change_mark", "id"),
        {"info": {"contents": (2, "run", True)}},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    mode: Mapped[ProbeMode] = mapped_column(enum_column(ProbeMode))
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
    # A rehearsal's run replays its part of the rehearsal's schedule (`redoprobe client --schedule`):
    # its connections' slots renumbered from 0, the volume scale and the time compression.
    rehearsal_id: Mapped[int | None] = mapped_column(ForeignKey("rehearsals.id", ondelete="CASCADE"), index=True)
    # A watch's check (watches.WatchCheck) this run measures for; the run is kept if the watch goes
    watch_check_id: Mapped[int | None] = mapped_column(ForeignKey("watch_checks.id", ondelete="SET NULL"), index=True)
    # The text as uploaded, kept only by runs made before schedules were stored once (migration
    # a7c3e5f10043); newer runs name the stored schedule and the connections of it they replay.
    replay_schedule: Mapped[str | None] = mapped_column(Text, deferred=True)
    replay_schedule_id: Mapped[int | None] = mapped_column(
        ForeignKey("replay_schedules.id", ondelete="SET NULL"), index=True
    )
    replay_connections: Mapped[list[int] | None] = mapped_column(JSON)  # None: every connection, as numbered
    # The destination the run's server host fed when the run was made (a rehearsal across hops is read
    # per destination, whatever became of the host since)
    replay_destination_id: Mapped[int | None] = mapped_column(ForeignKey("destinations.id", ondelete="SET NULL"))
    replay_scale: Mapped[float | None] = mapped_column(Float)
    replay_speedup: Mapped[float | None] = mapped_column(Float)

    # Imported results: the tool, the uploaded file's name and the text this run was read from.
    source: Mapped[RunSource] = mapped_column(
        enum_column(RunSource), default=RunSource.redoprobe, server_default=RunSource.redoprobe.value, index=True
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

    # A random mark drawn again by every change to the row (every UPDATE, and storing its summary):
    # the plan's cache of measured runs compares their sum, in every process, to know it is still
    # current. Random rather than counted, so a run deleted and another stored under its id (SQLite
    # reuses the highest id) still changes the sum.
    change_mark: Mapped[int] = mapped_column(BigInteger, default=new_mark, server_default="0", onupdate=new_mark)

    events: Mapped[list[RunEvent]] = relationship(
        cascade="all, delete-orphan", order_by="RunEvent.seq", passive_deletes=True
    )
    summary: Mapped[RunSummary | None] = relationship(cascade="all, delete-orphan", passive_deletes=True)


class ReplaySchedule(Base):
    """A schedule `redoprobe client --schedule` replays (`CONNECTION OFFSET_SECONDS BYTES` per slot),
    stored once: a rehearsal's, whose runs each replay all of it or some of its connections."""

    __tablename__ = "replay_schedules"
    __table_args__ = {"info": {"deleted_with": ("rehearsal",)}}

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    sha256: Mapped[str] = mapped_column(String(64))
    text_bytes: Mapped[int] = mapped_column(BigInteger)  # len of the UTF-8 text: what it costs to keep
    text: Mapped[str] = mapped_column(Text, deferred=True)
    requested_by: Mapped[str] = mapped_column(String(64), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


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


class RunSummary(Base):
    """What the plan and the lists read of a run, computed once from its client events when it ends
    (and by the migration that added it, for the runs before): no page reads a run's intervals to
    compare runs. Throughput, bytes, retransmits and the granted buffers are on the run itself."""

    __tablename__ = "run_summaries"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    interval_count: Mapped[int] = mapped_column(Integer, default=0)
    rtt_min_seconds: Mapped[float | None] = mapped_column(Float)
    rtt_median_seconds: Mapped[float | None] = mapped_column(Float)
    ack_count: Mapped[int] = mapped_column(BigInteger, default=0)
    ack_avg_seconds: Mapped[float | None] = mapped_column(Float)
    ack_p50_seconds: Mapped[float | None] = mapped_column(Float)
    ack_p95_seconds: Mapped[float | None] = mapped_column(Float)
    ack_p99_seconds: Mapped[float | None] = mapped_column(Float)
    server_write_seconds: Mapped[float | None] = mapped_column(Float)
    mtu_bytes: Mapped[int | None] = mapped_column(Integer)
    damaged: Mapped[str | None] = mapped_column(Text)  # why the stored lines could not be read, if so
