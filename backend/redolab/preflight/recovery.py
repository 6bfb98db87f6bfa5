"""SQL*Plus output of SELECT start_time, type, item, units, sofar, total, timestamp FROM v$recovery_progress
on a physical standby: the apply rates, the redo applied and the apply lag of managed recovery.

Read in SQL*Plus's default fixed-width layout (a heading, a dashed underline, the date in any of the
NLS_DATE_FORMATs the redo readers know) and in SET MARKUP CSV ON (comma or, with a decimal comma, semicolon
between fields); numbers with a decimal point or comma (NLS_NUMERIC_CHARACTERS '.,' or ',.'), decided from
the file as the redo import decides it. Columns are found by their values (the ITEM and UNITS texts), so
an aliased heading reads the same; SOFAR is the column headed SOFAR, else the first number after UNITS.

Units (Oracle Database Reference, V$RECOVERY_PROGRESS, 19c to 26ai): the rates are in "KB/sec", "Redo
Applied" in "Megabytes", the lag in "Seconds". The Reference does not define KB here; Oracle writes its
sizes in binary units (the Reference's "Megabytes" of redo are the 1,048,576-byte MB of V$LOG.BYTES / 1024 /
1024, and DGMGRL prints the same average as "KByte/s"), so KB/sec is read as 1,024 bytes per second and a
megabyte as 1,048,576 bytes. "Average Apply Rate" is an average over the whole recovery session (Active Time
or Elapsed Time), not a current rate; "Active Apply Rate" is the rate while applying; both are 0 under
Multi-Instance Redo Apply except on the coordinator (26ai Reference note).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import datetime

from redolab.preflight.errors import EvidenceError
from redolab.preflight.text import split_lines
from redolab.redo.ingest.values import DateColumn, NumberFormat, detect_numbers, parse_number
from redolab.redo.parsers import FOOTER, NOISE, RedoInputError, normalise
from redolab.redo.parsers.sqlplus import read_sqlplus, underline_at

KIB, MIB = 1024, 1024 * 1024
MAX_BYTES_PER_SECOND = 1e12  # 1 TB/s: no redo apply is faster
MAX_BYTES = 2.0**60
MAX_SECONDS = 10 * 365 * 86400
# item -> (the unit it must carry, bytes or seconds per unit, the field it fills)
_WANTED = {
    "active apply rate": ("kb/sec", KIB, "active_apply_bytes_per_second"),
    "average apply rate": ("kb/sec", KIB, "average_apply_bytes_per_second"),
    "maximum apply rate": ("kb/sec", KIB, "maximum_apply_bytes_per_second"),
    "redo applied": ("megabytes", MIB, "redo_applied_bytes"),
    "standby apply lag": ("seconds", 1, "apply_lag_seconds"),
}
_ITEMS = {*_WANTED, "log files", "last applied redo", "active time", "elapsed time", "apply time per log",
          "checkpoint time per log", "recovery id", "redo blocks"}  # fmt: skip
_UNITS = {"kb/sec", "megabytes", "seconds", "scn+time", "files", "blocks", "redo blocks"}
EXPECTED_ROWS = (
    "SELECT start_time, type, item, units, sofar, total, timestamp FROM v$recovery_progress, as SQL*Plus "
    "prints it (SET LINESIZE 200 or more, so that each row is one line) or with SET MARKUP CSV ON"
)
_LINE_PREFIX = re.compile(r"^line \d+, ")


@dataclass(frozen=True)
class Figure:
    """One value read from the output, in the unit its field names, and its 1-based line."""

    value: float
    line: int


@dataclass(frozen=True)
class RecoveryProgress:
    """Managed recovery's figures, each None when its row is absent. Rates are bytes per second
    (KB/sec x 1,024): `average_apply_bytes_per_second` is the session's average, `active_...` the rate while
    applying, `maximum_...` the session's peak; `redo_applied_bytes` the session's total (Megabytes x
    1,048,576); `apply_lag_seconds` the standby's apply lag. `layout`: "sqlplus" or "csv"; `numbers`: how
    the numbers were written (decimal point or comma)."""

    active_apply_bytes_per_second: Figure | None
    average_apply_bytes_per_second: Figure | None
    maximum_apply_bytes_per_second: Figure | None
    redo_applied_bytes: Figure | None
    apply_lag_seconds: Figure | None
    layout: str
    numbers: str


def parse_recovery_progress(text: str, *, source: str) -> RecoveryProgress:
    """The figures of one pasted V$RECOVERY_PROGRESS query. Raises EvidenceError, naming `source` and the
    line, for anything unreadable: no such rows, a unit other than the view's, a negative or absurd value."""
    lines = split_lines(text, source=source)
    layout, headers, rows = _table(lines, source)
    columns = _columns(headers, rows, source)
    chosen = _latest(rows, columns)
    numbers = _numbers(chosen, columns, source)
    figures = {name: None for _, _, name in _WANTED.values()}
    for item, (number, values) in chosen.items():
        unit, scale, name = _WANTED[item]
        figures[name] = _figure(values, columns, unit, scale, name, number, numbers, source)
    return RecoveryProgress(**figures, layout=layout, numbers=numbers.describe())


