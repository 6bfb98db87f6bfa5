"""The hadrCalculator view (pure; the log disk model is disktest.fit). Units: bytes, seconds, bytes per second.

Disk (seed 001, simhadr `-disk RATE OVERHEAD`): a write of `size` bytes takes size / rate + overhead.
From two or more write sizes the line is fitted by least squares; simhadr's own convention (the MB/s
of the largest writes as the rate, the time per write of the smallest as the overhead) is kept
alongside, because that is what the seed passes to `simhadr -disk`.

Per interval of the log history, with flush size F (the interval's average flush, else its average
write), the network's rate N and round trip R (from runs), and primary and standby disks
(time(F) = F / rate + overhead), one flush takes (HADR's log shipping, hadrCalculator's model):
- SYNC:       write on the primary, then send, write on the standby and the acknowledgement:
              t_p(F) + F / N + t_s(F) + R
- NEARSYNC:   the primary writes while the log is sent; the standby acknowledges on receipt:
              max(t_p(F), F / N + R)
- ASYNC:      the primary writes while the log is handed to TCP: max(t_p(F), F / N)
- SUPERASYNC: log writing does not wait for shipping; the standby catches up at min(N, standby disk).
The mode sustains F / t bytes per second. An interval whose rate is above it would have slowed the
primary down (or, in SUPERASYNC, left the standby behind). The calculator marks those with `?`, `??`
and `???`; here they are words: "slows the primary" (up to 1.5x the limit), "much slower" (up to
3x), "far beyond" (more).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from redolab.core.units import DB2_PAGE_BYTES, format_count
from redolab.disktest.fit import Disk

PAGE_BYTES = DB2_PAGE_BYTES  # a Db2 log page
DEFAULT_FLUSH_BYTES = 16 * PAGE_BYTES  # simhadr's default flush size
MODES = ("SYNC", "NEARSYNC", "ASYNC", "SUPERASYNC")
LEVELS = (
    (1.0, "keeps up", ""),
    (1.5, "slows the primary", "?"),
    (3.0, "much slower", "??"),
    (math.inf, "far beyond", "???"),
)


@dataclass(frozen=True)
class Network:
    rate_bytes_per_second: float
    rtt_seconds: float


def flush_seconds(mode: str, flush_bytes: float, network: Network, primary: Disk, standby: Disk) -> float:
    send = flush_bytes / network.rate_bytes_per_second
    if mode == "SYNC":
        return primary.write_seconds(flush_bytes) + send + standby.write_seconds(flush_bytes) + network.rtt_seconds
    if mode == "NEARSYNC":
        return max(primary.write_seconds(flush_bytes), send + network.rtt_seconds)
    if mode == "ASYNC":
        return max(primary.write_seconds(flush_bytes), send)
    if mode == "SUPERASYNC":  # shipping catches up at the slower of the link and the standby's disk
        return max(send, standby.write_seconds(flush_bytes))
    raise ValueError(f"unknown HADR sync mode {mode}")


def mode_limit(mode: str, flush_bytes: float, network: Network, primary: Disk, standby: Disk) -> float:
    """The log rate (bytes/s) the mode sustains with flushes of `flush_bytes`."""
    return flush_bytes / flush_seconds(mode, flush_bytes, network, primary, standby)


def level(rate: float, limit: float) -> tuple[str, str]:
    """(words, the calculator's marks) for a workload `rate` against a mode's `limit`."""
    ratio = rate / limit if limit > 0 else math.inf
    for bound, words, marks in LEVELS:
        if ratio <= bound:
            return words, marks
    return LEVELS[-1][1], LEVELS[-1][2]


@dataclass
class CalculatorRow:
    start: datetime | None
    end: datetime | None
    member: int
    rate_bytes_per_second: float
    flush_bytes: float
    limits: dict[str, float]  # mode -> bytes/s
    levels: dict[str, tuple[str, str]]  # mode -> (words, marks)


@dataclass
class Calculator:
    rows: list[CalculatorRow]
    network: Network
    primary: Disk
    standby: Disk
    flush_basis: str
    exceeded: dict[str, int] = field(default_factory=dict)  # mode -> intervals above its limit
    worst: dict[str, float] = field(default_factory=dict)  # mode -> highest rate / limit

    def advice(self) -> tuple[str, str]:
        """(HADR_SYNCMODE, why): the strictest mode that kept up with every interval."""
        for mode in MODES:
            if self.exceeded.get(mode, 0) == 0:
                if mode == "SYNC":
                    return (
                        mode,
                        "SYNC kept up with every interval of the history: the strongest protection costs nothing here",
                    )
                stricter = ", ".join(m for m in MODES[: MODES.index(mode)])
                return mode, (
                    f"{mode} is the strictest mode that kept up with every interval ({stricter} would have slowed the "
                    f"primary in {self.exceeded[MODES[0]]:,} of {len(self.rows):,} intervals or more)"
                )
        return "SUPERASYNC", (
            "no mode keeps up with the peaks: even SUPERASYNC leaves the standby behind at the peak (the link or the "
            "standby's disk is too slow); test a faster link or disk, or plan for log spooling"
        )


def calculate(
    intervals, *, network: Network, primary: Disk, standby: Disk, default_flush_bytes: float = DEFAULT_FLUSH_BYTES
) -> Calculator:
    """Every interval of the history against every mode. `intervals`: RedoInterval-like objects
    (start, end, thread, bytes, writes, rate)."""
    rows: list[CalculatorRow] = []
    basis = "each interval's average flush (log pages written / log writes)"
    defaulted = 0
    for interval in intervals:
        rate = interval.rate
        if rate is None:
            continue
        if interval.writes:
            flush = interval.bytes / interval.writes
        else:
            flush, defaulted = default_flush_bytes, defaulted + 1
        limits = {mode: mode_limit(mode, flush, network, primary, standby) for mode in MODES}
        rows.append(
            CalculatorRow(
                interval.start,
                interval.end,
                interval.thread,
                rate,
                flush,
                limits,
                {mode: level(rate, limit) for mode, limit in limits.items()},
            )
        )
    if defaulted:
        basis += (
            f"; {format_count(defaulted, 'interval')} without a write count "
            f"{'uses' if defaulted == 1 else 'use'} {default_flush_bytes / PAGE_BYTES:g} pages "
            "(simhadr's default flush size)"
        )
    rows.sort(key=lambda row: (row.start or datetime.min, row.member))
    result = Calculator(rows, network, primary, standby, basis)
    for mode in MODES:
        result.exceeded[mode] = sum(1 for row in rows if row.rate_bytes_per_second > row.limits[mode])
        result.worst[mode] = max((row.rate_bytes_per_second / row.limits[mode] for row in rows), default=0.0)
    return result


def receive_buffer_pages(
    *,
    largest_current_gap_bytes: float | None,
    peak_rate_bytes_per_second: float | None,
    headroom_ratio: float,
    captured_pages: int | None = None,
    fullest_percent: float | None = None,
    log_buffer_pages: int | None = None,
) -> tuple[int, str]:
    """DB2_HADR_BUF_SIZE in 4 KiB pages, starting from the size in use (STANDBY_RECV_BUF_SIZE):
    the largest current gap seen (log positions, never HADR_LOG_GAP's running average), one second of
    the peak log rate, or the most of the receive buffer seen in use, whichever is larger, plus
    headroom; a buffer seen full needs more than it had (twice). Never below the size in use (said
    so); the fixed rule (2 x LOGBUFSZ) only without data."""
    candidates = []
    if largest_current_gap_bytes:
        gap = (
            f"the largest current log gap seen ({largest_current_gap_bytes:,.0f} bytes, primary minus standby position)"
        )
        candidates.append((largest_current_gap_bytes, gap))
    if peak_rate_bytes_per_second:
        candidates.append((peak_rate_bytes_per_second, "one second of the peak log rate"))
    if captured_pages and fullest_percent is not None:
        used = captured_pages * PAGE_BYTES * fullest_percent / 100
        if fullest_percent >= 90:
            full = (
                f"the receive buffer in use was seen {fullest_percent:.0f} % full, so the need is above its "
                f"{captured_pages:,} pages: twice that"
            )
            candidates.append((2 * captured_pages * PAGE_BYTES, full))
        elif used:
            candidates.append(
                (
                    used,
                    f"the most of the receive buffer seen in use ({fullest_percent:.0f} % of {captured_pages:,} pages)",
                )
            )
    if not candidates:
        if captured_pages:
            return captured_pages, f"the size in use ({captured_pages:,} pages): no log rate or gap to size it from"
        pages = 2 * (log_buffer_pages or 2048)
        return pages, "no history: the default rule, twice LOGBUFSZ"
    size, why = max(candidates)
    pages = max(math.ceil(size * (1 + headroom_ratio) / PAGE_BYTES), 2 * (log_buffer_pages or 0))
    why = f"{why} + {headroom_ratio * 100:.0f} %"
    if captured_pages and pages < captured_pages:
        return (
            captured_pages,
            f"the size in use ({captured_pages:,} pages) is kept: it is more than the data needs ({why}: "
            f"{pages:,} pages)",
        )
    if captured_pages:
        why += f" (in use: {captured_pages:,} pages)"
    return pages, why
