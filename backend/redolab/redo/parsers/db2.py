"""Db2 log history: what a Db2 team has instead of V$ARCHIVED_LOG.

- `MON_GET_TRANSACTION_LOG` snapshots (CLP output or CSV, one row per member per capture, with a
  capture time column): LOG_WRITES (4 KiB log pages written), NUM_LOG_WRITE_IO (flushes) and
  LOG_WRITE_TIME (ms) are cumulative since activation; rates come from the deltas between captures
  of one member. A counter that goes down is a restart (reset): that interval is left out and named.
- `db2 get snapshot for database` text, captured repeatedly into one file: the same counters as
  "Log pages written", "Number write log IOs" and "Log write time (sec.ns)", one block per capture,
  timed by its "Snapshot timestamp".
- a listing of archived log files (`ls -l --time-style=full-iso`, `ls -lR`, `find -printf`): each
  S0000123.LOG's modification time is when it was closed, so a file's rate is its size over the time
  since the previous file of the same log stream closed. pureScale streams (LOGSTREAM0001) are members.
  Without sizes in the listing, LOGFILSIZ (4 KiB pages) gives every file's size.
- db2logscan's rate lines ("2013-02-26 15:32:09 7.307 MB/s, 60 sec, 17.6 pg/f, 0.009435 sec/f, ...").

IBM's HADR tools count MBytes of 10^6 bytes (seed 001: 13 writes of 4096 pages are "218.103808
MBytes"), so db2logscan's MB/s is read as 10^6 bytes/s. Log pages are 4 KiB. Average flush size
(pages per flush x 4 KiB) is carried as the average write size, Oracle's average redo write.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta

from redolab.core.fields import MAX_BYTES_PER_SECOND, MAX_DURATION_SECONDS
from redolab.core.units import ascii_digits, format_count, format_named
from redolab.redo.ingest.values import parse_number
from redolab.redo.parsers import RedoInputError, Table
from redolab.redo.parsers.db2_columns import find_counter_columns, is_mon_get_transaction_log
from redolab.redo.parsers.db2_common import PAGE_BYTES, Counters, check_line_lengths, db2_time
from redolab.redo.schemas import Mapped, RedoInterval, with_extra

__all__ = ["check_line_lengths", "db2_time", "detect", "is_mon_get_transaction_log", "mon_get_transaction_log"]
DB2_MB = 1_000_000

# -- detection ---------------------------------------------------------------------------------
# [ \t], never \s, around line anchors: \s* spans newlines, and from every line start over a run of
# blank lines that is quadratic
_SNAPSHOT = re.compile(r"^[ \t]*Database Snapshot[ \t]*\r?$|^[ \t]*Snapshot timestamp[ \t]*=", re.MULTILINE)
_LOGSCAN = re.compile(
    r"^[ \t]*\d{4}-\d{2}-\d{2}[ T-]\d{2}[:.]\d{2}[:.]\d{2}[ \t]+[\d.]+[ \t]*MB/s,[ \t]*[\d.]+[ \t]*sec,", re.MULTILINE
)
_LOG_FILE = re.compile(r"(?:^|[ \t/])S\d{7}\.LOG[ \t]*\r?$", re.MULTILINE)
_DB2PD_HADR = re.compile(r"HADR Information:|HADR_ROLE[ \t]*=|HADR_STATE[ \t]*=")


def detect(text: str) -> str | None:
    if _DB2PD_HADR.search(text):
        return "db2pd-hadr"
    if _LOGSCAN.search(text):
        return "db2logscan"
    if _SNAPSHOT.search(text):
        return "db2-snapshot"
    if _LOG_FILE.search(text):
        return "db2-archive-listing"
    return None


def preset(format_name: str, kind: str, intervals, *, facts=None, warnings=None, ignored=None) -> Table:
    """A table whose intervals are already made (the text formats here are no column table)."""

    mapped = Mapped(
        kind,
        {},
        with_extra(intervals, []),
        warnings if warnings is not None else [],
        ignored or [],
        facts if facts is not None else [],
    )
    return Table(format_name, [], iter(()), [], mapped=mapped)


# -- MON_GET_TRANSACTION_LOG (a column table) -----------------------------------------------------
def mon_get_transaction_log(table: Table):
    """Intervals from captures of MON_GET_TRANSACTION_LOG: the columns by IBM's names or, under
    aliases, by their values (db2_columns); any other column is named as not read."""
    rows = list(table.rows)
    heading = table.headers
    columns = find_counter_columns(heading, rows)
    time_at, member_at, pages_at = columns.time, columns.member, columns.pages
    flushes_at, write_time_at = columns.flushes, columns.write_time
    used = {i for i in (time_at, member_at, pages_at, flushes_at, write_time_at) if i is not None}
    ignored = [h for i, h in enumerate(heading) if i not in used]
    facts: list[str] = [f"Column {text}." for text in columns.found]
    counters = Counters(facts, "MON_GET_TRANSACTION_LOG")

    def number(values: list[str], at: int | None, line: int) -> float | None:
        if at is None or at >= len(values) or not values[at].strip():
            return None
        return parse_number(values[at], line=line, column=heading[at])

    def intervals() -> Iterator:
        read = []
        for line, values in rows:
            where = f"line {line}"
            if len(values) <= max(used):
                raise RedoInputError(
                    f"{where}: {format_count(len(values), 'value')}, fewer than the {len(heading)} columns"
                )
            at = db2_time(values[time_at], f"{where}, {heading[time_at]}")
            member = int(number(values, member_at, line) or 0)
            pages = parse_number(values[pages_at], line=line, column=heading[pages_at])
            read.append(
                (member, at, line, pages, number(values, flushes_at, line), number(values, write_time_at, line))
            )
        read.sort(key=lambda row: (row[0], row[1], row[2]))
        for member, at, line, pages, flushes, write_ms in read:
            interval = counters.add(line, member, at, pages, flushes, write_ms)
            if interval is not None:
                yield interval, []
        counters.finish()

    mapping = {"first_time": heading[time_at], "bytes": heading[pages_at]}
    if member_at is not None:
        mapping["thread"] = heading[member_at]
    if flushes_at is not None:
        mapping["writes"] = heading[flushes_at]
    return Mapped("db2-log-counters", mapping, with_extra(intervals(), []), [], ignored, facts)


# -- db2 get snapshot for database ----------------------------------------------------------------
# greedy, stripped afterwards: lazy parts before `\s*` took minutes on a line with a long run of spaces
_SNAP_LINE = re.compile(r"^\s*(?P<name>[A-Za-z][^=]*)=(?P<value>.*)$")
_SNAP_KEYS = {
    "snapshot timestamp": "at",
    "log pages written": "pages",
    "number write log ios": "flushes",
    "log write time (sec.ns)": "write_time",
    "database member": "member",
    "member number": "member",
    "current member number": "member",
    "database partition number": "member",
}


def read_snapshots(lines: list[str]) -> Table:
    check_line_lengths(lines, "db2 get snapshot")
    facts: list[str] = []
    counters = Counters(facts, "db2 get snapshot for database")

    def blocks() -> Iterator[dict]:
        block: dict = {}
        for number, raw in enumerate(lines, 1):
            line = raw.rstrip("\r\n")
            if line.strip() == "Database Snapshot" or ("at" in block and line.strip().startswith("Snapshot timestamp")):
                if block:
                    yield block
                block = {"line": number}
            match = _SNAP_LINE.match(line)
            if not match:
                continue
            key = _SNAP_KEYS.get(match["name"].strip().lower())
            if key and key not in block:
                block[key] = (number, match["value"].strip())
        if block:
            yield block

    def intervals() -> Iterator:
        seen = 0
        for block in blocks():
            if "at" not in block and "pages" not in block:
                continue
            seen += 1
            first = block.get("line", 1)
            if "at" not in block:
                raise RedoInputError(f"line {first}: a database snapshot without a 'Snapshot timestamp' line")
            if "pages" not in block:
                raise RedoInputError(
                    f"line {block['at'][0]}: the snapshot taken at {block['at'][1]} has no 'Log pages written' line "
                    "(take `db2 get snapshot for database on DBNAME`, not a lock or table space snapshot)"
                )
            at = db2_time(block["at"][1], f"line {block['at'][0]}, Snapshot timestamp")
            line, value = block["pages"]
            pages = parse_number(value, line=line, column="Log pages written")
            flushes = None
            if "flushes" in block:
                flushes = parse_number(block["flushes"][1], line=block["flushes"][0], column="Number write log IOs")
            write_ms = None
            if "write_time" in block:
                line_at, text = block["write_time"]
                write_ms = 1000 * parse_number(text, line=line_at, column="Log write time (sec.ns)")
            member = 0
            if "member" in block:
                member = int(parse_number(block["member"][1], line=block["member"][0], column="member"))
            interval = counters.add(line, member, at, pages, flushes, write_ms)
            if interval is not None:
                yield interval
        if not seen:
            raise RedoInputError("no database snapshot with 'Snapshot timestamp' and 'Log pages written' lines")
        counters.finish()

    return preset("db2-snapshot", "db2-log-counters", ((i, []) for i in intervals()), facts=facts)


# -- archived log listing ------------------------------------------------------------------------
_STREAM = re.compile(r"LOGSTREAM(\d{4})", re.IGNORECASE)
# (?<!\S): the path starts a token; without it a 200 KiB token took minutes (a search from each position)
_NAME = re.compile(r"(?<!\S)(?P<path>\S*?)(?P<name>S(?P<seq>\d{7})\.LOG)\s*$")
_STAMP = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[ T+](?P<time>\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(?P<zone>\s+[+-]\d{2}:?\d{2})?"
)
_DIRECTORY = re.compile(r"^(?P<dir>\S.*):\s*$")  # ls -lR: "./LOGSTREAM0001/C0000000:"


def read_listing(lines: list[str], log_file_pages: int | None) -> Table:
    check_line_lengths(lines, "a directory listing")
    files, passed = _archived_files(lines)
    if not files:
        raise RedoInputError("no archived log files (S0000123.LOG with a modification time) in the listing")
    if any(size is None for *_, size, _line in files) and not log_file_pages:
        line = next(line for *_, size, line in files if size is None)
        raise RedoInputError(
            f"line {line}: the listing has no file sizes; give LOGFILSIZ (the log file size in 4 KiB pages, from "
            "`db2 get db cfg`), or list with `ls -l --time-style=full-iso` so each file's size is known"
        )
    files.sort()
    members = sorted({member for member, *_ in files})
    facts = [
        f"{len(files):,} archived log files of {format_named('member', members)}: each file's rate is its size "
        "over the time since the previous file of the same log stream was closed (its modification time)."
    ]
    if passed:
        were = "was" if passed == 1 else "were"
        facts.append(
            f"{format_count(passed, 'line')} without a log file name and time {were} passed over (totals, directories)."
        )
    if log_file_pages:
        facts.append(f"LOGFILSIZ {log_file_pages:,} pages ({log_file_pages * PAGE_BYTES:,} bytes) per file.")
    warnings: list[str] = []  # filled once the intervals are read
    intervals = _archived_file_intervals(files, log_file_pages, warnings)
    return preset("db2-archive-listing", "db2-archive-listing", intervals, facts=facts, warnings=warnings)


# member, sequence, closed, size in bytes (None: not listed), line
_ArchivedFile = tuple[int, int, datetime, float | None, int]


def _archived_files(lines: list[str]) -> tuple[list[_ArchivedFile], int]:
    """The archived log files of the listing, and how many other lines were passed over."""
    files: list[_ArchivedFile] = []
    directory = ""
    passed = 0
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        heading = _DIRECTORY.match(line)
        if heading and not _NAME.search(line):
            directory = heading["dir"]
            continue
        name = _NAME.search(line)
        stamp = _STAMP.search(line)
        if not name or not stamp:
            passed += 1
            continue
        where = f"line {number}"
        closed = db2_time(
            f"{stamp['date']} {stamp['time'] if stamp['time'].count(':') == 2 else stamp['time'] + ':00'}"
            f"{stamp['zone'] or ''}",
            where,
        )
        before = line[: stamp.start()].split()
        after = line[stamp.end() : name.start()].split()
        # ls -l: the size stands just before the time; find -printf '%T+ %s %p': just after it
        size = next((float(token) for token in [*reversed(before), *after] if ascii_digits(token)), None)
        stream = _STREAM.search(name["path"]) or _STREAM.search(directory)
        member = int(stream.group(1)) if stream else 0
        files.append((member, int(name["seq"]), closed, size, number))
    return files, passed


def _archived_file_intervals(
    files: list[_ArchivedFile], log_file_pages: int | None, warnings: list[str]
) -> Iterator[tuple[RedoInterval, list]]:
    """Each file after its predecessor in the same log stream: its size over the time between the two
    closings. A gap in the sequence is passed over, and counted in a warning at the end."""
    previous: dict[int, tuple[int, datetime, int]] = {}
    gaps = 0
    for member, sequence, closed, size, line in files:
        before = previous.get(member)
        previous[member] = (sequence, closed, line)
        if before is None:
            continue
        if before[0] == sequence:
            continue  # the same file listed twice (two archive destinations): dedupe names it
        if sequence != before[0] + 1:
            gaps += 1
            continue
        data = size if size is not None else float(log_file_pages * PAGE_BYTES)
        seconds = (closed - before[1]).total_seconds()
        if seconds <= 0:
            raise RedoInputError(
                f"line {line}: S{sequence:07d}.LOG was closed at {closed:%Y-%m-%d %H:%M:%S}, not after "
                f"S{before[0]:07d}.LOG on line {before[2]}: are the times of another host or copy?"
            )
        if data / seconds > MAX_BYTES_PER_SECOND:
            raise RedoInputError(f"line {line}: {data:,.0f} bytes in {seconds:g} s is more than 1 TB/s")
        yield (
            RedoInterval(
                line=line,
                thread=member,
                start=before[1],
                end=closed,
                seconds=None,
                bytes=data,
                kind="log",
                sequence=sequence,
            ),
            [],
        )
    if gaps:
        warnings.append(
            f"{format_count(gaps, 'log file')} {'follows' if gaps == 1 else 'follow'} a gap in the sequence "
            "(a file missing from the listing): the time "
            "across a gap is not turned into a rate."
        )


# -- db2logscan -----------------------------------------------------------------------------------
_RATE_LINE = re.compile(
    r"^\s*(?P<at>\d{4}-\d{2}-\d{2}[ T-]\d{2}[:.]\d{2}[:.]\d{2}(?:\.\d+)?)\s+(?P<mbs>[\d.]+)\s*MB/s,\s*"
    r"(?P<sec>[\d.]+)\s*sec,\s*(?P<pgf>[\d.]+)\s*pg/f(?:,\s*(?P<secf>[\d.]+)\s*sec/f)?"
)


def read_logscan(lines: list[str]) -> Table:
    check_line_lengths(lines, "db2logscan")
    facts: list[str] = []

    def intervals() -> Iterator:

        count = 0
        for number, raw in enumerate(lines, 1):
            match = _RATE_LINE.match(raw)
            if not match:
                continue
            where = f"line {number}"
            end = db2_time(match["at"], where)
            rate = parse_number(match["mbs"], line=number, column="MB/s") * DB2_MB
            seconds = parse_number(match["sec"], line=number, column="sec")
            pages_per_flush = parse_number(match["pgf"], line=number, column="pg/f")
            if seconds <= 0:
                continue  # an empty interval (no log data in it) says nothing about a rate
            if seconds > MAX_DURATION_SECONDS:
                raise RedoInputError(f"{where}: {match['sec']} sec is over 10 years: not a db2logscan interval")
            if rate > MAX_BYTES_PER_SECOND:
                raise RedoInputError(f"{where}: {match['mbs']} MB/s is more than 1 TB/s")
            data = rate * seconds
            flushes = data / (pages_per_flush * PAGE_BYTES) if pages_per_flush > 0 else None
            count += 1
            yield (
                RedoInterval(
                    line=number,
                    thread=0,
                    start=end - timedelta(seconds=seconds),
                    end=end,
                    seconds=None,
                    bytes=data,
                    kind="snapshot",
                    writes=flushes,
                ),
                [],
            )
        if not count:
            raise RedoInputError("no db2logscan rate lines ('<date> <time> N MB/s, N sec, N pg/f, ...') were found")
        facts.append(
            f"db2logscan: {count:,} intervals; MB/s read as 10^6 bytes per second (IBM's HADR tools count MBytes of "
            "10^6), each interval ending at its time; flush size from pg/f x 4 KiB."
        )

    return preset("db2logscan", "db2logscan", intervals(), facts=facts)
