"""The columns of a MON_GET_TRANSACTION_LOG capture, by IBM's names or, under a DBA's aliases, by what
their values are, as the volume reader finds a date column of any name.

IBM documents MON_GET_TRANSACTION_LOG's columns (Db2 10.1 to 11.5: MEMBER, TOTAL_LOG_AVAILABLE,
TOTAL_LOG_USED, ..., LOG_READS, LOG_READ_TIME, LOG_WRITES, LOG_WRITE_TIME, NUM_LOG_WRITE_IO, ...); the
capture time is not one of them: the collector adds CURRENT TIMESTAMP under a name of its choosing.
- the capture time: a column named as one (SNAPSHOT_TIME, TS, ...), else the one column whose values
  are all Db2 timestamps;
- the member: MEMBER, else the one column of small whole numbers that never repeats within a capture
  and takes no more values than a capture has rows;
- LOG_WRITES (4 KiB pages): by its name, else the one column of whole numbers that grows from capture
  to capture of each member (a cumulative counter), preferring a name that says pages or writes;
- NUM_LOG_WRITE_IO and LOG_WRITE_TIME by their names (without them no flush size or write time).
Every column found by its values is named in a fact; the others are named as not read.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

from redolab.core.units import ascii_digits
from redolab.redo.parsers import RedoInputError, normalise
from redolab.redo.parsers.db2_common import db2_time

# IBM's documented columns (normalised) other than LOG_WRITES: a file with two of them is this table
DOCUMENTED = frozenset(
    {
        "TOTALLOGAVAILABLE",
        "TOTALLOGUSED",
        "SECLOGUSEDTOP",
        "TOTLOGUSEDTOP",
        "SECLOGSALLOCATED",
        "LOGREADS",
        "LOGREADTIME",
        "LOGWRITETIME",
        "NUMLOGWRITEIO",
        "NUMLOGREADIO",
        "NUMLOGPARTPAGEIO",
        "NUMLOGBUFFERFULL",
        "NUMLOGDATAFOUNDINBUFFER",
        "APPLIDHOLDINGOLDESTXACT",
        "LOGTOREDOFORRECOVERY",
        "LOGHELDBYDIRTYPAGES",
        "FIRSTACTIVELOG",
        "LASTACTIVELOG",
        "CURRENTACTIVELOG",
        "CURRENTARCHIVELOG",
        "CURCOMMITDISKLOGREADS",
        "CURCOMMITTOTALLOGREADS",
        "CURCOMMITLOGBUFFLOGREADS",
        "CURRENTLSN",
        "CURRENTLSO",
        "OLDESTTXLSN",
        "METHOD1NEXTLOGTOARCHIVE",
        "METHOD2NEXTLOGTOARCHIVE",
        "METHOD1FIRSTFAILURE",
        "METHOD2FIRSTFAILURE",
        "LOGEXTRACTIONDISKSPACEUSEDTOTAL",
        "LOGEXTRACTIONDISKSPACEUSEDTOTALTOP",
        "LOGEXTRACTIONPROCESSEDBYTES",
        "LOGEXTRACTIONWRITTENBYTES",
        "LOGEXTRACTIONROLLBACKREADS",
        "LOGEXTRACTIONCURCOMMITREADS",
    }
)
TIME_HEADINGS = (
    "SNAPSHOTTIME",
    "SNAPSHOTTIMESTAMP",
    "CAPTURETIME",
    "CAPTURETIMESTAMP",
    "TS",
    "TIMESTAMP",
    "CURRENTTIMESTAMP",
    "SAMPLETIME",
    "COLLECTED",
    "COLLECTIONTIME",
    "TIME",
    "1",
)
MEMBER_HEADINGS = ("MEMBER", "MEMBERID", "MEMBERNUMBER", "DBPARTITIONNUM")
MAX_MEMBER = 999  # Db2 member and partition numbers
SAMPLE_ROWS = 200  # rows looked at to find a column by its values (every row is read and checked later)


def is_mon_get_transaction_log(headers: list[str]) -> bool:
    """LOG_WRITES by name, or two of IBM's other documented columns (LOG_WRITES under an alias)."""
    names = {normalise(h) for h in headers}
    return "LOGWRITES" in names or len(names & DOCUMENTED) >= 2


@dataclass
class CounterColumns:
    time: int
    pages: int
    member: int | None = None
    flushes: int | None = None
    write_time: int | None = None
    found: list[str] = field(default_factory=list)  # how each column found by its values was recognised