def _table(lines: list[str], source: str) -> tuple[str, list[str], list[tuple[int, list[str]]]]:
    """(layout, headings, numbered rows): the CSV heading is the first line holding ITEM and SOFAR (or UNITS)
    between delimiters; else the SQL*Plus heading above the first dashed underline."""
    for index, line in enumerate(lines[:200]):
        if NOISE.match(line):
            continue  # the echoed query: "SQL> select start_time, type, item, units, ..."
        delimiter = next((d for d in ",;" if line.count(d) >= 4), None)
        if delimiter and {"ITEM", "UNITS"} <= {normalise(f) for f in _split(line, delimiter)}:
            rows = [
                (number + 1, _split(row, delimiter))
                for number, row in enumerate(lines[index + 1 :], start=index + 1)
                if row.strip() and not FOOTER.match(row) and not NOISE.match(row)
            ]
            return "csv", _split(line, delimiter), rows
    if underline_at(lines[:200]) is None:
        raise EvidenceError(source, 1, f"{EXPECTED_ROWS}: no heading with a dashed underline, no CSV heading")
    try:
        table = read_sqlplus(lines)
        return "sqlplus", table.headers, list(table.rows)
    except RedoInputError as error:
        raise EvidenceError(source, _line_of(str(error)), f"{EXPECTED_ROWS} ({error})") from None


def _split(line: str, delimiter: str) -> list[str]:
    try:
        return [field.strip() for field in next(csv.reader([line], delimiter=delimiter))]
    except (csv.Error, StopIteration):
        return []


def _line_of(message: str) -> int:
    match = re.match(r"^line (\d+)", message)
    return int(match[1]) if match else 1


def _column_where(rows: list[tuple[int, list[str]]], known: set[str]) -> int | None:
    for _, values in rows:
        for index, value in enumerate(values):
            if value.strip().lower() in known:
                return index
    return None


def _columns(headers: list[str], rows: list[tuple[int, list[str]]], source: str) -> dict[str, int | None]:
    """Where ITEM, UNITS, SOFAR, TYPE and START_TIME are, by value (ITEM, UNITS) or heading."""
    item, units = _column_where(rows, _ITEMS), _column_where(rows, _UNITS)
    if item is None or units is None:
        raise EvidenceError(source, rows[0][0] if rows else 1, f"{EXPECTED_ROWS}: no ITEM and UNITS values were found")
    names = [normalise(h) for h in headers]
    sofar = names.index("SOFAR") if "SOFAR" in names else units + 1
    kind = next((i for i, n in enumerate(names) if n == "TYPE"), None)
    start = next((i for i, n in enumerate(names) if n.startswith("STARTTIM")), None)
    return {"item": item, "units": units, "sofar": sofar, "type": kind, "start": start}


def _cell(values: list[str], index: int | None) -> str:
    return values[index] if index is not None and index < len(values) else ""


def _latest(rows: list[tuple[int, list[str]]], columns: dict[str, int | None]) -> dict[str, tuple[int, list[str]]]:
    """Each wanted item's row of media recovery; of an item listed for several recovery sessions, the one
    that started last (by START_TIME when it reads as a date, else the later line)."""
    dates, chosen, keys = DateColumn("START_TIME"), {}, {}
    for number, values in rows:
        item = _cell(values, columns["item"]).lower()
        kind = _cell(values, columns["type"]).lower()
        if item not in _WANTED or (kind and "media recovery" not in kind):
            continue
        try:
            started = dates.parse(_cell(values, columns["start"]), number).replace(tzinfo=None)
        except RedoInputError:
            started = datetime.min
        key = (started, number)
        if item not in keys or key > keys[item]:
            keys[item], chosen[item] = key, (number, values)
    return chosen


def _numbers(chosen: dict[str, tuple[int, list[str]]], columns: dict[str, int | None], source: str) -> NumberFormat:
    """The separators the SOFAR values are written with (NLS_NUMERIC_CHARACTERS), as the redo import reads them."""
    if not chosen:
        wanted = ", ".join(f"'{item.title()}'" for item in _WANTED)
        raise EvidenceError(source, 1, f"{EXPECTED_ROWS}: at least one MEDIA RECOVERY row of {wanted}")
    samples = [(number, "SOFAR", _cell(values, columns["sofar"]), False) for number, values in chosen.values()]
    try:
        return detect_numbers(samples)
    except RedoInputError as error:
        raise EvidenceError(source, _line_of(str(error)), f"numbers of one kind ({error})") from None


def _figure(
    values: list[str],
    columns: dict[str, int | None],
    unit: str,
    scale: int,
    name: str,
    number: int,
    numbers: NumberFormat,
    source: str,
) -> Figure | None:
    """The row's SOFAR in the field's unit, checked: the view's unit, non-negative, within physics."""
    written_unit, text = _cell(values, columns["units"]), _cell(values, columns["sofar"])
    if written_unit.lower() != unit:
        raise EvidenceError(source, number, f"the unit {unit} in UNITS, not '{written_unit[:40]}'")
    if not text:
        return None
    try:
        value = parse_number(text, line=number, column="SOFAR", numbers=numbers) * scale
    except RedoInputError as error:
        raise EvidenceError(source, number, f"a non-negative number ({_LINE_PREFIX.sub('', str(error))})") from None
    limit, what = {
        "redo_applied_bytes": (MAX_BYTES, "at most 2^60 bytes of redo applied"),
        "apply_lag_seconds": (MAX_SECONDS, "an apply lag of at most ten years"),
    }.get(name, (MAX_BYTES_PER_SECOND, "an apply rate of at most 1 TB/s"))
    if not value <= limit:
        raise EvidenceError(source, number, f"{what}, not {text[:40]} {written_unit[:20]}")
    return Figure(value, number)
