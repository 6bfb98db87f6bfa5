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

from redolab.redo.parsers import RedoInputError
from redolab.redo.schemas import RedoInterval

DESTINATION = "listed once per archive destination"
DESTINATION_SMALLER = "listed once per archive destination (a destination with less redo: the largest kept)"
INSTANCE = "listed once per instance (GV$ view)"
REARCHIVED = "archived again (same thread, sequence and resetlogs)"
REPEATED = "the same period listed again"
REPEATED_HOUR = "the same hour of day listed again"


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
    per_destination: dict[tuple, RedoInterval] = {}
    read = 0
    for interval in intervals:
        read += 1
        if interval.kind == "log" and interval.sequence is not None:
            key = hash((interval.thread, interval.sequence, interval.resetlogs))
            if key not in seen_logs:  # the million-log case: most logs are new, decided here
                # one int per log (size, line, destination and instance packed): a million logs fit in ~40 MiB
                seen_logs[key] = (
                    (int(interval.bytes) << 64)
                    | (interval.line << 24)
                    | ((interval.dest_id or 0) << 12 | (interval.inst_id or 0))
                )
                yield interval
            else:
                _repeated_log(interval, seen_logs[key], dropped, strict)
            continue
        if interval.kind == "period":
            key: tuple = (interval.thread, interval.start, interval.end)
        elif interval.kind == "profile":
            key = (interval.thread, "hour", interval.hour)
        else:
            yield interval
            continue
        # Rows of one destination are checked among themselves first: two rows of one destination
        # with the same key are a repeat or a conflict, never "the other destination's copy".
        destination_key = (*key, interval.dest_id or 0)
        prior = per_destination.get(destination_key)
        if prior is not None:
            _same_destination(prior, interval, dropped, strict, ignored_columns or [])
            continue
        per_destination[destination_key] = interval
        first = held.get(key)
        held[key] = interval if first is None else _other_destination(first, interval, dropped)
    yield from held.values()
    dropped[""] = read


def _repeated_log(interval: RedoInterval, first: int, dropped: Counter, strict: bool) -> None:
    """Counts a log seen before (`first` packs its size, line, destination and instance), or raises
    in strict mode when it is the same log with another size."""
    first_size, first_line = first >> 64, (first >> 24) & ((1 << 40) - 1)
    first_dest, first_inst = (first >> 12) & 0xFFF, first & 0xFFF
    size = int(interval.bytes)
    if first_dest != (interval.dest_id or 0) & 0xFFF:
        dropped[DESTINATION] += 1
    elif first_inst != (interval.inst_id or 0) & 0xFFF:
        dropped[INSTANCE] += 1
    elif first_size == size or not strict:
        dropped[REARCHIVED] += 1
    else:
        raise RedoInputError(
            f"lines {first_line} and {interval.line} are the same log (thread {interval.thread}, sequence "
            f"{interval.sequence}) with two sizes, {first_size:,} and {size:,} bytes: a log has one size; "
            "export each log once (or with its DEST_ID when it is listed per destination)"
        )


def _other_destination(first: RedoInterval, other: RedoInterval, dropped: Counter) -> RedoInterval:
    """The same period from another archive destination: the largest volume is the redo generated."""
    if _values(first) == _values(other):
        dropped[DESTINATION] += 1
        return first
    dropped[DESTINATION_SMALLER] += 1
    return max(first, other, key=lambda i: (i.bytes, i.peak_bytes_per_second or 0))


def _same_destination(first: RedoInterval, other: RedoInterval, dropped: Counter, strict: bool, ignored: list[str]):
    """The same key twice from one destination: a repeat when nothing differs; in strict mode
    (one file) an error when anything does."""
    if (_values(first) == _values(other) and first.extra == other.extra) or not strict:
        dropped[REPEATED_HOUR if first.kind == "profile" else REPEATED] += 1
        return
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
