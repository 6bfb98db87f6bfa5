"""Writes `db2pd -db DBNAME -hadr` output in IBM's documented layout for 10.1 and later (Db2 11.1/11.5
knowledge center, "db2pd - Monitor and troubleshoot Db2 database", -hadr parameter): a database line
with its "-- Date MM/DD/YYYY HH:MM:SS", then one block of `NAME = value` lines per standby, names
right-aligned on the "=", fields in db2pd's order. Values are the test's own; nothing is copied."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

WIDTH = len("SOCK_SEND_BUF_REQUESTED,ACTUAL(bytes)")  # the longest name: db2pd aligns the others to it


@dataclass
class Side:
    """One HADR pair seen from one side at one capture (the test's numbers)."""

    role: str  # PRIMARY or STANDBY
    at: datetime
    database: str = "SALESDB"
    primary_host: str = "db2a.example.net"
    standby_host: str = "db2b.example.net"
    instance: str = "db2sales"
    sync_mode: str = "NEARSYNC"
    state: str = "PEER"
    connect_status: str = "CONNECTED"
    standby_id: int = 1
    heartbeat_interval: int = 15
    heartbeats_missed: int = 0
    heartbeats_expected: int = 480
    timeout: int = 60
    peer_wait_limit: int = 0
    wait_current: str = "0.000"
    wait_recent_avg: str = "0.000412"
    wait_accumulated: str = "824.311"
    wait_count: int = 2_000_517
    send_buffer: tuple[int, int] = (0, 87040)
    receive_buffer: tuple[int, int] = (0, 374400)
    primary_pos: int = 41_943_040_000
    standby_pos: int = 41_943_040_000
    log_gap: int = 0
    recv_buf_pages: int = 4096
    recv_buf_percent: int = 0
    peer_window: int = 120
    replay_pos: int | None = None  # the standby's replay position (None: where it received up to)
    recv_replay_gap: int = 0
    spool_limit: int = 0

    @property
    def replayed(self) -> int:
        return self.standby_pos if self.replay_pos is None else self.replay_pos

    def lines(self) -> list[str]:
        page = lambda pos: (pos // 4096) % 10_000  # noqa: E731 - the page within the file, for the look
        stamp = f"{self.at:%m/%d/%Y %H:%M:%S}.000000 ({int(self.at.timestamp())})"
        fields = [
            ("HADR_ROLE", self.role), ("REPLAY_TYPE", "PHYSICAL"), ("HADR_SYNCMODE", self.sync_mode),
            ("STANDBY_ID", str(self.standby_id)), ("LOG_STREAM_ID", "0"), ("HADR_STATE", self.state),
            ("HADR_FLAGS", ""), ("PRIMARY_MEMBER_HOST", self.primary_host), ("PRIMARY_INSTANCE", self.instance),
            ("PRIMARY_MEMBER", "0"), ("STANDBY_MEMBER_HOST", self.standby_host), ("STANDBY_INSTANCE", self.instance),
            ("STANDBY_MEMBER", "0"), ("HADR_CONNECT_STATUS", self.connect_status), ("HADR_CONNECT_STATUS_TIME", stamp),
            ("HEARTBEAT_INTERVAL(seconds)", str(self.heartbeat_interval)),
            ("HEARTBEAT_MISSED", str(self.heartbeats_missed)), ("HEARTBEAT_EXPECTED", str(self.heartbeats_expected)),
            ("HADR_TIMEOUT(seconds)", str(self.timeout)), ("TIME_SINCE_LAST_RECV(seconds)", "2"),
            ("PEER_WAIT_LIMIT(seconds)", str(self.peer_wait_limit)), ("LOG_HADR_WAIT_CUR(seconds)", self.wait_current),
            ("LOG_HADR_WAIT_RECENT_AVG(seconds)", self.wait_recent_avg),
            ("LOG_HADR_WAIT_ACCUMULATED(seconds)", self.wait_accumulated),
            ("LOG_HADR_WAIT_COUNT", str(self.wait_count)),
            ("SOCK_SEND_BUF_REQUESTED,ACTUAL(bytes)", f"{self.send_buffer[0]}, {self.send_buffer[1]}"),
            ("SOCK_RECV_BUF_REQUESTED,ACTUAL(bytes)", f"{self.receive_buffer[0]}, {self.receive_buffer[1]}"),
            ("PRIMARY_LOG_FILE,PAGE,POS", f"S0000150.LOG, {page(self.primary_pos)}, {self.primary_pos}"),
            ("STANDBY_LOG_FILE,PAGE,POS", f"S0000150.LOG, {page(self.standby_pos)}, {self.standby_pos}"),
            ("HADR_LOG_GAP(bytes)", str(self.log_gap)),
            ("STANDBY_REPLAY_LOG_FILE,PAGE,POS", f"S0000150.LOG, {page(self.replayed)}, {self.replayed}"),
            ("STANDBY_RECV_REPLAY_GAP(bytes)", str(self.recv_replay_gap)),
            ("PRIMARY_LOG_TIME", stamp), ("STANDBY_LOG_TIME", stamp), ("STANDBY_REPLAY_LOG_TIME", stamp),
            ("STANDBY_RECV_BUF_SIZE(pages)", str(self.recv_buf_pages)),
            ("STANDBY_RECV_BUF_PERCENT", str(self.recv_buf_percent)),
            ("STANDBY_SPOOL_LIMIT(pages)", str(self.spool_limit)),
            ("STANDBY_SPOOL_PERCENT", "NULL"), ("STANDBY_ERROR_TIME", "NULL"),
            ("PEER_WINDOW(seconds)", str(self.peer_window)),
            ("PEER_WINDOW_END", stamp if self.peer_window else "NULL"), ("READS_ON_STANDBY_ENABLED", "N"),
        ]  # fmt: skip
        return [f"{name:>{WIDTH}} = {value}".rstrip() if value else f"{name:>{WIDTH}} =" for name, value in fields]


def capture(sides: list[Side], member: int = 0) -> list[str]:
    """One run of `db2pd -db NAME -hadr` on one host: the database line, then a block per standby."""
    first = sides[0]
    status = "Active" if first.role == "PRIMARY" else "Standby"
    lines = ["", f"Database Member {member} -- Database {first.database} -- {status} -- Up 3 days 04:11:09 -- "
             f"Date {first.at:%m/%d/%Y %H:%M:%S}", ""]  # fmt: skip
    for side in sides:
        lines += [*side.lines(), ""]
    return lines


def render(captures: list[list[Side]], *, crlf: bool = False, indent: str = "", separator: str | None = None) -> str:
    """Several captures in one file, as a loop appending them writes it; `indent` pads every line
    (a capture pasted from a mail or a wiki), `separator` is the loop's own line between captures."""
    lines: list[str] = []
    for number, sides in enumerate(captures):
        if separator is not None:
            lines += [separator.format(number=number + 1)]
        lines += capture(sides)
    ending = "\r\n" if crlf else "\n"
    return ending.join(indent + line if line else line for line in lines) + ending
