"""What a results file (oratcptest output, iperf3 JSON) gives: one ImportedRun per test."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from redolab.core import fields
from redolab.runs.models import ProbeMode, RunSource

MAX_TESTS_PER_FILE = 200


class ResultFileError(ValueError):
    """A file is not readable oratcptest or iperf3 output; the message names the line."""

    def __init__(self, message: str, line: int | None = None, *, field: str | None = None) -> None:
        self.line = line
        self.field = field  # the import form's field that would fix it (test_date, message_bytes), if any
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


# -- physical bounds -------------------------------------------------------------------------------
MAX_BYTES = fields.MAX_SIZE_BYTES
MAX_BYTES_PER_SECOND = fields.MAX_BYTES_PER_SECOND
MAX_SECONDS = fields.MAX_DURATION_SECONDS
MAX_COUNT = 2**63 - 1
EARLIEST = datetime(fields.FIRST_YEAR, 1, 1, tzinfo=UTC)
LATEST = datetime(fields.LAST_YEAR + 1, 1, 1, tzinfo=UTC)
MAX_MTU_BYTES = 65536  # the loopback's; Ethernet jumbo frames are 9,000
# field: (lowest, highest, the bound as said)
_RUN_BOUNDS = {
    "conns": (1, fields.MAX_NUMBERED, "1 to 4,096 connections"),
    "message_bytes": (1, MAX_BYTES, "1 byte to 1 EiB"),
    "sockbuf_bytes": (0, MAX_BYTES, "0 to 1 EiB"),
    "duration_seconds": (1e-9, MAX_SECONDS, "more than 0 s and at most 10 years"),
    "interval_seconds": (1e-9, MAX_SECONDS, "more than 0 s and at most 10 years"),
    "seconds": (1e-9, MAX_SECONDS, "more than 0 s and at most 10 years"),
    "bytes_per_second": (1e-9, MAX_BYTES_PER_SECOND, "more than 0 and at most 1 TB/s (10^12 bytes/s)"),
    "rate_bits_per_second": (0, fields.MAX_BIT_RATE, "0 to 8 Tbit/s (1 TB/s)"),
    "delay_us": (0, MAX_SECONDS * 1e6, "0 to 10 years"),
    "bytes_sent": (0, MAX_BYTES, "0 to 1 EiB"),
    "bytes_received": (0, MAX_BYTES, "0 to 1 EiB"),
    "retransmits": (0, MAX_COUNT, "0 to 2^63 - 1"),
    "sndbuf_granted_bytes": (0, MAX_BYTES, "0 to 1 EiB"),
    "rcvbuf_granted_bytes": (0, MAX_BYTES, "0 to 1 EiB"),
}
_INTERVAL_BOUNDS = {
    "start_seconds": (0, MAX_SECONDS, "0 s to 10 years"),
    "end_seconds": (0, MAX_SECONDS, "0 s to 10 years"),
    "bytes": (0, MAX_BYTES, "0 to 1 EiB"),
    "bytes_per_second": (0, MAX_BYTES_PER_SECOND, "0 to 1 TB/s (10^12 bytes/s)"),
}


def check_bounds(run: ImportedRun) -> ImportedRun:
    """Refuse a test whose values are beyond physical bounds (a typo, a mangled file), naming the
    value and the bound; nothing of the file is stored then."""
    where = f"the test on line {run.first_line}" if run.source is RunSource.oratcptest else "the iperf3 test"

    def refuse(what: str, value, shown: str):
        return ResultFileError(f"{where}: {what} is {value!r:.40}, outside {shown}")

    for name, (low, high, shown) in _RUN_BOUNDS.items():
        value = getattr(run, name)
        if value is not None and not (isinstance(value, int | float) and low <= value <= high):  # also NaN
            raise refuse(name, value, shown)
    for name in ("started_at", "finished_at"):
        value = getattr(run, name)
        if value is not None and not EARLIEST <= value < LATEST:
            raise ResultFileError(f"{where}: {name} is {value:%Y-%m-%d %H:%M:%S}, outside the years 1970 to 2100")
    for number, interval in enumerate(run.intervals, 1):
        for name, (low, high, shown) in _INTERVAL_BOUNDS.items():
            value = interval.get(name)
            if value is not None and not (isinstance(value, int | float) and low <= value <= high):
                raise refuse(f"interval {number}'s {name}", value, shown)
        if interval["end_seconds"] < interval["start_seconds"]:
            raise ResultFileError(f"{where}: interval {number} ends before it starts")
    mtu = run.client_settings.get("mtu_bytes") or run.server_settings.get("mtu_bytes")
    if mtu is not None and not 0 < mtu <= MAX_MTU_BYTES:
        raise refuse("the path MTU", mtu, "1 to 65,536 bytes")
    return run
