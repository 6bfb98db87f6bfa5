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
from datetime import UTC, datetime, timedelta, timezone

from redolab.core.fields import FIRST_YEAR, LAST_YEAR, MAX_BYTES_PER_SECOND, MAX_DURATION_SECONDS
from redolab.core.units import DB2_PAGE_BYTES
from redolab.redo.ingest.values import parse_number
from redolab.redo.parsers import RedoInputError, Table, normalise
from redolab.redo.schemas import Mapped, RedoInterval, with_extra

PAGE_BYTES = DB2_PAGE_BYTES
DB2_MB = 1_000_000

# -- times -------------------------------------------------------------------------------------
_TIMES = (
    # 2026-11-20-10.00.00.123456 (CURRENT TIMESTAMP, db2pd "Date"), 2026-11-20 10:00:00, 2012-05-16 00.25.55.6
    re.compile(
        r"^(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})[- T](?P<h>\d{1,2})[.:](?P<mi>\d{2})[.:](?P<s>\d{2})"
        r"(?:[.,](?P<f>\d{1,12}))?$"
    ),
    # 11/22/2022 21:52:45.544870 (snapshot, US), 09-01-2008 11:46:27.191344
    re.compile(
        r"^(?P<m>\d{1,2})[/-](?P<d>\d{1,2})[/-](?P<y>\d{4})[ T](?P<h>\d{1,2})[.:](?P<mi>\d{2})[.:](?P<s>\d{2})"
        r"(?:[.,](?P<f>\d{1,12}))?$"
    ),
)
_ZONE_SUFFIX = re.compile(r"\s+(?P<sign>[+-])(?P<hh>\d{2}):?(?P<mm>\d{2})$")


def db2_time(text: str, where: str) -> datetime:
    """A Db2 or shell timestamp; an explicit offset (`ls --time-style=full-iso`) is kept, a plain
    wall-clock time is the database's, tagged UTC until it is read in the environment's zone."""
    cleaned = text.strip()
    zone = UTC
    suffix = _ZONE_SUFFIX.search(cleaned)
    if suffix:
        offset = timedelta(hours=int(suffix["hh"]), minutes=int(suffix["mm"])) * (-1 if suffix["sign"] == "-" else 1)
        if abs(offset) > timedelta(hours=14):  # UTC-12 to UTC+14 are the zones there are
            raise RedoInputError(f"{where}: '{suffix.group(0).strip()}' is not a UTC offset (-12:00 to +14:00)")
        zone = timezone(offset, suffix.group(0).strip())
        cleaned = cleaned[: suffix.start()]
    for pattern in _TIMES:
        match = pattern.match(cleaned)
        if match:
            parts = match.groupdict()
            if not FIRST_YEAR <= int(parts["y"]) <= LAST_YEAR:
                raise RedoInputError(
                    f"{where}: '{text.strip()}' is outside the years 1970 to 2100: not a time this database wrote"
                )
            try:
                return datetime(
                    int(parts["y"]), int(parts["m"]), int(parts["d"]), int(parts["h"]), int(parts["mi"]),
                    int(parts["s"]), int((parts["f"] or "0")[:6].ljust(6, "0")), tzinfo=zone,
                )  # fmt: skip
            except ValueError:
                break
    raise RedoInputError(
        f"{where}: '{text.strip()}' is not a time Db2 writes (YYYY-MM-DD-HH.MM.SS.ffffff, YYYY-MM-DD HH:MM:SS "
        "or MM/DD/YYYY HH:MM:SS)"
    )


# -- detection ---------------------------------------------------------------------------------
_SNAPSHOT = re.compile(r"^\s*Database Snapshot\s*$|^\s*Snapshot timestamp\s*=", re.MULTILINE)
_LOGSCAN = re.compile(
    r"^\s*\d{4}-\d{2}-\d{2}[ T-]\d{2}[:.]\d{2}[:.]\d{2}\s+[\d.]+\s*MB/s,\s*[\d.]+\s*sec,", re.MULTILINE
)
_LOG_FILE = re.compile(r"(?:^|[\s/])S\d{7}\.LOG\s*$", re.MULTILINE)
_DB2PD_HADR = re.compile(r"HADR Information:|HADR_ROLE\s*=|HADR_STATE\s*=")


MAX_LINE = 16 * 1024  # no line Db2 or ls writes is longer (a path is at most 4,096 bytes)


