"""Map a table's columns to redo fields, whatever they are called, and turn rows into intervals.

Four kinds of data come out as the same RedoInterval: an archived log (thread, sequence, first
and next time or duration, size), a volume per period (hour or day), an AWR snapshot delta
('redo size' and 'redo writes'), or a sampled rate ('Redo Generated Per Sec', with its maximum).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from redolab.core.sources import ORACLE_NETWORK_NOTE
from redolab.core.units import ascii_digits, format_named
from redolab.redo.ingest.aliases import ALIASES, FIELDS
from redolab.redo.ingest.rates import profiles as _profiles
from redolab.redo.ingest.rates import snapshots as _snapshots
from redolab.redo.ingest.rates import stats as _stats
from redolab.redo.ingest.values import DECIMAL_CHOICES, POINT, DateColumn, NumberFormat, detect_numbers, parse_number
from redolab.redo.parsers import RedoInputError, Table, db2, normalise
from redolab.redo.schemas import Mapped, RedoInterval, with_extra

MIB = 1024 * 1024


_UNIT_TOKENS = {"GB": "gb", "GIB": "gb", "GBYTES": "gb", "MB": "mb", "MIB": "mb", "MBYTES": "mb", "BYTES": "bytes"}
_RATE_TOKENS = {"S", "SEC", "SECOND", "PER", "PS", "RATE", "AVG", "MAX", "MIN", "P95", "P99"}


def _size_by_unit(headers: list[str], taken: set[str]) -> tuple[str, str] | None:
    """(field, header) for a size column named by its unit (GB_GENERATED, REDO_SIZE_MB), not a rate."""
    for header in headers:
        tokens = set(re.findall(r"[A-Z0-9]+", header.upper()))
        units = [_UNIT_TOKENS[t] for t in tokens if t in _UNIT_TOKENS]
        if header not in taken and len(set(units)) == 1 and not tokens & _RATE_TOKENS:
            return units[0], header
    return None


def guess_mapping(headers: list[str]) -> dict[str, str]:
    """Target field -> header, by alias; the first header matching each field wins; a size column
    can also be named by its unit alone (GB_GENERATED)."""
    normalised = {normalise(h): h for h in reversed(headers)}
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    for target, names in ALIASES.items():
        for name in names:
            header = normalised.get(name)
            if header and header not in taken:
                mapping[target] = header
                taken.add(header)
                break
    if not any(k in mapping for k in ("bytes", "mb", "gb", "blocks", "value", "max_value")):
        found = _size_by_unit(headers, taken)
        if found:
            mapping[found[0]] = found[1]
    return mapping


def detect_kind(mapping: dict[str, str], headers: list[str] | None = None) -> str:
    if (
        "hour" in mapping
        and "first_time" not in mapping
        and any(k in mapping for k in ("value", "max_value", "percentile"))
    ):
        return "awr-profile"  # hour of day, no dates: DBA_HIST_SYSMETRIC_SUMMARY grouped by hour
    if "stat_name" in mapping and "value" in mapping:
        return "awr-stat"  # long form: one row per statistic or metric
    if "sequence" in mapping:
        return "archived-log"
    if "first_time" in mapping and any(k in mapping for k in ("bytes", "mb", "gb", "blocks")):
        return "awr-snapshot" if "snap_id" in mapping else "volume"
    columns = ", ".join(headers or mapping.values()) or "none"
    has_time = any(k in mapping for k in ("first_time", "next_time", "hour"))
    has_size = any(k in mapping for k in ("bytes", "mb", "gb", "blocks", "value", "max_value"))
    lacking = (
        " and ".join(
            part
            for part, missing in (("no time column", not has_time), ("no size or rate column", not has_size))
            if missing
        )
        or "no combination redolab knows"
    )
    raise RedoInputError(
        f"the columns do not look like redo history: a table with columns {columns}, {lacking}. What works: "
        "V$ARCHIVED_LOG rows (THREAD#, SEQUENCE#, FIRST_TIME, NEXT_TIME, BLOCKS, BLOCK_SIZE), a volume per "
        "period (a date or time column, optionally an hour column, and MB or BYTES), AWR deltas ('redo size' per "
        "snapshot) or 'Redo Generated Per Sec' rates; or map the columns by hand"
    )


class _Row:
    """Typed access to one row's mapped values, with errors naming line and column."""

    __slots__ = ("columns", "dates", "line", "numbers", "size_columns", "values")

    def __init__(self, columns, dates, size_columns, line, values, numbers: NumberFormat = POINT) -> None:
        self.columns, self.dates, self.size_columns, self.line, self.values = columns, dates, size_columns, line, values
        self.numbers = numbers

    def text(self, target: str) -> str | None:
        found = self.columns.get(target)
        if found is None:
            return None
        value = self.values[found[0]].strip()  # delimited values arrive unstripped
        return value or None

    def number(self, target: str) -> float | None:
        text = self.text(target)
        return (
            None
            if text is None
            else parse_number(text, line=self.line, column=self.columns[target][1], numbers=self.numbers)
        )

    def integer(self, target: str) -> int | None:
        number = self.number(target)
        return None if number is None else int(number)

    def date(self, target: str) -> datetime | None:
        text = self.text(target)
        return None if text is None else self.dates[target].parse(text, self.line)

    def size(self) -> float:
        """Bytes from whichever size column the file has (chosen once per file, not per row)."""
        kind, factor = self.size_columns
        if kind == "blocks":
            blocks, block_size = self.number("blocks"), self.number("block_size")
            value = None if blocks is None or block_size is None else blocks * block_size
        else:
            value = self.number(kind)
            value = None if value is None else value * factor
        if value is None:
            raise RedoInputError(f"line {self.line}, {self.columns[kind][1]}: no redo size on this row")
        return value


