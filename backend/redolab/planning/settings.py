"""Recommended settings as copyable snippets, each line with the reason for its value (pure).
Units: bytes, packets.

Sources: seed 003 (socket buffers of SOCKET_BUFFER_BDP_MULTIPLE x BDP in sqlnet.ora RECV_BUF_SIZE / SEND_BUF_SIZE,
DEFAULT_SDU_SIZE=32767, txqueuelen on the sender and netdev_max_backlog on the receiver: a 1 Gbit/s
link at 100 ms wants a txqueuelen of at least 10,000, the example pairs it with a backlog of
20,000), seed 000 (tcp_rmem / tcp_wmem maximum; an average redo write above 1500 bytes: evaluate
jumbo frames) and seed 001 (DB2_HADR_SOSNDBUF / SORCVBUF from the TCP window, DB2_HADR_BUF_SIZE
= 2 x LOGBUFSZ without data; from the largest log gap or a second of the peak log rate with data;
HADR_SYNCMODE from the hadrCalculator view).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from redolab.core.units import format_bytes
from redolab.planning.network import SOCKET_BUFFER_RULE, packets_in_flight

DEFAULT_QUEUE_PACKETS = 1000  # Linux's default netdev_max_backlog; txqueuelen defaults to 1000 today
JUMBO_MTU_BYTES = 9000
STANDARD_MTU_BYTES = 1500


@dataclass(frozen=True)
class SettingLine:
    line: str
    why: str


@dataclass(frozen=True)
class Snippet:
    title: str
    target: str  # where the lines go
    lines: tuple[SettingLine, ...]

    @property
    def text(self) -> str:
        """The lines as they are pasted, each preceded by its reason as a comment."""
        return "\n".join(f"# {item.why}\n{item.line}" for item in self.lines)


@dataclass(frozen=True)
class SettingsBasis:
    """What the recommended settings are sized from. Units: bytes."""

    platform: str  # dataguard | hadr
    socket_buffer_bytes: int
    bdp_bytes: int
    mtu_bytes: int = STANDARD_MTU_BYTES
    interface: str | None = None
    avg_redo_write_bytes: float | None = None
    hadr_buffer: tuple[int, str] | None = None  # DB2_HADR_BUF_SIZE pages and why
    hadr_syncmode: tuple[str, str] | None = None  # HADR_SYNCMODE and why

    @property
    def queue_packets(self) -> int:
        """The transmit queue: one BDP of packets, rounded up to thousands, never below the default."""
        packets = packets_in_flight(bdp_bytes=self.bdp_bytes, mtu_bytes=self.mtu_bytes)
        return max(DEFAULT_QUEUE_PACKETS, math.ceil(packets / 1000) * 1000)

    @property
    def device(self) -> str:
        return self.interface or "<data interface>"

    @property
    def jumbo_worth_testing(self) -> bool:
        """The average redo write is more than one standard frame and the path is not jumbo yet."""
        write = self.avg_redo_write_bytes
        return write is not None and write > STANDARD_MTU_BYTES and self.mtu_bytes < JUMBO_MTU_BYTES


def recommended_snippets(**basis) -> list[Snippet]:
    """Kernel, device queue, database and MTU settings for socket buffers of `socket_buffer_bytes`
    (the keywords of SettingsBasis)."""
    return snippets_for(SettingsBasis(**basis))


def snippets_for(basis: SettingsBasis) -> list[Snippet]:
    snippets = [_kernel(basis), _transmit_queue(basis)]
    snippets += _hadr(basis) if basis.platform == "hadr" else [_oracle_net(basis)]
    if basis.jumbo_worth_testing:
        snippets.append(_jumbo(basis))
    return snippets


def _kernel(basis: SettingsBasis) -> Snippet:
    buffer, size = basis.socket_buffer_bytes, format_bytes(basis.socket_buffer_bytes)
    return Snippet(
        "Kernel (primary and standby)",
        "/etc/sysctl.d/90-redolab.conf",
        (
            SettingLine(
                f"net.core.rmem_max = {buffer}", f"lets a socket be granted the {size} receive buffer asked for"
            ),
            SettingLine(f"net.core.wmem_max = {buffer}", f"lets a socket be granted the {size} send buffer asked for"),
            SettingLine(
                f"net.ipv4.tcp_rmem = 4096 87380 {buffer}",
                f"autotuning may grow the receive window to {SOCKET_BUFFER_RULE}",
            ),
            SettingLine(
                f"net.ipv4.tcp_wmem = 4096 16384 {buffer}",
                f"autotuning may grow the send buffer to {SOCKET_BUFFER_RULE}",
            ),
            SettingLine(
                f"net.core.netdev_max_backlog = {2 * basis.queue_packets}",
                "receive queue: twice the transmit queue, so bursts of a full window are not dropped",
            ),
        ),
    )


def _transmit_queue(basis: SettingsBasis) -> Snippet:
    return Snippet(
        "Transmit queue (primary and standby)",
        "shell, as root (persist it in the interface configuration)",
        (
            SettingLine(
                f"ip link set dev {basis.device} txqueuelen {basis.queue_packets}",
                f"one BDP is {math.ceil(basis.bdp_bytes / basis.mtu_bytes):,} packets of {basis.mtu_bytes} bytes; "
                "a short queue drops them and TCP backs off",
            ),
        ),
    )


def _oracle_net(basis: SettingsBasis) -> Snippet:
    buffer = basis.socket_buffer_bytes
    return Snippet(
        "Oracle Net (primary and standby)",
        "sqlnet.ora",
        (
            SettingLine(f"RECV_BUF_SIZE={buffer}", f"socket receive buffer for redo transport: {SOCKET_BUFFER_RULE}"),
            SettingLine(f"SEND_BUF_SIZE={buffer}", f"socket send buffer for redo transport: {SOCKET_BUFFER_RULE}"),
            SettingLine("DEFAULT_SDU_SIZE=32767", "larger session data units for bulk redo (seed 003)"),
        ),
    )


def _hadr(basis: SettingsBasis) -> list[Snippet]:
    buffer = basis.socket_buffer_bytes
    registry = Snippet(
        "Db2 HADR registry (primary and standby)",
        "db2set, then restart the instance",
        (
            SettingLine(f"db2set DB2_HADR_SOSNDBUF={buffer}", f"HADR socket send buffer: {SOCKET_BUFFER_RULE}"),
            SettingLine(f"db2set DB2_HADR_SORCVBUF={buffer}", f"HADR socket receive buffer: {SOCKET_BUFFER_RULE}"),
            _hadr_buffer(basis.hadr_buffer),
        ),
    )
    database = [
        SettingLine(
            "db2 update db cfg for <DBNAME> using HADR_TIMEOUT 120",
            "seconds without a heartbeat before the pair is disconnected: long enough for a WAN hiccup, the "
            "same on both databases (SQL1768N reason 7 when they differ)",
        ),
        SettingLine(
            "db2 update db cfg for <DBNAME> using HADR_PEER_WINDOW 120",
            "SYNC and NEARSYNC only: how long the primary keeps committing as if in peer state after the "
            "standby is lost (protection against data loss for that long, at the cost of commits waiting)",
        ),
    ]
    if basis.hadr_syncmode is not None:
        mode, why = basis.hadr_syncmode
        database.insert(0, SettingLine(f"db2 update db cfg for <DBNAME> using HADR_SYNCMODE {mode}", why))
    return [registry, Snippet("Db2 HADR database configuration (primary and standby)", "db2 CLP", tuple(database))]


def _hadr_buffer(hadr_buffer: tuple[int, str] | None) -> SettingLine:
    if hadr_buffer is None:
        return SettingLine(
            "db2set DB2_HADR_BUF_SIZE=<2 x LOGBUFSZ>",
            "standby receive buffer in 4 KiB pages: twice LOGBUFSZ (seed 001: 4096 for a LOGBUFSZ of 2048); "
            "import db2pd -hadr captures or log history for a size from the data",
        )
    pages, why = hadr_buffer
    return SettingLine(
        f"db2set DB2_HADR_BUF_SIZE={pages}",
        f"standby receive buffer in 4 KiB pages ({format_bytes(pages * 4096)}): {why}",
    )


def _jumbo(basis: SettingsBasis) -> Snippet:
    return Snippet(
        "MTU (evaluate; every hop of the path must carry it)",
        "shell, as root, on primary and standby",
        (
            SettingLine(
                f"ip link set dev {basis.device} mtu {JUMBO_MTU_BYTES}",
                f"the average redo write is {basis.avg_redo_write_bytes:,.0f} bytes, more than one "
                f"{STANDARD_MTU_BYTES}-byte frame: test jumbo frames, then compare the runs",
            ),
        ),
    )