def check_line_lengths(lines: list[str], what: str, limit: int = MAX_LINE) -> None:
    """Refuse a line longer than the tool writes before any pattern reads it (and so before a
    pattern's backtracking over 200 KiB of spaces can take minutes)."""
    for number, line in enumerate(lines, 1):
        if len(line) > limit and len(line := line.rstrip("\r\n")) > limit:
            raise RedoInputError(
                f"line {number} is {len(line):,} characters long; {what} writes no line over {limit:,}: is this the "
                "whole, unedited output?"
            )


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

    mapped = Mapped(kind, {}, with_extra(intervals, []), warnings if warnings is not None else [], ignored or [],
                    facts if facts is not None else [])  # fmt: skip
    return Table(format_name, [], iter(()), [], mapped=mapped)


# -- cumulative counters (MON_GET_TRANSACTION_LOG, snapshots) -------------------------------------
class Counters:
    """Turns captures of cumulative counters, per member, into intervals between captures."""

    def __init__(self, facts: list[str], what: str) -> None:
        self.last: dict[int, tuple] = {}  # member -> (time, pages, flushes, line, write ms) of its last capture
        self.resets: list[str] = []
        self.facts, self.what = facts, what
        self.captures = 0
        self.write_time: dict[int, list[float]] = {}  # member -> [milliseconds, flushes] over the intervals kept

    def add(self, line: int, member: int, at: datetime, pages: float, flushes: float | None,
            write_ms: float | None = None):  # fmt: skip
        """The interval since this member's previous capture, or None (the first, or across a reset)."""

        self.captures += 1
        previous = self.last.get(member)
        self.last[member] = (at, pages, flushes, line, write_ms)
        if previous is None:
            return None
        before, before_pages, before_flushes, before_line, before_ms = previous
        seconds = (at - before).total_seconds()
        if seconds <= 0:
            raise RedoInputError(
                f"line {line}: member {member}'s capture at {at:%Y-%m-%d %H:%M:%S} is not later than the one on "
                f"line {before_line} ({before:%Y-%m-%d %H:%M:%S}); captures of one member must move forward in time"
            )
        if pages < before_pages or (flushes is not None and before_flushes is not None and flushes < before_flushes):
            self.resets.append(
                f"member {member}: the counters went down between line {before_line} and line {line} "
                f"({before:%Y-%m-%d %H:%M:%S} to {at:%Y-%m-%d %H:%M:%S}), a database restart; that interval is left out"
            )
            return None
        data = (pages - before_pages) * PAGE_BYTES
        if data / seconds > MAX_BYTES_PER_SECOND:
            raise RedoInputError(
                f"line {line}: {data:,.0f} bytes in {seconds:g} s since line {before_line} is more than 1 TB/s: "
                "is a counter or a time wrong?"
            )
        writes = None if flushes is None or before_flushes is None else flushes - before_flushes
        if writes and write_ms is not None and before_ms is not None and write_ms >= before_ms:
            total = self.write_time.setdefault(member, [0.0, 0.0])
            total[0] += write_ms - before_ms
            total[1] += writes
        return RedoInterval(
            line=line, thread=member, start=before, end=at, seconds=None, bytes=data, kind="snapshot", writes=writes
        )

    def finish(self) -> None:
        members = sorted(self.last)
        self.facts.append(
            f"{self.what}: {self.captures:,} captures of member(s) {', '.join(map(str, members))}; the rate of each "
            "interval is the change of LOG_WRITES (4 KiB pages) between two captures of one member."
        )
        self.facts.extend(f"Counter reset: {reset}." for reset in self.resets)
        for member, (milliseconds, flushes) in sorted(self.write_time.items()):
            self.facts.append(
                f"Member {member}: {milliseconds / flushes:.3f} ms per log write on the primary's log disk "
                f"(LOG_WRITE_TIME over NUM_LOG_WRITE_IO, {flushes:,.0f} writes)."
            )
        if self.captures and self.captures == len(members):
            raise RedoInputError(
                f"only one capture per member: a rate needs two captures of the cumulative counters ({self.what}); "
                "capture them repeatedly, e.g. every 5 minutes, into one file"
            )


