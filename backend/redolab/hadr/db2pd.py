"""`db2pd -db DBNAME -hadr` output, captured repeatedly into one file (pure).

Seed 001's loop appends one capture of the primary and one of the standby every few seconds. Two
layouts exist, and one file may hold either:
- before 10.1: "Database Partition 0 -- Database RAKI -- Active -- Up ... -- Date 2012-04-13-14.45.17.920125",
  then headings with their values on the next line: `Role State SyncMode HeartBeatsMissed
  LogGapRunAvg (bytes)`, `ConnectStatus ConnectTime Timeout`, `PrimaryFile PrimaryPg PrimaryLSN`,
  `StandByFile StandByPg StandByLSN StandByRcvBufUsed` (the LSN is the byte offset in the log stream);
- 10.1 and later: "Database Member 0 -- Database HADRDB -- Active -- Up ... -- Date 06/08/2011 13:57:23",
  then `NAME = value` lines, one block per standby starting at HADR_ROLE:
  HADR_STATE, HADR_SYNCMODE, HADR_CONNECT_STATUS, HADR_LOG_GAP(bytes), PRIMARY_LOG_FILE,PAGE,POS,
  STANDBY_LOG_FILE,PAGE,POS, STANDBY_RECV_BUF_SIZE(pages), STANDBY_RECV_BUF_PERCENT, ...

Every capture becomes one Sample per HADR pair it shows. Lines of other tools between captures
(the seed's "#####" separators, "Collecting stats 3") are passed over and counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from redolab.core import fields
from redolab.redo.parsers import RedoInputError
from redolab.redo.parsers.db2 import check_line_lengths, db2_time

_HEADER = re.compile(
    r"^\s*Database (?P<kind>Partition|Member) (?P<member>\d+) -- Database (?P<db>\S+) -- (?P<status>[^-]+?)"
    r"(?: -- Up [^-]*?)?(?: -- Date (?P<date>.+?))?\s*$"
)
_DATE_ONLY = re.compile(r"^\s*-- Date (?P<date>.+?)\s*$")
_KEY_VALUE = re.compile(r"^\s*(?P<key>[A-Z][A-Z0-9_,()]*(?:\([a-z]+\))?)\s*=(?P<value>.*)$")  # value stripped after
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)\s*%?$")


@dataclass
class Sample:
    line: int
    at: datetime
    member: int
    database: str
    role: str  # PRIMARY / STANDBY
    state: str | None = None  # PEER, REMOTE_CATCHUP, ...
    sync_mode: str | None = None
    connect_status: str | None = None  # CONNECTED, CONGESTED, DISCONNECTED
    heartbeats_missed: int | None = None
    log_gap_bytes: float | None = None
    recv_buf_percent: float | None = None
    recv_buf_pages: int | None = None
    primary_file: str | None = None
    primary_position: int | None = None  # bytes into the log stream
    standby_file: str | None = None
    standby_position: int | None = None
    standby_id: int | None = None
    layout: str = ""


@dataclass
class Parsed:
    samples: list[Sample] = field(default_factory=list)
    layouts: set[str] = field(default_factory=set)
    passed_over: int = 0


def _upper(text: str | None) -> str | None:
    return text.strip().upper().replace(" ", "_") if text and text.strip() else None


_MAX_POSITION = 2**63 - 1  # log positions (LSN, byte offsets): a 64-bit column
_MAX_BYTES = fields.MAX_SIZE_BYTES  # a log gap
_MAX_COUNT = 2**31 - 1  # counts, pages, standby numbers


def _int(text: str, where: str, what: str, maximum: int = _MAX_COUNT) -> int:
    cleaned = text.strip()
    try:
        value = int(cleaned, 16) if cleaned.lower().startswith("0x") else int(cleaned.replace(",", ""))
    except ValueError:
        raise RedoInputError(f"{where}: '{cleaned[:40]}' is not {what}") from None
    if value < 0:
        raise RedoInputError(f"{where}: '{cleaned}' is negative; {what} cannot be")
    if value > maximum:
        raise RedoInputError(f"{where}: '{cleaned[:40]}' is over {maximum:,}, the most {what} can be")
    return value


def _percent(text: str, where: str) -> float | None:
    cleaned = text.strip()
    if not cleaned or cleaned.upper() == "NULL":
        return None
    match = _PERCENT.match(cleaned)
    if not match or float(match.group(1)) > 100:
        raise RedoInputError(f"{where}: '{cleaned}' is not a percentage (0 to 100)")
    return float(match.group(1))


def parse(lines: list[str]) -> Parsed:
    """Every capture in the file; the first malformed value stops everything, naming its line."""
    texts = [raw.rstrip("\r\n").replace("\xa0", " ") for raw in lines]
    check_line_lengths(texts, "db2pd", 4096)
    reader = _Reader()
    for number, line in enumerate(texts, 1):
        reader.read(number, line)
    reader.finish()
    if not reader.parsed.samples:
        raise RedoInputError(
            "no db2pd -hadr capture was found: expected 'Database Member 0 -- Database NAME -- ... -- Date ...' "
            "followed by HADR_ROLE = ... lines (10.1 and later), or 'HADR Information:' with a Role/State table "
            "(before 10.1)"
        )
    return reader.parsed


# The headings of the layout before 10.1 whose values come on the next line.
_OLD_HEADINGS = ("Role", "ConnectStatus", "PrimaryFile", "StandByFile", "LocalHost", "RemoteHost")


class _Reader:
    """Reads a file line by line: the capture it is in, the sample being filled and, in the layout
    before 10.1, the heading whose values the next line holds."""

    def __init__(self) -> None:
        self.parsed = Parsed()
        self.header: dict | None = None  # the current capture's member, database and time
        self.current: Sample | None = None
        self.pending_heading: tuple[int, list[str]] | None = None

    def finish(self) -> None:
        """The sample being filled is complete."""
        if self.current is not None:
            self.parsed.samples.append(self.current)
        self.current = None

    def read(self, number: int, line: str) -> None:
        if self._capture_header(number, line):
            return
        if self.header is None:
            self.parsed.passed_over += bool(line.strip())
            return
        key_value = _KEY_VALUE.match(line)
        if key_value:
            self._key_value(number, key_value["key"], key_value["value"].strip())
        else:
            self._old_layout(number, line.strip())

    def _capture_header(self, number: int, line: str) -> bool:
        """A capture's "Database Member ..." line, or the "-- Date" line it wrapped onto."""
        match = _HEADER.match(line)
        if match:
            self.finish()
            member = _int(match["member"], f"line {number}, Database Member", "a member number", fields.MAX_NUMBERED)
            self.header = {"member": member, "db": match["db"], "line": number, "date": match["date"]}
            return True
        date_only = _DATE_ONLY.match(line)
        if date_only and self.header is not None and self.header["date"] is None:
            self.header["date"] = date_only["date"]
            return True
        return False

    def _key_value(self, number: int, key: str, value: str) -> None:
        """10.1 and later: NAME = value; each HADR_ROLE starts a sample."""
        if key == "HADR_ROLE":
            self.finish()
            self.current = _new(self.header, number, value, "10.1+")
            self.parsed.layouts.add("10.1+")
        elif self.current is not None:
            _apply_key(self.current, key, value, f"line {number}")

    def _old_layout(self, number: int, stripped: str) -> None:
        """Before 10.1: headings, then their values on the next line; each Role line starts a sample."""
        if stripped == "HADR Information:":
            self.finish()
            self.pending_heading = None
            self.parsed.layouts.add("before 10.1")
            return
        words = stripped.split()
        if words and words[0] in _OLD_HEADINGS:
            self.pending_heading = (number, words)
            return
        if self.pending_heading is not None and stripped:
            heading = self.pending_heading[1]
            self.pending_heading = None
            if heading[0] == "Role":
                self.finish()
                self.current = _new(self.header, number, words[0], "before 10.1")
                _old_role_line(self.current, words, f"line {number}")
            elif self.current is not None:
                _old_values(self.current, heading, stripped, words, f"line {number}")
            return
        if stripped.startswith("#") or stripped.startswith("Collecting stats"):
            self.parsed.passed_over += 1  # the seed loop's separators between captures


