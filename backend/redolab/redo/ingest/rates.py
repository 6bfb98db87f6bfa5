"""Rows that carry a rate or a snapshot's delta rather than a log: AWR snapshot deltas ('redo size',
'redo writes'), sampled rates ('Redo Generated Per Sec'), and hour-of-day profiles of that rate
(average, maximum or only a percentile). Each builder takes typed rows (redo.ingest.mapping) and
yields (interval, the row's values)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from redolab.core.units import format_named
from redolab.redo.parsers import RedoInputError, normalise
from redolab.redo.schemas import RedoInterval


def snapshots(rows, mapping, warnings, facts) -> Iterator[tuple[RedoInterval, list[str]]]:
    for row in rows:
        interval = RedoInterval(
            line=row.line,
            thread=row.integer("thread") or 1,
            start=row.date("first_time"),
            end=row.date("next_time"),
            seconds=row.number("seconds"),
            bytes=row.size(),
            kind="snapshot",
            writes=row.number("writes"),
        )
        yield interval, row.values


_REDO_SIZE = "REDOSIZE"
_REDO_WRITES = "REDOWRITES"
_REDO_PER_SEC = ("REDOGENERATEDPERSEC",)


def stats(rows, mapping, warnings, facts) -> Iterator[tuple[RedoInterval, list[str]]]:
    """Long form: 'redo size' / 'redo writes' deltas per snapshot and instance (DBA_HIST_SYSSTAT),
    or 'Redo Generated Per Sec' samples (DBA_HIST_SYSMETRIC_HISTORY/SUMMARY)."""
    pending: dict[tuple, dict] = {}
    for row in rows:
        name = normalise(row.text("stat_name") or "")
        if name not in (_REDO_SIZE, _REDO_WRITES) and name not in _REDO_PER_SEC:
            continue
        thread = row.integer("thread") or 1
        start, end = row.date("first_time"), row.date("next_time")
        if name in _REDO_PER_SEC:
            average = row.number("value") or 0.0
            duration = (end - start).total_seconds() if start and end else None
            interval = RedoInterval(
                line=row.line,
                thread=thread,
                start=start,
                end=end,
                seconds=duration,
                bytes=average * (duration or 0),
                kind="rate",
                peak_bytes_per_second=row.number("max_value"),
            )
            yield interval, row.values
            continue
        key = (thread, row.text("snap_id"), start, end)
        entry = pending.setdefault(key, {"line": row.line, "values": row.values})
        entry["bytes" if name == _REDO_SIZE else "writes"] = row.number("value")
    for (thread, _snap, start, end), entry in pending.items():
        if entry.get("bytes") is None:
            continue
        interval = RedoInterval(
            line=entry["line"],
            thread=thread,
            start=start,
            end=end,
            seconds=None,
            bytes=entry["bytes"],
            kind="snapshot",
            writes=entry.get("writes"),
        )
        yield interval, entry["values"]


def profiles(rows, mapping, warnings, facts) -> Iterator[tuple[RedoInterval, list[str]]]:
    """Hour-of-day profiles: 'Redo Generated Per Sec' (bytes per second) of DBA_HIST_SYSMETRIC_SUMMARY
    grouped by hour and instance, with average, maximum and percentile columns and no dates."""
    hours: set[tuple[int, int]] = set()
    for row in rows:
        if "stat_name" in mapping and normalise(row.text("stat_name") or "") not in _REDO_PER_SEC:
            continue
        hour = row.integer("hour")
        if hour is None or hour != row.number("hour") or not 0 <= hour <= 23:
            raise RedoInputError(
                f"line {row.line}, {mapping['hour']}: '{row.text('hour') or ''}' is not an hour of the day (0 to 23)"
            )
        average, maximum, percentile = row.number("value"), row.number("max_value"), row.number("percentile")
        if average is None and maximum is None and percentile is None:
            raise RedoInputError(f"line {row.line}: no average, maximum or percentile redo rate on this row")
        if average is None and maximum is None:
            average = percentile  # a percentile-only profile: its percentile is the hour's rate, named as such
        thread = row.integer("thread") or 1
        hours.add((thread, hour))
        interval = RedoInterval(
            line=row.line,
            thread=thread,
            start=None,
            end=None,
            seconds=3600.0 if average is not None else None,
            bytes=(average or 0.0) * 3600,
            kind="profile",
            peak_bytes_per_second=maximum,
            hour=hour,
            percentile_bytes_per_second=percentile,
        )
        yield interval, row.values
    statistics = ", ".join(
        f"{name} from {mapping[key]}"
        for key, name in (("value", "average"), ("max_value", "maximum"), ("percentile", "percentile"))
        if key in mapping
    )
    threads = sorted({thread for thread, _ in hours})
    facts.append(f"Hour-of-day profile: {len(hours):,} hours for {format_named('instance', threads)}; {statistics}.")
    if "value" in mapping or "max_value" in mapping:
        warnings.append(
            "Only an hour-of-day profile is known (no dates): the peaks are the metric's maxima, but there is "
            "no time series, so the ASYNC lag replay needs a V$ARCHIVED_LOG export."
        )
        return
    which = _percentile_name(mapping["percentile"])
    facts.append(
        f"Hour-of-day {which} profile: {mapping['percentile']} is the {which} of 'Redo Generated Per Sec' (bytes/s) "
        f"in each hour of the day; the file has no average and no maximum, so every rate from it is that {which}."
    )
    warnings.append(
        f"Only the hour-of-day {which} of the redo rate is known (a percentile pivot, no dates): the rates from "
        f"this file are {which} values per hour, not peaks; the busiest samples of each hour lie above them. "
        "For peaks, import the awrhistsysmetrichist file (MAX_VALUE) or a V$ARCHIVED_LOG export."
    )


def _percentile_name(column: str) -> str:
    """'p95' for REDO_GEN_PER_SEC_PERC95, P95, PCT95...; 'percentile' when the name holds no number."""
    digits = re.search(r"(\d{2})$", normalise(column))
    return f"p{digits.group(1)}" if digits else "percentile"
