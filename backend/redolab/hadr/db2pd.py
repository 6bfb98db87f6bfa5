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

The first fix packs' layout before 10.1 (Db2 9.5, 9.7 of 2010) writes no "-- Date" on the database
line: ConnectTime and PeerWindowEnd carry a date with its epoch seconds, "Thu Aug 5 21:52:07 2010
(1281016327)". ConnectTime is when the connection status began, not when db2pd ran, so it dates no
capture. PeerWindowEnd is the time until which the primary promises to stay in peer state, renewed
at each heartbeat as that heartbeat's time plus HADR_PEER_WINDOW (IBM's hadr_peer_window_end monitor
element): in Peer state, PeerWindowEnd minus PeerWindow is the last heartbeat before db2pd ran, and
dates the capture to within one heartbeat interval. Out of Peer state it keeps its last value and
dates nothing. A capture without "-- Date" is dated so, said in a note, or refused naming its line.

Every capture becomes one Sample per HADR pair it shows. Lines of other tools between captures
(the seed's "#####" separators, "Collecting stats 3") are passed over and counted.

What the fields are (IBM's monitor elements, db2pd -hadr and MON_GET_HADR, 10.1 and later):
- HADR_LOG_GAP (and LogGapRunAvg before 10.1) is a running average of PRIMARY_LOG_POS minus
  STANDBY_LOG_POS, not the gap at the capture: the current gap is the difference of the positions.
- LOG_HADR_WAIT_ACCUMULATED and LOG_HADR_WAIT_COUNT (LOG_HADR_WAITS_TOTAL in MON_GET_HADR) count the
  primary's log writes that waited for HADR since activation: their ratio is the mean wait per write
  over the lifetime; LOG_HADR_WAIT_RECENT_AVG is a recent average; LOG_HADR_WAIT_CUR the wait under way.
- HEARTBEAT_MISSED of HEARTBEAT_EXPECTED since activation; HADR_TIMEOUT, PEER_WINDOW and
  PEER_WAIT_LIMIT are the configured values; SOCK_SEND_BUF_REQUESTED,ACTUAL and
  SOCK_RECV_BUF_REQUESTED,ACTUAL are DB2_HADR_SOSNDBUF / SORCVBUF (0: not set) and what the operating
  system granted.
- PRIMARY_MEMBER_HOST, PRIMARY_INSTANCE, PRIMARY_MEMBER, STANDBY_MEMBER_HOST, STANDBY_INSTANCE and
  STANDBY_MEMBER name the two ends of the log shipping channel: the pair. Before 10.1, LocalHost and
  RemoteHost (and RemoteInstance) name them from the side the capture was taken on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from redolab.core import fields
from redolab.core.units import format_count
from redolab.redo.parsers import RedoInputError
from redolab.redo.parsers.db2_common import check_line_lengths, db2_time

# The database line is split on " -- " (no pattern over the whole line: a lazy status before
# optional parts and trailing spaces was quadratic in a long run of spaces); its first part is this.
_DATABASE = re.compile(r"^Database (?P<kind>Partition|Member) (?P<member>\d{1,9})$")
_KEY_VALUE = re.compile(r"^\s*(?P<key>[A-Z][A-Z0-9_,()]*(?:\([a-z]+\))?)\s*=(?P<value>.*)$")  # value stripped after
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)\s*%?$")
_SECONDS = re.compile(r"^\d{1,12}(?:\.\d{1,9})?$")
_EPOCH = re.compile(r"\((\d{1,12})\)")  # "Thu Aug 5 21:52:07 2010 (1281016327)": seconds since 1970 UTC
_LAST_EPOCH = 253_402_300_799  # 9999-12-31 23:59:59 UTC
# An epoch is an instant: a tzinfo that is not the UTC singleton, so the service leaves it as it is,
# where it reads a '-- Date' (the database's wall clock, tagged with the singleton) in the database's zone.
_EPOCH_ZONE = timezone(timedelta(0), "UTC")
_UNDATED = datetime(1970, 1, 1, tzinfo=_EPOCH_ZONE)  # until the capture's PeerWindowEnd is read


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
    # the two ends of the log shipping channel (hosts lower-cased when compared)
    primary_host: str | None = None
    primary_instance: str | None = None
    primary_member: int | None = None
    standby_host: str | None = None
    standby_instance: str | None = None
    standby_member: int | None = None
    log_stream_id: int | None = None
    # configured values and what the operating system granted
    hadr_timeout_seconds: int | None = None
    peer_window_seconds: int | None = None
    peer_wait_limit_seconds: int | None = None
    heartbeat_interval_seconds: int | None = None
    heartbeats_expected: int | None = None
    sock_send_requested_bytes: int | None = None
    sock_send_actual_bytes: int | None = None
    sock_recv_requested_bytes: int | None = None
    sock_recv_actual_bytes: int | None = None
    # the primary's log writes waiting for HADR (seconds; the count since activation)
    wait_current_seconds: float | None = None
    wait_recent_avg_seconds: float | None = None
    wait_accumulated_seconds: float | None = None
    wait_count: int | None = None
    # before 10.1: PeerWindowEnd in seconds since 1970 (0: never in peer state), and what dates the capture
    peer_window_end_epoch: int | None = None
    dated_by: str = "Date"
    # the standby's replay (10.1 and later): its position, the log received but not yet replayed (which a
    # takeover replays first) and HADR_SPOOL_LIMIT in pages (0: no spooling, -1: unlimited)
    replay_position: int | None = None
    recv_replay_gap_bytes: int | None = None
    spool_limit_pages: int | None = None

    @property
    def current_gap_bytes(self) -> int | None:
        """PRIMARY_LOG_POS - STANDBY_LOG_POS at the capture. On a standby the primary's position is the
        one its last heartbeat carried and can trail the standby's own: never below 0."""
        if self.primary_position is None or self.standby_position is None:
            return None
        return max(0, self.primary_position - self.standby_position)


@dataclass
class Parsed:
    samples: list[Sample] = field(default_factory=list)
    layouts: set[str] = field(default_factory=set)
    passed_over: int = 0
    notes: list[str] = field(default_factory=list)  # how captures without '-- Date' were dated


def _upper(text: str | None) -> str | None:
    return text.strip().upper().replace(" ", "_") if text and text.strip() else None


_MAX_POSITION = 2**63 - 1  # log positions (LSN, byte offsets): a 64-bit column
_MAX_BYTES = fields.MAX_SIZE_BYTES  # a log gap
_MAX_COUNT = 2**31 - 1  # counts, pages, standby numbers
# A HADR wait (the one under way, the recent average, the total since activation) is a duration: at
# most the import bounds' 10 years, as every stored duration is.
_MAX_WAIT_SECONDS = fields.MAX_DURATION_SECONDS


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


def _seconds(text: str, where: str) -> float | None:
    cleaned = text.strip()
    if not cleaned or cleaned.upper() == "NULL":
        return None
    if not _SECONDS.match(cleaned):
        raise RedoInputError(f"{where}: '{cleaned[:40]}' is not a number of seconds (db2pd writes 0.000598)")
    value = float(cleaned)
    if value > _MAX_WAIT_SECONDS:
        raise RedoInputError(
            f"{where}: {cleaned} s is over {_MAX_WAIT_SECONDS:,} s (10 years), the most a HADR wait can be"
        )
    return value


def _count(text: str, where: str, what: str, maximum: int = _MAX_COUNT) -> int | None:
    cleaned = text.strip()
    return None if not cleaned or cleaned.upper() == "NULL" else _int(cleaned, where, what, maximum)


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
    _note_dating(reader.parsed)
    if not reader.parsed.samples:
        raise RedoInputError(
            "no db2pd -hadr capture was found: expected 'Database Member 0 -- Database NAME -- ... -- Date ...' "
            "followed by HADR_ROLE = ... lines (10.1 and later), or 'HADR Information:' with a Role/State table "
            "(before 10.1)"
        )
    return reader.parsed


# The headings of the layout before 10.1 whose values come on the next line.
_OLD_HEADINGS = ("Role", "ConnectStatus", "PeerWindowEnd", "PrimaryFile", "StandByFile", "LocalHost", "RemoteHost")


class _Reader:
    """Reads a file line by line: the capture it is in, the sample being filled and, in the layout
    before 10.1, the heading whose values the next line holds."""

    def __init__(self) -> None:
        self.parsed = Parsed()
        self.header: dict | None = None  # the current capture's member, database and time
        self.current: Sample | None = None
        self.pending_heading: tuple[int, list[str]] | None = None

    def finish(self) -> None:
        """The sample being filled is complete (and dated, when its capture had no '-- Date')."""
        if self.current is not None:
            if self.current.at is _UNDATED:
                _date_by_peer_window(self.current, self.header)
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
        stripped = line.strip()
        if stripped.startswith("Database "):
            parts = [part.strip() for part in stripped.split(" -- ")]
            first = _DATABASE.match(parts[0])
            if first and len(parts) >= 3 and parts[1].startswith("Database ") and len(parts[1].split()) == 2:
                self.finish()
                member = _int(
                    first["member"], f"line {number}, Database Member", "a member number", fields.MAX_NUMBERED
                )
                date = next((part[5:].strip() for part in parts[3:] if part.startswith("Date ")), None)
                self.header = {"member": member, "db": parts[1].split()[1], "line": number, "date": date or None}
                return True
        if stripped.startswith("-- Date ") and self.header is not None and self.header["date"] is None:
            self.header["date"] = stripped[8:].strip() or None
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
    if header.get("date"):
        at = db2_time(header["date"], f"line {header['line']}, Date")
    elif layout == "before 10.1":
        at = _UNDATED  # dated by its PeerWindowEnd when the sample is complete
    else:
        raise RedoInputError(
            f"line {header['line']}: the capture has no '-- Date ...' after its database line, so it cannot be "
            "placed in time; capture the whole db2pd output"
        )
    return Sample(
        line=number, at=at, member=header["member"], database=header["db"], role=_upper(role) or "", layout=layout
    )


def _date_by_peer_window(sample: Sample, header: dict | None) -> None:
    """A capture before 10.1 without '-- Date': its time is PeerWindowEnd minus PeerWindow, in Peer
    state only (see the module's docstring); refused otherwise, naming the line and what is missing."""
    line = header["line"] if header else sample.line
    end, window = sample.peer_window_end_epoch, sample.peer_window_seconds
    if sample.state == "PEER" and end and window and end > window:
        sample.at = datetime.fromtimestamp(end - window, _EPOCH_ZONE)
        sample.dated_by = "PeerWindowEnd - PeerWindow"
        return
    if end is None:
        missing = "no 'PeerWindowEnd PeerWindow' lines (a layout without them)"
    elif not window:
        missing = "PeerWindow 0 (HADR_PEER_WINDOW not set: PeerWindowEnd is not renewed)"
    elif not end or end <= window:
        missing = f"PeerWindowEnd ({end}) not a time: never in Peer state"
    else:
        missing = f"state {sample.state or 'unknown'}, not Peer: its PeerWindowEnd is the last one, kept from before"
    raise RedoInputError(
        f"line {line}: the capture has no '-- Date ...' after its database line, and {missing}, so it cannot be "
        "placed in time (its ConnectTime is when the connection status began, not when db2pd ran); capture the "
        "whole db2pd output with the '-- Date' later db2pd levels write, or in Peer state with HADR_PEER_WINDOW set"
    )


def _note_dating(parsed: Parsed) -> None:
    dated = [sample for sample in parsed.samples if sample.dated_by != "Date"]
    if not dated:
        return
    lines = ", ".join(str(sample.line) for sample in dated[:8]) + (", ..." if len(dated) > 8 else "")
    parsed.notes.append(
        f"{format_count(len(dated), 'capture')} without '-- Date' (the layout before 10.1 of early fix packs), "
        f"lines {lines}: "
        "dated by PeerWindowEnd minus PeerWindow, the primary's last heartbeat before db2pd ran (to within one "
        "heartbeat interval), in UTC from its seconds since 1970."
    )


def _epoch(stripped: str, where: str) -> int | None:
    """The seconds in '(1281016327)' (None: none written; 0 is written before any peer state)."""
    found = _EPOCH.search(stripped)
    if found is None:
        return None
    value = int(found.group(1))
    if value > _LAST_EPOCH:
        raise RedoInputError(f"{where}: '({found.group(1)})' is not seconds since 1970 before the year 10000")
    return value


# NAME = value keys of 10.1 and later (MON_GET_HADR's column names where db2pd's differ)
_TEXTS = {
    "PRIMARY_MEMBER_HOST": "primary_host",
    "PRIMARY_INSTANCE": "primary_instance",
    "STANDBY_MEMBER_HOST": "standby_host",
    "STANDBY_INSTANCE": "standby_instance",
}
_COUNTS = {
    "HEARTBEAT_MISSED": ("heartbeats_missed", "a count"),
    "HEARTBEAT_EXPECTED": ("heartbeats_expected", "a count"),
    "STANDBY_RECV_BUF_SIZE(pages)": ("recv_buf_pages", "a number of pages"),
    "STANDBY_ID": ("standby_id", "a standby number"),
    "PRIMARY_MEMBER": ("primary_member", "a member number"),
    "STANDBY_MEMBER": ("standby_member", "a member number"),
    "LOG_STREAM_ID": ("log_stream_id", "a log stream number"),
    "HADR_TIMEOUT(seconds)": ("hadr_timeout_seconds", "a number of seconds"),
    "PEER_WINDOW(seconds)": ("peer_window_seconds", "a number of seconds"),
    "PEER_WAIT_LIMIT(seconds)": ("peer_wait_limit_seconds", "a number of seconds"),
    "HEARTBEAT_INTERVAL(seconds)": ("heartbeat_interval_seconds", "a number of seconds"),
    "LOG_HADR_WAIT_COUNT": ("wait_count", "a count of log writes"),
    "LOG_HADR_WAITS_TOTAL": ("wait_count", "a count of log writes"),
    "STANDBY_RECV_REPLAY_GAP(bytes)": ("recv_replay_gap_bytes", "a number of bytes"),
}
_BIG_COUNTS = {
    "wait_count",
    "recv_replay_gap_bytes",
}  # log writes since activation: past 2**31 on a busy database within weeks
_WAITS = {
    "LOG_HADR_WAIT_CUR(seconds)": "wait_current_seconds",
    "LOG_HADR_WAIT_RECENT_AVG(seconds)": "wait_recent_avg_seconds",
    "LOG_HADR_WAIT_ACCUMULATED(seconds)": "wait_accumulated_seconds",
}
_BUFFERS = {
    "SOCK_SEND_BUF_REQUESTED,ACTUAL(bytes)": ("sock_send_requested_bytes", "sock_send_actual_bytes"),
    "SOCK_RECV_BUF_REQUESTED,ACTUAL(bytes)": ("sock_recv_requested_bytes", "sock_recv_actual_bytes"),
}


def _apply_key(sample: Sample, key: str, value: str, where: str) -> None:
    value = value.strip()
    if key in _COUNTS:
        name, what = _COUNTS[key]
        maximum = _MAX_POSITION if name in _BIG_COUNTS else _MAX_COUNT
        setattr(sample, name, _count(value, f"{where}, {key}", what, maximum))
    elif key in _TEXTS:
        limit = 128 if key.endswith("INSTANCE") else 255  # Db2's column widths (MON_GET_HADR)
        setattr(sample, _TEXTS[key], value[:limit] if value and value.upper() != "NULL" else None)
    elif key in _WAITS:
        setattr(sample, _WAITS[key], _seconds(value, f"{where}, {key}"))
    elif key in _BUFFERS:
        _buffer_pair(sample, key, value, where)
    elif key == "HADR_STATE":
        sample.state = _upper(value)
    elif key == "HADR_SYNCMODE":
        sample.sync_mode = _upper(value)
    elif key == "HADR_CONNECT_STATUS":
        sample.connect_status = _upper(value.split()[0] if value else "")
    elif key == "HADR_LOG_GAP(bytes)":
        sample.log_gap_bytes = float(_int(value, f"{where}, {key}", "a number of bytes", _MAX_BYTES))
    elif key == "STANDBY_RECV_BUF_PERCENT":
        sample.recv_buf_percent = _percent(value, f"{where}, {key}")
    elif key == "STANDBY_SPOOL_LIMIT(pages)":
        unlimited = value.strip() == "-1"
        sample.spool_limit_pages = -1 if unlimited else _count(value, f"{where}, {key}", "a number of pages or -1")
    elif key in ("PRIMARY_LOG_FILE,PAGE,POS", "STANDBY_LOG_FILE,PAGE,POS", "STANDBY_REPLAY_LOG_FILE,PAGE,POS"):
        parts = [part.strip() for part in value.split(",")]
        if len(parts) != 3:
            raise RedoInputError(f"{where}, {key}: '{value[:80]}' is not 'S0000012.LOG, page, position'")
        position = _int(parts[2], f"{where}, {key}", "a log position in bytes", _MAX_POSITION)
        if key.startswith("PRIMARY"):
            sample.primary_file, sample.primary_position = parts[0], position
        elif key.startswith("STANDBY_REPLAY"):
            sample.replay_position = position
        else:
            sample.standby_file, sample.standby_position = parts[0], position


def _buffer_pair(sample: Sample, key: str, value: str, where: str) -> None:
    """'0, 46080': the size asked for (0: DB2_HADR_SOSNDBUF / SORCVBUF not set) and the size granted."""
    parts = [part.strip() for part in value.split(",")]
    if len(parts) != 2:
        raise RedoInputError(f"{where}, {key}: '{value[:80]}' is not 'requested bytes, granted bytes' (0, 46080)")
    requested, actual = _BUFFERS[key]
    setattr(sample, requested, _count(parts[0], f"{where}, {key}", "a number of bytes", _MAX_BYTES))
    setattr(sample, actual, _count(parts[1], f"{where}, {key}", "a number of bytes", _MAX_BYTES))


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
        if heading[-1] == "Timeout" and words[-1].isdigit():  # "Connected  Sun Apr 15 ... (1334547601) 120"
            sample.hadr_timeout_seconds = _int(words[-1], f"{where}, Timeout", "a number of seconds")
    elif heading[0] == "PeerWindowEnd":  # "Thu Aug 5 21:52:07 2010 (1281016327) 120"
        sample.peer_window_end_epoch = _epoch(stripped, f"{where}, PeerWindowEnd")
        if heading[-1] == "PeerWindow" and words and words[-1].isdigit():
            sample.peer_window_seconds = _int(words[-1], f"{where}, PeerWindow", "a number of seconds")
    elif heading[0] in ("LocalHost", "RemoteHost"):
        _old_host(sample, heading[0] == "LocalHost", words)
    elif heading[0] == "PrimaryFile" and len(words) >= 3:
        sample.primary_file = words[0]
        sample.primary_position = _int(words[2], f"{where}, PrimaryLSN", "a log position", _MAX_POSITION)
    elif heading[0] == "StandByFile" and len(words) >= 3:
        sample.standby_file = words[0]
        sample.standby_position = _int(words[2], f"{where}, StandByLSN", "a log position", _MAX_POSITION)
        if "StandByRcvBufUsed" in heading and len(words) >= 4:
            sample.recv_buf_percent = _percent(words[3], f"{where}, StandByRcvBufUsed")


def _old_host(sample: Sample, local: bool, words: list[str]) -> None:
    """Before 10.1 the hosts are named from the capture's side: on the primary, LocalHost is the
    primary's and RemoteHost (with RemoteInstance) the standby's; on the standby the other way round."""
    if not words:
        return
    primary_side = (sample.role == "PRIMARY") == local
    if primary_side:
        sample.primary_host = words[0][:255]
    else:
        sample.standby_host = words[0][:255]
    if not local and len(words) >= 3:
        if primary_side:  # RemoteHost and RemoteInstance name the same end
            sample.primary_instance = words[2][:128]
        else:
            sample.standby_instance = words[2][:128]