def _new(header: dict, number: int, role: str, layout: str) -> Sample:
    if not header.get("date"):
        raise RedoInputError(
            f"line {header['line']}: the capture has no '-- Date ...' after its database line, so it cannot be "
            "placed in time; capture the whole db2pd output"
        )
    at = db2_time(header["date"], f"line {header['line']}, Date")
    return Sample(line=number, at=at, member=header["member"], database=header["db"], role=_upper(role) or "",
                  layout=layout)  # fmt: skip


def _apply_key(sample: Sample, key: str, value: str, where: str) -> None:
    value = value.strip()
    if key == "HADR_STATE":
        sample.state = _upper(value)
    elif key == "HADR_SYNCMODE":
        sample.sync_mode = _upper(value)
    elif key == "HADR_CONNECT_STATUS":
        sample.connect_status = _upper(value.split()[0] if value else "")
    elif key == "HEARTBEAT_MISSED":
        sample.heartbeats_missed = _int(value, f"{where}, {key}", "a count")
    elif key == "HADR_LOG_GAP(bytes)":
        sample.log_gap_bytes = float(_int(value, f"{where}, {key}", "a number of bytes", _MAX_BYTES))
    elif key == "STANDBY_RECV_BUF_PERCENT":
        sample.recv_buf_percent = _percent(value, f"{where}, {key}")
    elif key == "STANDBY_RECV_BUF_SIZE(pages)":
        sample.recv_buf_pages = _int(value, f"{where}, {key}", "a number of pages")
    elif key == "STANDBY_ID":
        sample.standby_id = _int(value, f"{where}, {key}", "a standby number")
    elif key in ("PRIMARY_LOG_FILE,PAGE,POS", "STANDBY_LOG_FILE,PAGE,POS"):
        parts = [part.strip() for part in value.split(",")]
        if len(parts) != 3:
            raise RedoInputError(f"{where}, {key}: '{value}' is not 'S0000012.LOG, page, position'")
        position = _int(parts[2], f"{where}, {key}", "a log position in bytes", _MAX_POSITION)
        if key.startswith("PRIMARY"):
            sample.primary_file, sample.primary_position = parts[0], position
        else:
            sample.standby_file, sample.standby_position = parts[0], position