def _size_columns(mapping: dict[str, str]) -> tuple[str, float]:
    for kind, factor in (("bytes", 1.0), ("mb", float(MIB)), ("gb", float(MIB * 1024))):
        if kind in mapping:
            return kind, factor
    if "blocks" in mapping and "block_size" in mapping:
        return "blocks", 1.0
    raise RedoInputError("no size column: map BYTES, MB, GB, or BLOCKS and BLOCK_SIZE")


@dataclass
class MappedFile(Mapped):
    """A file's mapping and intervals, with how the file writes its numbers (for the preview)."""

    numbers: NumberFormat | None = None


def map_table(table: Table, mapping: dict[str, str] | None = None, *, decimal: str = "auto") -> Mapped:
    """The table's intervals; `decimal` is the user's choice of decimal character ('auto': the
    file's values tell, and a file that could be read either way is refused)."""
    if table.mapped is not None:  # a Db2 text format: its reader made the intervals
        return table.mapped
    if db2.is_mon_get_transaction_log(table.headers):  # cumulative counters: their own reading, any mapping
        return db2.mon_get_transaction_log(table)
    guessed = not mapping
    mapping = dict(mapping or guess_mapping(table.headers))
    found: list[str] = []
    if guessed and "first_time" not in mapping and "sequence" not in mapping:
        date_column = _date_column_by_content(table, mapping)
        if date_column is not None:
            mapping["first_time"] = date_column
            found.append(f"{date_column} read as the period start: its values are dates.")
    unknown = [column for column in mapping.values() if column not in table.headers]
    if unknown:
        raise RedoInputError(
            f"mapped {format_named('column', unknown)} {'is' if len(unknown) == 1 else 'are'} not in the file "
            f"(it has {', '.join(table.headers)})"
        )
    kind = detect_kind(mapping, table.headers)
    if guessed and kind == "archived-log":  # V$ARCHIVED_LOG's NAME is the log's file name, not a statistic
        mapping.pop("stat_name", None)
    numbers, shown = _numbers_of(table, mapping, decimal)
    if shown.source != "default":
        found.append(f"Numbers: {shown.describe()}.")
    mapped = _mapped(table, mapping, kind, found, numbers)
    return MappedFile(
        mapped.kind, mapped.mapping, mapped.intervals, mapped.warnings, mapped.ignored, mapped.facts, shown
    )


