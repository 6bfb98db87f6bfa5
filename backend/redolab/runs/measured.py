"""A succeeded probe run as the plan sees it (MeasuredRun) and how a card names it (Source)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from redolab.runs.parsers.redoprobe import RunMetrics


@dataclass(frozen=True)
class MeasuredRun:
    """A succeeded probe run over a destination's hop (a primary node to a standby node, or a node of the
    destination forwarding redo to one of the destination it feeds), as planning sees it."""

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
    tags: tuple[str, ...] = ()
    origin: str = "measured"  # measured | imported: oratcptest | imported: iperf3
    hop: int | None = None  # the destination whose hop it measured (None: an environment without destinations)
    cluster: int | None = None  # the cluster run (or run across hops) it was one pair of
    duration_seconds: float = 0.0  # the run's planned duration (a cluster's pairs overlap within 10 % of it)
    sockbuf_bytes: int | None = None  # an explicit socket buffer; None: the kernel autotuned

    @property
    def source(self) -> Source:
        what = f"{self.mode.upper()}, {self.conns} conn{'s' if self.conns > 1 else ''}"
        return Source(f"run #{self.id} ({what}{', ' + self.label if self.label else ''})", f"/runs/{self.id}")


@dataclass(frozen=True)
class Source:
    label: str
    url: str | None = None