def find_counter_columns(headers: list[str], rows: list[tuple[int, list[str]]]) -> CounterColumns:
    """The capture time, member, LOG_WRITES, NUM_LOG_WRITE_IO and LOG_WRITE_TIME columns; a column that
    cannot be told apart is refused naming the candidates."""
    names = [normalise(h) for h in headers]
    sample = rows[:SAMPLE_ROWS]
    found: list[str] = []
    time = _named(names, TIME_HEADINGS)
    if time is None:
        time = _time_by_values(headers, names, sample)
        found.append(f"{headers[time]} read as the capture time: its values are Db2 timestamps")
    member = _named(names, MEMBER_HEADINGS)
    if member is None:
        member = _member_by_values(headers, names, sample, time)
        if member is not None:
            found.append(f"{headers[member]} read as the member: small whole numbers, one per member in each capture")
    pages = _named(names, ("LOGWRITES",))
    if pages is None:
        pages = _pages_by_values(headers, names, rows, time, member)
        found.append(
            f"{headers[pages]} read as LOG_WRITES (4 KiB pages written): a counter that grows with every capture"
        )
    return CounterColumns(
        time, pages, member, _named(names, ("NUMLOGWRITEIO",)), _named(names, ("LOGWRITETIME",)), found
    )


def _named(names: list[str], wanted: tuple[str, ...]) -> int | None:
    return next((names.index(name) for name in wanted if name in names), None)


def _value(values: list[str], position: int) -> str:
    return values[position].strip() if position < len(values) else ""


def _time_by_values(headers: list[str], names: list[str], sample) -> int:
    timed = []
    for position, name in enumerate(names):
        texts = [_value(values, position) for _, values in sample]
        texts = [text for text in texts if text]
        if name in DOCUMENTED or not texts or texts[0].isdigit():
            continue
        try:
            for text in texts:
                db2_time(text, "")
        except RedoInputError:
            continue
        timed.append(position)
    if len(timed) == 1:
        return timed[0]
    if timed:
        raise RedoInputError(
            f"MON_GET_TRANSACTION_LOG rows with several time columns ({', '.join(headers[p] for p in timed)}): "
            "name the capture time SNAPSHOT_TIME (CURRENT TIMESTAMP AS SNAPSHOT_TIME)"
        )
    raise RedoInputError(
        f"MON_GET_TRANSACTION_LOG rows without a capture time (columns: {', '.join(headers)}; none holds Db2 "
        "timestamps): select CURRENT TIMESTAMP AS SNAPSHOT_TIME with MEMBER, LOG_WRITES and NUM_LOG_WRITE_IO at "
        "every capture"
    )


def _member_by_values(headers: list[str], names: list[str], sample, time: int) -> int | None:
    per_capture = Counter(_value(values, time) for _, values in sample)
    rows_per_capture = max(per_capture.values(), default=1)
    candidates = []
    for position, name in enumerate(names):
        if position == time or name in DOCUMENTED or name == "LOGWRITES":
            continue
        texts = [_value(values, position) for _, values in sample]
        if not texts or not all(ascii_digits(text) and int(text) <= MAX_MEMBER for text in texts):
            continue
        pairs = {(_value(values, time), _value(values, position)) for _, values in sample}
        distinct = len(set(texts))
        if len(pairs) == len(sample) and distinct <= rows_per_capture:
            candidates.append((distinct, position))
    if candidates:
        return min(candidates)[1]
    if rows_per_capture > 1:
        raise RedoInputError(
            f"MON_GET_TRANSACTION_LOG rows: {rows_per_capture} rows share one capture time but no column tells "
            f"their members apart (columns: {', '.join(headers)}); select MEMBER with the counters"
        )
    return None  # one row per capture: one member


def _pages_by_values(headers: list[str], names: list[str], rows, time: int, member: int | None) -> int:
    growing = []
    for position, name in enumerate(names):
        if position in (time, member) or name in DOCUMENTED or name in MEMBER_HEADINGS:
            continue
        if _grows(rows, position, time, member):
            growing.append(position)
    if len(growing) > 1:  # the DBA's alias may still say what it is
        said = [
            p
            for p in growing
            if ("PAGE" in names[p] or "WRITE" in names[p]) and "IO" not in names[p] and "TIME" not in names[p]
        ]
        growing = said if len(said) == 1 else growing
    if len(growing) == 1:
        return growing[0]
    what = (
        f"the columns {', '.join(headers[p] for p in growing)} all grow like counters"
        if growing
        else "no column grows from capture to capture like a counter"
    )
    raise RedoInputError(
        f"MON_GET_TRANSACTION_LOG rows without LOG_WRITES by name, and {what}: select LOG_WRITES under its own "
        "name (4 KiB log pages written, the rate's source)"
    )


def _grows(rows, position: int, time: int, member: int | None) -> bool:
    """Whole numbers that, per member in time order, go up at least once and down at most once in
    four steps (a restart resets every counter)."""
    series: dict[str, list[tuple[object, int]]] = {}
    for _, values in rows:
        text = _value(values, position)
        if not ascii_digits(text):
            return False
        try:
            at = db2_time(_value(values, time), "")
        except RedoInputError:
            return False
        series.setdefault(_value(values, member) if member is not None else "", []).append((at, int(text)))
    ups = downs = 0
    for points in series.values():
        points.sort(key=lambda point: point[0])
        for before, after in itertools.pairwise(points):
            ups += after[1] > before[1]
            downs += after[1] < before[1]
    return ups > 0 and downs * 4 <= ups + downs