# fields whose values are whole numbers: a '1,234' there has a group separator, never a decimal one
_INTEGERS = frozenset(
    (
        "thread",
        "sequence",
        "resetlogs",
        "dest_id",
        "inst_id",
        "hour",
        "snap_id",
        "blocks",
        "block_size",
        "bytes",
        "writes",
    )
)
_NUMERIC = _INTEGERS | {"mb", "gb", "seconds", "value", "max_value", "percentile"}
NUMBER_SAMPLE_ROWS = 500


def _numbers_of(table: Table, mapping: dict[str, str], decimal: str) -> tuple[NumberFormat, NumberFormat]:
    """(how to read the table's numbers, what to say of the file's): from the numeric columns of its
    first rows, or the user's choice. An AWR Miner table holds values its reader already converted."""
    written = getattr(table, "numbers", None)
    if written is not None:
        return POINT, written
    head = list(itertools.islice(table.rows, NUMBER_SAMPLE_ROWS))
    table.rows = itertools.chain(head, table.rows)
    index = {header: i for i, header in enumerate(table.headers)}
    columns = [(index[c], c, t in _INTEGERS) for t, c in mapping.items() if t in _NUMERIC and c in index]
    samples = [
        (line, column, values[i], integer) for line, values in head for i, column, integer in columns if i < len(values)
    ]
    numbers = detect_numbers(samples, decimal)
    return numbers, numbers


def _mapped(table: Table, mapping: dict[str, str], kind: str, found: list[str], numbers: NumberFormat) -> Mapped:
    index = {h: i for i, h in enumerate(table.headers)}
    columns = {target: (index[column], column) for target, column in mapping.items()}
    dates = {t: DateColumn(mapping[t]) for t in ("first_time", "next_time") if t in mapping}
    if len(dates) == 2:  # one log's NEXT_TIME is the next log's FIRST_TIME: share the recent values
        dates["next_time"]._recent = dates["first_time"]._recent
    size_columns = _size_columns(mapping) if kind not in ("awr-stat", "awr-profile") else ("value", 1.0)
    ignored = [h for h in table.headers if h not in mapping.values()]
    warnings: list[str] = []
    if kind == "archived-log" and "next_time" not in mapping and "seconds" not in mapping:
        raise RedoInputError(
            "these logs have no NEXT_TIME and no duration (SEC) column: a rate needs both a size and a "
            "time span; export NEXT_TIME (or (NEXT_TIME-FIRST_TIME)*86400 SEC) as well"
        )
    if kind == "archived-log" and "first_time" not in mapping:
        warnings.append(
            "No FIRST_TIME column: each log's rate is known, but not when it happened, so redo of RAC "
            "threads running at the same time cannot be summed; the requirement is the highest log's rate "
            f"+ headroom, as {ORACLE_NETWORK_NOTE} computes it."
        )

    def make_row(line, values):
        return _Row(columns, dates, size_columns, line, values, numbers)

    if kind == "archived-log":  # the million-row case: raw rows, a helper object only when needed
        # float() reads '1.234' as one and a quarter: with a decimal comma every row takes the careful path
        fast = _fast_log_reader(columns, dates, size_columns) if numbers.decimal == "." else _never
        return Mapped(kind, mapping, _logs(table.rows, fast, make_row), warnings, ignored, found)
    builders = {"volume": _volumes, "awr-snapshot": _snapshots, "awr-stat": _stats, "awr-profile": _profiles}
    positions = [index[h] for h in ignored]
    rows = (make_row(line, values) for line, values in table.rows)
    unit = {
        "mb": "MiB (an Oracle MB is 1,048,576 bytes)",
        "gb": "GiB (an Oracle GB is 1,073,741,824 bytes)",
        "bytes": "bytes",
        "blocks": "blocks x block size",
    }.get(size_columns[0])
    if unit and kind in ("volume", "awr-snapshot"):
        found.append(f"Sizes from {mapping.get(size_columns[0], mapping.get('blocks'))} in {unit}.")
    intervals = with_extra(builders[kind](rows, mapping, warnings, found), positions)
    return Mapped(kind, mapping, intervals, warnings, ignored, found)


def _never(line: int, values: list[str]) -> None:
    return None