# -- MON_GET_TRANSACTION_LOG (a column table) -----------------------------------------------------
MON_COUNTERS = {"LOGWRITES", "NUMLOGWRITEIO"}
_TIME_HEADINGS = ("SNAPSHOTTIME", "SNAPSHOTTIMESTAMP", "CAPTURETIME", "CAPTURETIMESTAMP", "TS", "TIMESTAMP",
                  "CURRENTTIMESTAMP", "SAMPLETIME", "COLLECTED", "COLLECTIONTIME", "TIME", "1")  # fmt: skip


def is_mon_get_transaction_log(headers: list[str]) -> bool:

    return "LOGWRITES" in {normalise(h) for h in headers}


def mon_get_transaction_log(table: Table):
    """Intervals from captures of MON_GET_TRANSACTION_LOG (any other columns are named as not read)."""

    names = {normalise(h): i for i, h in enumerate(table.headers)}
    time_at = next((names[n] for n in _TIME_HEADINGS if n in names), None)
    if time_at is None:
        raise RedoInputError(
            f"MON_GET_TRANSACTION_LOG rows without a capture time (columns: {', '.join(table.headers)}): select "
            "CURRENT TIMESTAMP AS SNAPSHOT_TIME with MEMBER, LOG_WRITES and NUM_LOG_WRITE_IO at every capture"
        )
    member_at, pages_at = names.get("MEMBER"), names["LOGWRITES"]
    flushes_at, write_time_at = names.get("NUMLOGWRITEIO"), names.get("LOGWRITETIME")
    used = {i for i in (time_at, member_at, pages_at, flushes_at, write_time_at) if i is not None}
    ignored = [h for i, h in enumerate(table.headers) if i not in used]
    facts: list[str] = []
    counters = Counters(facts, "MON_GET_TRANSACTION_LOG")
    heading = table.headers

    def intervals() -> Iterator:
        rows = []
        for line, values in table.rows:
            where = f"line {line}"
            at = db2_time(values[time_at], f"{where}, {heading[time_at]}")
            member = (
                int(parse_number(values[member_at], line=line, column=heading[member_at]))
                if member_at is not None
                else 0
            )
            pages = parse_number(values[pages_at], line=line, column=heading[pages_at])
            flushes = None
            if flushes_at is not None and values[flushes_at].strip():
                flushes = parse_number(values[flushes_at], line=line, column=heading[flushes_at])
            write_ms = None
            if write_time_at is not None and values[write_time_at].strip():
                write_ms = parse_number(values[write_time_at], line=line, column=heading[write_time_at])
            rows.append((member, at, line, pages, flushes, write_ms))
        rows.sort(key=lambda row: (row[0], row[1], row[2]))
        for member, at, line, pages, flushes, write_ms in rows:
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
        f"{len(files):,} archived log files of member(s) {', '.join(map(str, members))}: each file's rate is its size "
        "over the time since the previous file of the same log stream was closed (its modification time)."
    ]
    if passed:
        facts.append(f"{passed:,} line(s) without a log file name and time were passed over (totals, directories).")
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
        closed = db2_time(f"{stamp['date']} {stamp['time'] if stamp['time'].count(':') == 2 else stamp['time'] + ':00'}"
                          f"{stamp['zone'] or ''}", where)  # fmt: skip
        before = line[: stamp.start()].split()
        after = line[stamp.end() : name.start()].split()
        # ls -l: the size stands just before the time; find -printf '%T+ %s %p': just after it
        size = next((float(token) for token in [*reversed(before), *after] if token.isdigit()), None)
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
        yield RedoInterval(
            line=line, thread=member, start=before[1], end=closed, seconds=None, bytes=data, kind="log",
            sequence=sequence,
        ), []  # fmt: skip
    if gaps:
        warnings.append(
            f"{gaps:,} log file(s) follow a gap in the sequence (a file missing from the listing): the time "
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
            yield RedoInterval(
                line=number, thread=0, start=end - timedelta(seconds=seconds), end=end, seconds=None, bytes=data,
                kind="snapshot", writes=flushes,
            ), []  # fmt: skip
        if not count:
            raise RedoInputError("no db2logscan rate lines ('<date> <time> N MB/s, N sec, N pg/f, ...') were found")
        facts.append(
            f"db2logscan: {count:,} intervals; MB/s read as 10^6 bytes per second (IBM's HADR tools count MBytes of "
            "10^6), each interval ending at its time; flush size from pg/f x 4 KiB."
        )

    return preset("db2logscan", "db2logscan", intervals(), facts=facts)
