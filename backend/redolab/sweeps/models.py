"""Sweeps (grids of runs), schedules (runs repeated until a date) and clusters (one sweep per node pair)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from redolab.core.db import Base, UTCDateTime, enum_column, utcnow
from redolab.environments.models import HostPair
from redolab.runs.models import Lifecycle, Run


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


class Sweep(HostPair, Lifecycle, Base):
    """A declarative grid of runs between one host pair, expanded into child runs as it goes.

    `parameters` holds what every child run shares (mode, message size, duration, ...), as the
    RunCreate fields; `values` the swept axis (connection counts or sizes in bytes); `conns_values`
    the connection counts each buffer size is run at.
    """

    __tablename__ = "sweeps"
    __table_args__ = {"info": {"contents": (3, "sweep", False)}}

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    kind: Mapped[SweepKind] = mapped_column(enum_column(SweepKind))
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
    __table_args__ = {"info": {"contents": (4, "schedule", False)}}

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    what: Mapped[str] = mapped_column(String(10))  # run or sweep
    template: Mapped[dict] = mapped_column(JSON)  # the RunCreate or SweepCreate fields
    client_host_name: Mapped[str] = mapped_column(String(100))
    server_host_name: Mapped[str] = mapped_column(String(100))
    every_seconds: Mapped[float] = mapped_column(Float)
    until: Mapped[datetime] = mapped_column(UTCDateTime())
    next_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    status: Mapped[ScheduleStatus] = mapped_column(
        enum_column(ScheduleStatus), default=ScheduleStatus.active, index=True
    )
    label: Mapped[str] = mapped_column(String(200), default="")
    # Occurrences not started: [{"at": ISO time, "reason": text}], newest last (at most 500 kept).
    skipped: Mapped[list[dict]] = mapped_column(JSON, default=list)
    requested_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Cluster(Base):
    """A cluster run (seed 000, Task 3): node 1 -> node 1, node 2 -> node 2, ... at the same time,
    each pair an ordinary run with the same parameters; the cluster's throughput is the sum of what they
    carried at once."""

    __tablename__ = "clusters"
    __table_args__ = {"info": {"contents": (3, "cluster run", False)}}  # its pairs are counted as runs

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    reverse: Mapped[bool] = mapped_column(Boolean, default=False)  # standby nodes send to primary nodes
    # across the direct destinations (issue 38): the primary to every destination it feeds at once,
    # measuring the shared uplink as production loads it; else node n -> node n of the first destination
    across_hops: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    template: Mapped[dict] = mapped_column(JSON)  # the RunCreate fields every pair shares
    label: Mapped[str] = mapped_column(String(200), default="")
    requested_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # what the pairs carried at once, stored when the last pair ends (clusters.together): the span every
    # succeeded pair was measuring ("seconds") and each one's bytes received within it ("bytes", by run id)
    together: Mapped[dict | None] = mapped_column(JSON)

    runs: Mapped[list[Run]] = relationship(order_by="Run.id", foreign_keys="Run.cluster_id", viewonly=True)