def _date_column_by_content(table: Table, mapping: dict[str, str]) -> str | None:
    """The one unmapped column whose first value is a date, whatever it is called (the first row
    is put back in front of the table's rows)."""
    first = next(table.rows, None)
    if first is None:
        return None
    table.rows = itertools.chain([first], table.rows)
    taken = set(mapping.values())
    dated = []
    for position, header in enumerate(table.headers):
        value = first[1][position].strip() if position < len(first[1]) else ""
        if header in taken or not value or value.replace(".", "").replace(",", "").isdigit():
            continue
        try:
            DateColumn(header).parse(value, first[0])
        except RedoInputError:
            continue
        dated.append(header)
    return dated[0] if len(dated) == 1 else None


def _logs(raw_rows, fast, make_row) -> Iterator[RedoInterval]:
    for line, values in raw_rows:
        interval = fast(line, values)
        if interval is None:  # anything unusual: the careful path, whose errors name line and column
            row = make_row(line, values)
            interval = RedoInterval(
                line=row.line,
                thread=row.integer("thread") or 1,
                start=row.date("first_time"),
                end=row.date("next_time"),
                seconds=row.number("seconds"),
                bytes=row.size(),
                kind="log",
                sequence=row.integer("sequence"),
                resetlogs=row.integer("resetlogs"),
                dest_id=row.integer("dest_id"),
                inst_id=row.integer("inst_id"),
            )
        yield interval


def _fast_log_reader(columns, dates, size_columns):
    """A reader for the common row (plain integers, known date formats) with every column position
    resolved once per file; it returns None when a row needs the careful path. It runs once per
    row of million-row imports, so it avoids per-field lookups."""

    def position(target):
        found = columns.get(target)
        return None if found is None else found[0]

    i_thread, i_seq, i_reset, i_dest, i_inst = map(position, ("thread", "sequence", "resetlogs", "dest_id", "inst_id"))
    i_first, i_next, i_seconds = map(position, ("first_time", "next_time", "seconds"))
    kind, factor = size_columns
    i_size = position("blocks" if kind == "blocks" else kind)
    i_block_size = position("block_size") if kind == "blocks" else None
    first_dates, next_dates = dates.get("first_time"), dates.get("next_time")

    def read(line: int, values: list[str]) -> RedoInterval | None:
        try:
            size = float(values[i_size]) * (float(values[i_block_size]) if i_block_size is not None else factor)
            start = first_dates.parse(values[i_first], line) if i_first is not None and values[i_first] else None
            end = next_dates.parse(values[i_next], line) if i_next is not None and values[i_next] else None
            # (a padded blank raises inside parse() and so takes the careful path, which reads it as empty)
            seconds = float(values[i_seconds]) if i_seconds is not None and values[i_seconds] else None
            # written out, not looped: this line runs a million times in a large import
            thread = int(values[i_thread]) if i_thread is not None and values[i_thread] else None
            sequence = int(values[i_seq]) if i_seq is not None and values[i_seq] else None
            resetlogs = int(values[i_reset]) if i_reset is not None and values[i_reset] else None
            dest_id = int(values[i_dest]) if i_dest is not None and values[i_dest] else None
            inst_id = int(values[i_inst]) if i_inst is not None and values[i_inst] else None
        except (ValueError, KeyError, RedoInputError):
            return None
        if size < 0 or size != size or (seconds is not None and seconds < 0):
            return None
        return RedoInterval(line, thread or 1, start, end, seconds, size, "log", sequence, resetlogs, dest_id, inst_id)

    return read


