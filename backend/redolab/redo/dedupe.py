"""Never double-count, never drop a different measurement.

A row is dropped only when it is the same measurement listed again:
- a log listed once per archive destination, once per instance (GV$ views), or archived again
  (key: thread, sequence, resetlogs), with the same size;
- a period or an hour-of-day listed once per archive destination: the largest volume is kept
  (a destination that missed logs shows less, none shows more), and said so when they differ;
- a period or hour listed again with the same values.
Within one file (strict), the same key with another value is an error naming both lines and, where
an ignored column differs between them, that column: it is then what tells the rows apart.
Across imports (not strict) the first import's row wins, as a re-import of the same period.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from redolab.redo.mapping import RedoInterval
from redolab.redo.parsers import RedoInputError

DESTINATION = "listed once per archive destination"
DESTINATION_SMALLER = "listed once per archive destination (a destination with less redo: the largest kept)"
INSTANCE = "listed once per instance (GV$ view)"
REARCHIVED = "archived again (same thread, sequence and resetlogs)"
REPEATED = "the same period listed again"
REPEATED_HOUR = "the same hour of day listed again"

_PACK = 1 << 24  # (dest_id, inst_id) packed below, the line above it, for the million-log case


def unique(
    intervals: Iterable[RedoInterval],
    dropped: Counter,
    *,
    strict: bool = False,
    ignored_columns: list[str] | None = None,
) -> Iterator[RedoInterval]:
    """Yield each log or period once; count what was dropped, by reason, into `dropped`, and every
    row read under the key "" (the caller's rows-read count). Periods and hours are held until the
    end (they are few), so that the largest destination's volume is the one kept."""
    seen_logs: dict[int, int] = {}
    held: dict[tuple, RedoInterval] = {}
    read = 0
    for interval in intervals:
        read += 1
        if interval.kind == "log" and interval.sequence is not None:
            _log(interval, seen_logs, dropped, strict)
            if interval.line >= 0:
                yield interval
            continue
        if interval.kind == "period":
            key: tuple = (interval.thread, interval.start, interval.end)
        elif interval.kind == "profile":
            key = (interval.thread, "hour", interval.hour)
        else:
            yield interval
            continue
        first = held.get(key)
        if first is None:
            held[key] = interval
            continue
        held[key] = _collide(first, interval, dropped, strict, ignored_columns or [])
    yield from held.values()
    dropped[""] = read


def _log(interval: RedoInterval, seen: dict[int, int], dropped: Counter, strict: bool) -> None:
    """Marks a repeated log by setting its line to -1 (the caller does not yield it)."""
    key = hash((interval.thread, interval.sequence, interval.resetlogs))
    where = (interval.dest_id or 0) * 4096 + (interval.inst_id or 0)
    size = int(interval.bytes)
    packed = (size << 64) | (interval.line << 24) | where
    first = seen.get(key)
    if first is None:
        seen[key] = packed
        return
    first_where, first_line, first_size = first % _PACK, (first >> 24) % (1 << 40), first >> 64
    line = interval.line
    if first_where // 4096 != (interval.dest_id or 0):
        dropped[DESTINATION] += 1
    elif first_where % 4096 != (interval.inst_id or 0):
        dropped[INSTANCE] += 1
    elif first_size == size or not strict:
        dropped[REARCHIVED] += 1
    else:
        raise RedoInputError(
            f"lines {first_line} and {line} are the same log (thread {interval.thread}, sequence "
            f"{interval.sequence}) with two sizes, {first_size:,} and {size:,} bytes: a log has one size; "
            "export each log once (or with its DEST_ID when it is listed per destination)"
        )
    interval.line = -1


def _collide(first: RedoInterval, other: RedoInterval, dropped: Counter, strict: bool, ignored: list[str]):
    """Which of two rows with the same key to keep; raises in strict mode when they differ."""
    same_values = _values(first) == _values(other)
    if (first.dest_id or 0) != (other.dest_id or 0):
        if same_values:
            dropped[DESTINATION] += 1
            return first
        dropped[DESTINATION_SMALLER] += 1
        return max(first, other, key=lambda i: (i.bytes, i.peak_bytes_per_second or 0))
    if same_values and first.extra == other.extra:
        dropped[REPEATED_HOUR if first.kind == "profile" else REPEATED] += 1
        return first
    if not strict:
        dropped[REPEATED_HOUR if first.kind == "profile" else REPEATED] += 1
        return first
    raise RedoInputError(_conflict(first, other, ignored))


def _values(interval: RedoInterval) -> tuple:
    return (interval.bytes, interval.peak_bytes_per_second, interval.percentile_bytes_per_second)


def _when(interval: RedoInterval) -> str:
    if interval.kind == "profile":
        return f"hour of day {interval.hour:02d}"
    stamp: Callable[[datetime], str] = lambda t: t.strftime("%Y-%m-%d %H:%M")  # noqa: E731
    return f"the period {stamp(interval.start)} to {stamp(interval.end)}"


def _conflict(first: RedoInterval, other: RedoInterval, ignored: list[str]) -> str:
    what = f"thread {first.thread}" + (f", destination {first.dest_id}" if first.dest_id else "")
    head = f"lines {first.line} and {other.line} both give {what} and {_when(first)}"
    differing = [
        (name, a, b) for name, a, b in zip(ignored, first.extra or (), other.extra or (), strict=False) if a != b
    ]
    if differing:
        name, a, b = differing[0]
        return (
            f"{head}, but differ in {name} ('{a}' and '{b}'), a column that is not read: it tells these rows "
            f"apart, so reading the file without it would add or drop redo. Map {name} (as the hour, the period "
            "start or the thread), or export one row per period"
        )
    return (
        f"{head} with different values ({first.bytes:,.0f} and {other.bytes:,.0f} bytes): one period cannot have "
        "two volumes. Remove the repeated row, or export with the column that tells them apart"
    )
