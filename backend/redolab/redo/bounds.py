"""Physical bounds of every redo value stored: beyond them a value is a typo, a mangled file or an
attack, and is refused with its line and the bound, never stored.

- sizes: finite, 0 to 1 EiB; counts of writes the same;
- rates (a log's size over its span, a sampled maximum, a percentile): 0 to 1 TB/s;
- times: the years 1970 to 2100; a row never ends before it starts; a span is at most 10 years;
- thread (RAC instance), instance and archive destination numbers: 0 to 4,096;
- sequence and resetlogs numbers: 0 to 2^63 - 1 (a 64-bit column).

A log whose two times are the same second is kept: Oracle's times have one-second resolution, so
the log took under a second; its volume counts, it has no rate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta

from redolab.core import fields
from redolab.redo.parsers import RedoInputError
from redolab.redo.schemas import RedoInterval

MAX_BYTES = fields.MAX_SIZE_BYTES
MAX_BYTES_PER_SECOND = fields.MAX_BYTES_PER_SECOND
MAX_NUMBER = fields.MAX_NUMBERED  # threads, instances, destinations
MAX_COUNTER = 2**63 - 1
EARLIEST = datetime(fields.FIRST_YEAR, 1, 1, tzinfo=UTC)
LATEST = datetime(fields.LAST_YEAR + 1, 1, 1, tzinfo=UTC)
MAX_SPAN = timedelta(seconds=fields.MAX_DURATION_SECONDS)
_ZERO = timedelta(0)


def bounded(intervals: Iterable[RedoInterval]) -> Iterator[RedoInterval]:
    """Pass the intervals on, raising at the first value outside its bounds. The common row is
    decided by one chained comparison (this runs once per row of million-row imports)."""
    for interval in intervals:
        start, end, size = interval.start, interval.end, interval.bytes
        if not (
            0 <= size <= MAX_BYTES
            and 0 <= interval.thread <= MAX_NUMBER
            and (start is None or EARLIEST <= start < LATEST)
            and (end is None or EARLIEST <= end < LATEST)
        ):
            raise RedoInputError(_why(interval))
        if start is not None and end is not None:
            span = end - start
            if span < _ZERO or span > MAX_SPAN or size > MAX_BYTES_PER_SECOND * span.total_seconds() > 0:
                raise RedoInputError(_why(interval))
        sequence, resetlogs, dest_id, inst_id = (
            interval.sequence,
            interval.resetlogs,
            interval.dest_id,
            interval.inst_id,
        )
        if not (
            (sequence is None or 0 <= sequence <= MAX_COUNTER)
            and (resetlogs is None or 0 <= resetlogs <= MAX_COUNTER)
            and (dest_id is None or 0 <= dest_id <= MAX_NUMBER)
            and (inst_id is None or 0 <= inst_id <= MAX_NUMBER)
        ) or (
            interval.seconds is not None
            or interval.writes is not None
            or interval.peak_bytes_per_second is not None
            or interval.percentile_bytes_per_second is not None
        ):
            problem = _other(interval)
            if problem:
                raise RedoInputError(f"line {interval.line}: {problem}")
        yield interval


def _why(interval: RedoInterval) -> str:
    line, size = interval.line, interval.bytes
    if not math.isfinite(size) or not 0 <= size <= MAX_BYTES:
        return f"line {line}: a size of {size:,.0f} bytes is outside 0 to 1 EiB (2^60 bytes), the bounds of redo"
    if not 0 <= interval.thread <= MAX_NUMBER:
        return (
            f"line {line}: thread {interval.thread:,} is outside 0 to {MAX_NUMBER:,}, the bounds of a RAC thread number"
        )
    for name, value in (("start", interval.start), ("end", interval.end)):
        if value is not None and not EARLIEST <= value < LATEST:
            return f"line {line}: the {name} time {value:%Y-%m-%d %H:%M:%S} is outside the years 1970 to 2100"
    span = interval.end - interval.start
    if span < _ZERO:
        return (
            f"line {line}: it ends ({interval.end:%Y-%m-%d %H:%M:%S}) before it starts "
            f"({interval.start:%Y-%m-%d %H:%M:%S}): are the two time columns swapped?"
        )
    if span > MAX_SPAN:
        return f"line {line}: it spans {span.days:,} days, over 10 years: are its times right?"
    rate = size / span.total_seconds()
    return (
        f"line {line}: {size:,.0f} bytes in {span.total_seconds():,.0f} s is {rate:.3g} bytes/s, over 1 TB/s "
        "(10^12 bytes/s), the bound of a redo rate: is the size column in the unit it says?"
    )


def _other(interval: RedoInterval) -> str | None:
    seconds = interval.seconds
    if seconds is not None and not 0 <= seconds <= MAX_SPAN.total_seconds():
        return f"a duration of {seconds:,.3g} s is outside 0 s to 10 years"
    if seconds and interval.start is None and interval.bytes > MAX_BYTES_PER_SECOND * seconds:
        return (
            f"{interval.bytes:,.0f} bytes in {seconds:,.3g} s is over 1 TB/s (10^12 bytes/s), the bound of redo rates"
        )
    for name, value, limit, shown in (
        ("sequence", interval.sequence, MAX_COUNTER, "2^63 - 1"),
        ("resetlogs", interval.resetlogs, MAX_COUNTER, "2^63 - 1"),
        ("destination (DEST_ID)", interval.dest_id, MAX_NUMBER, f"{MAX_NUMBER:,}"),
        ("instance (INST_ID)", interval.inst_id, MAX_NUMBER, f"{MAX_NUMBER:,}"),
    ):
        if value is not None and not 0 <= value <= limit:
            return f"{name} {value:,} is outside 0 to {shown}"
    writes = interval.writes
    if writes is not None and not 0 <= writes <= MAX_BYTES:
        return f"{writes:,.0f} redo writes is outside 0 to 2^60"
    rates = (("maximum", interval.peak_bytes_per_second), ("percentile", interval.percentile_bytes_per_second))
    for name, value in rates:
        if value is not None and not 0 <= value <= MAX_BYTES_PER_SECOND:
            return (
                f"a {name} rate of {value:,.3g} bytes/s is outside 0 to 1 TB/s (10^12 bytes/s), the bound of redo rates"
            )
    return None