def _volumes(rows, mapping, warnings, facts) -> Iterator[tuple[RedoInterval, list[str]]]:
    """Volume per period. The date and the hour may be in separate columns; without an end column
    the period is decided from the data, never from a column's name: an hour column means hours;
    times of day mean the usual spacing of the starts; dates alone (all at midnight) mean days."""
    read = []
    for row in rows:
        start = row.date("first_time")
        if start is None:
            raise RedoInputError(f"line {row.line}, {mapping['first_time']}: no date on this row")
        hour = row.number("hour")
        if hour is not None:
            if hour != int(hour) or not 0 <= hour <= 23:
                raise RedoInputError(
                    f"line {row.line}, {mapping['hour']}: '{row.text('hour')}' is not an hour of the day (0 to 23)"
                )
            start = start.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(hours=int(hour))
        end = row.date("next_time")
        if end is not None and end <= start:
            raise RedoInputError(
                f"line {row.line}, {mapping['next_time']}: the period ends ({end:%Y-%m-%d %H:%M}) "
                f"before it starts ({start:%Y-%m-%d %H:%M})"
            )
        read.append((row, start, end))
    period, basis = _period(read, mapping)
    for row, start, end in read:
        interval = RedoInterval(
            line=row.line,
            thread=row.integer("thread") or 1,
            start=start,
            end=end or start + period,
            seconds=None,
            bytes=row.size(),
            kind="period",
            dest_id=row.integer("dest_id"),
        )
        yield interval, row.values
    starts = {start for _, start, _ in read}
    if "next_time" in mapping:
        facts.append(f"Periods from {mapping['first_time']} to {mapping['next_time']}, {len(starts):,} of them.")
    else:
        facts.append(f"{_duration(period)} periods, {len(starts):,} of them ({basis}).")
    warnings.append(
        "Only volumes per period are known: peaks shorter than the period are averaged away; "
        "per-log data (V$ARCHIVED_LOG) shows them."
    )


def _period(read, mapping) -> tuple[timedelta, str]:
    if "hour" in mapping:
        return timedelta(hours=1), f"the hour in {mapping['hour']}"
    starts = sorted({start for _, start, _ in read})
    if all(s.hour == 0 and s.minute == 0 and s.second == 0 for s in starts):
        return timedelta(days=1), f"{mapping['first_time']} holds dates without a time of day"
    gaps = Counter(b - a for a, b in itertools.pairwise(starts) if b > a)
    common = [gap for gap, _ in gaps.most_common() if gap <= timedelta(days=1)]
    if not common:
        return timedelta(hours=1), f"one time of day in {mapping['first_time']}: taken as an hour"
    return common[0], f"the usual spacing of the times in {mapping['first_time']}"


def _duration(period: timedelta) -> str:
    seconds = period.total_seconds()
    if seconds % 86400 == 0:
        return f"{seconds / 86400:.0f} d"
    if seconds % 3600 == 0:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 60:g} min"


LOG_FILE_PAGES = "log_file_pages"  # Db2's LOGFILSIZ, for an archived log listing without sizes
MAX_LOG_FILE_PAGES = 67_108_864  # Db2 11.5's largest LOGFILSIZ (256 GiB files)


DECIMAL = "decimal"  # the user's choice of decimal character: an option, not a column


def clean_mapping(mapping: dict | None) -> dict[str, str] | None:
    """The columns chosen for each field, and the options that travel with them: LOGFILSIZ and the
    decimal character ('point' or 'comma'; 'auto' or none: the file's values tell)."""
    if not mapping:
        return None
    cleaned = {field: column for field, column in mapping.items() if field in FIELDS and column}
    decimal = str(mapping.get(DECIMAL) or "auto").strip().lower()
    if decimal not in DECIMAL_CHOICES:
        raise RedoInputError(
            f"decimal '{decimal[:20]}' is not a decimal separator: use auto (the file tells), point (1234.5, as "
            "NLS_NUMERIC_CHARACTERS '.,') or comma (1234,5, as NLS_NUMERIC_CHARACTERS ',.')"
        )
    if decimal != "auto":
        cleaned[DECIMAL] = decimal
    pages = str(mapping.get(LOG_FILE_PAGES) or "").strip().replace(",", "")
    if pages:
        if not ascii_digits(pages) or not 1 <= int(pages) <= MAX_LOG_FILE_PAGES:
            raise RedoInputError(
                f"LOGFILSIZ '{pages}' is not a log file size in 4 KiB pages (a whole number from 1 to "
                f"{MAX_LOG_FILE_PAGES:,}, as `db2 get db cfg` shows it)"
            )
        cleaned[LOG_FILE_PAGES] = pages
    return cleaned or None


def options_of(mapping: dict[str, str] | None) -> dict[str, str] | None:
    """The options of a cleaned mapping without its columns (the decimal character, LOGFILSIZ): what
    an archive's members share, each mapping its own columns."""
    options = {key: value for key, value in (mapping or {}).items() if key in (DECIMAL, LOG_FILE_PAGES)}
    return options or None
