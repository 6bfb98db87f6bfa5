"""Never double-count: a log listed once per archive destination, once per instance (GV$ views),
or re-archived later counts once (key: thread, sequence, resetlogs). Periods listed once per
destination count once too."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from redolab.redo.mapping import RedoInterval

DESTINATION = "listed once per archive destination"
INSTANCE = "listed once per instance (GV$ view)"
REARCHIVED = "archived again (same thread, sequence and resetlogs)"
REPEATED = "the same period listed again"
REPEATED_HOUR = "the same hour of day listed again"


def unique(intervals: Iterable[RedoInterval], dropped: Counter) -> Iterator[RedoInterval]:
    """Yield each log or period once; count what was dropped, by reason, into `dropped`, and every
    row read under the key "" (the caller's rows-read count)."""
    seen: dict[int, int] = {}  # hash of the key -> packed (dest_id, inst_id) of the first row kept
    read = 0
    for interval in intervals:
        read += 1
        if interval.kind == "log" and interval.sequence is not None:
            key = hash((interval.thread, interval.sequence, interval.resetlogs))
        elif interval.kind == "period":
            key = hash((interval.thread, interval.start, interval.end))
        elif interval.kind == "profile":
            key = hash((interval.thread, "hour", interval.hour))
        else:
            yield interval
            continue
        where = (interval.dest_id or 0) * 4096 + (interval.inst_id or 0)
        first = seen.get(key)
        if first is None:
            seen[key] = where
            yield interval
            continue
        if first // 4096 != (interval.dest_id or 0):
            dropped[DESTINATION] += 1
        elif first % 4096 != (interval.inst_id or 0):
            dropped[INSTANCE] += 1
        else:
            dropped[{"log": REARCHIVED, "profile": REPEATED_HOUR}.get(interval.kind, REPEATED)] += 1
    dropped[""] = read
