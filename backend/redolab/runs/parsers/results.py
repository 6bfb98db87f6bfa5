"""What a results file (oratcptest output, iperf3 JSON) gives: one ImportedRun per test."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from redolab.runs.models import ProbeMode, RunSource

MAX_TESTS_PER_FILE = 200


class ResultFileError(ValueError):
    """A file is not readable oratcptest or iperf3 output; the message names the line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass
class ImportedRun:
    source: RunSource
    mode: ProbeMode
    conns: int
    message_bytes: int
    duration_seconds: float
    interval_seconds: float
    bytes_per_second: float
    text: str  # the part of the file this run was read from
    first_line: int
    sockbuf_bytes: int | None = None
    rate_bits_per_second: int | None = None
    delay_us: int = 0
    started_at: datetime | None = None
    seconds: float | None = None
    bytes_sent: int | None = None
    bytes_received: int | None = None
    retransmits: int | None = None
    sndbuf_granted_bytes: int | None = None
    rcvbuf_granted_bytes: int | None = None
    probe_version: str | None = None
    notes: str = ""
    client_settings: dict = field(default_factory=dict)
    server_settings: dict = field(default_factory=dict)
    intervals: list[dict] = field(default_factory=list)  # redoprobe "interval" event data

    @property
    def finished_at(self) -> datetime | None:
        if self.started_at is None:
            return None
        return self.started_at + timedelta(seconds=self.seconds or self.duration_seconds)


def first_step(intervals: list[dict]) -> float:
    return intervals[0]["end_seconds"] - intervals[0]["start_seconds"] if intervals else 0.0