def _old_role_line(sample: Sample, words: list[str], where: str) -> None:
    # Role State SyncMode HeartBeatsMissed LogGapRunAvg (bytes): "Primary Peer Async 0 0"
    if len(words) < 5:
        raise RedoInputError(
            f"{where}: '{' '.join(words)}' is not Role, State, SyncMode, HeartBeatsMissed, LogGapRunAvg"
        )
    sample.state, sample.sync_mode = _upper(words[1]), _upper(words[2])
    sample.heartbeats_missed = _int(words[3], f"{where}, HeartBeatsMissed", "a count")
    sample.log_gap_bytes = float(_int(words[4], f"{where}, LogGapRunAvg", "a number of bytes", _MAX_BYTES))


def _old_values(sample: Sample, heading: list[str], stripped: str, words: list[str], where: str) -> None:
    if heading[0] == "ConnectStatus":
        sample.connect_status = _upper(words[0])
    elif heading[0] == "PrimaryFile" and len(words) >= 3:
        sample.primary_file = words[0]
        sample.primary_position = _int(words[2], f"{where}, PrimaryLSN", "a log position", _MAX_POSITION)
    elif heading[0] == "StandByFile" and len(words) >= 3:
        sample.standby_file = words[0]
        sample.standby_position = _int(words[2], f"{where}, StandByLSN", "a log position", _MAX_POSITION)
        if "StandByRcvBufUsed" in heading and len(words) >= 4:
            sample.recv_buf_percent = _percent(words[3], f"{where}, StandByRcvBufUsed")
