"""What the Db2 readers share: Db2's timestamps, the line-length guard and cumulative counters
turned into intervals (MON_GET_TRANSACTION_LOG, database snapshots). Log pages are 4 KiB."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from redolab.core.fields import FIRST_YEAR, LAST_YEAR, MAX_BYTES_PER_SECOND
from redolab.core.units import DB2_PAGE_BYTES, format_named
from redolab.redo.parsers import RedoInputError
from redolab.redo.schemas import RedoInterval

PAGE_BYTES = DB2_PAGE_BYTES

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
# matched on the last word alone: searched over the whole text, `\s+` before it was quadratic in a run of spaces
_ZONE_SUFFIX = re.compile(r"^(?P<sign>[+-])(?P<hh>\d{2}):?(?P<mm>\d{2})$")


def db2_time(text: str, where: str) -> datetime:
    """A Db2 or shell timestamp; an explicit offset (`ls --time-style=full-iso`) is kept, a plain
    wall-clock time is the database's, tagged UTC until it is read in the environment's zone."""
    cleaned = text.strip()
    zone = UTC
    words = cleaned.rsplit(None, 1)
    suffix = _ZONE_SUFFIX.match(words[-1]) if len(words) == 2 else None
    if suffix:
        offset = timedelta(hours=int(suffix["hh"]), minutes=int(suffix["mm"])) * (-1 if suffix["sign"] == "-" else 1)
        if abs(offset) > timedelta(hours=14):  # UTC-12 to UTC+14 are the zones there are
            raise RedoInputError(f"{where}: '{suffix.group(0)}' is not a UTC offset (-12:00 to +14:00)")
        zone = timezone(offset, suffix.group(0))
        cleaned = words[0].rstrip()
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
                    int(parts["y"]),
                    int(parts["m"]),
                    int(parts["d"]),
                    int(parts["h"]),
                    int(parts["mi"]),
                    int(parts["s"]),
                    int((parts["f"] or "0")[:6].ljust(6, "0")),
                    tzinfo=zone,
                )
            except ValueError:
                break
    raise RedoInputError(
        f"{where}: '{text.strip()}' is not a time Db2 writes (YYYY-MM-DD-HH.MM.SS.ffffff, YYYY-MM-DD HH:MM:SS "
        "or MM/DD/YYYY HH:MM:SS)"
    )


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


# -- cumulative counters (MON_GET_TRANSACTION_LOG, snapshots) -------------------------------------
class Counters:
    """Turns captures of cumulative counters, per member, into intervals between captures."""

    def __init__(self, facts: list[str], what: str) -> None:
        self.last: dict[int, tuple] = {}  # member -> (time, pages, flushes, line, write ms) of its last capture
        self.resets: list[str] = []
        self.facts, self.what = facts, what
        self.captures = 0
        self.write_time: dict[int, list[float]] = {}  # member -> [milliseconds, flushes] over the intervals kept

    def add(
        self, line: int, member: int, at: datetime, pages: float, flushes: float | None, write_ms: float | None = None
    ):
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
            f"{self.what}: {self.captures:,} captures of {format_named('member', members)}; the rate of each "
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
