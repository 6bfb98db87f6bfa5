"""Recommended settings as copyable snippets, each line with the reason for its value (pure).
Units: bytes, packets.

Sources: seed 003 (socket buffers of SOCKET_BUFFER_BDP_MULTIPLE x BDP; txqueuelen on the sender and
netdev_max_backlog on the receiver: a 1 Gbit/s link at 100 ms wants a txqueuelen of at least 10,000,
the example pairs it with a backlog of 20,000), seed 000 (tcp_rmem / tcp_wmem maximum; an average redo
write above 1500 bytes: evaluate jumbo frames) and seed 001 (DB2_HADR_SOSNDBUF / SORCVBUF from the TCP
window, DB2_HADR_BUF_SIZE = 2 x LOGBUFSZ without data; from the largest log gap or a second of the peak
log rate with data; HADR_SYNCMODE from the hadrCalculator view). The Oracle Net lines start from the database release's
defaults and maximums (planning/oracle_net.py), not seed 003's dated DEFAULT_SDU_SIZE=32767.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from redolab.core.sources import IBM_HADR_SIMULATOR
from redolab.core.units import format_bytes
from redolab.environments.releases import Release
from redolab.hadr import recommend
from redolab.planning.network import SOCKET_BUFFER_RULE, packets_in_flight
from redolab.planning.oracle_net import SQLNET_TARGET, ExplicitGain, descriptor_line, oracle_net_lines

DEFAULT_QUEUE_PACKETS = 1000  # Linux's default netdev_max_backlog; txqueuelen defaults to 1000 today
JUMBO_MTU_BYTES = 9000
STANDARD_MTU_BYTES = 1500


@dataclass(frozen=True)
class HostValue:
    """One host's captured value of a setting and what the recommendation does to it."""

    host: str
    current: str | None  # as the host had it ("4096 131072 33554432"); None: never captured
    action: str  # keep | raise | set (not captured: the recommendation as it is)


@dataclass(frozen=True)
class SettingLine:
    line: str
    why: str
    recommended: str | None = None  # the value the rule gives, before any host's own is kept
    hosts: tuple[HostValue, ...] = ()  # each host's captured value next to it
    keep: bool = False  # every host already has the recommendation or more: nothing to apply

    def to_json(self) -> dict:
        return {
            "line": self.line,
            "why": self.why,
            "recommended": self.recommended,
            "keep": self.keep,
            "hosts": [{"host": h.host, "current": h.current, "action": h.action} for h in self.hosts],
        }


@dataclass(frozen=True)
class HostKernel:
    """One host's kernel settings as a run captured them (remote.hostinfo keys: tcp_rmem and tcp_wmem
    as [min, default, max] bytes, rmem_max, wmem_max, netdev_max_backlog, txqueuelen)."""

    host: str  # its name and role, as the card says it
    captured: dict
    where: str  # which run captured them, and when


@dataclass(frozen=True)
class Snippet:
    title: str
    target: str  # where the lines go
    lines: tuple[SettingLine, ...]

    @property
    def text(self) -> str:
        """The lines as they are pasted, each preceded by its reason as a comment; a line every host
        already meets is a comment too ("keep")."""
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
    hadr_pairs: tuple = ()  # hadr.pairs.PairView: the values the db2pd captures show, the starting point
    hosts: tuple[HostKernel, ...] = ()  # each host's captured kernel settings: never lowered
    release: Release | None = None  # the database release: the Oracle Net defaults and maximums
    transport_mode: str = "ASYNC"
    explicit_gain: ExplicitGain | None = None  # a run measured explicit socket buffers faster than autotuning

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
    snippets += _hadr(basis) if basis.platform == "hadr" else _oracle_net(basis)
    if basis.jumbo_worth_testing:
        snippets.append(_jumbo(basis))
    return snippets


def _kernel(basis: SettingsBasis) -> Snippet:
    buffer, size = basis.socket_buffer_bytes, format_bytes(basis.socket_buffer_bytes)
    hosts = basis.hosts
    return Snippet(
        "Kernel (primary and standby)",
        "/etc/sysctl.d/90-redolab.conf",
        (
            against_hosts(
                "net.core.rmem_max",
                "rmem_max",
                [buffer],
                f"caps an explicit receive buffer (setsockopt) at {size}; autotuned sockets follow tcp_rmem",
                hosts,
            ),
            against_hosts(
                "net.core.wmem_max",
                "wmem_max",
                [buffer],
                f"caps an explicit send buffer (setsockopt) at {size}; autotuned sockets follow tcp_wmem",
                hosts,
            ),
            against_hosts(
                "net.ipv4.tcp_rmem",
                "tcp_rmem",
                [4096, 87380, buffer],
                f"autotuning may grow the receive window to {SOCKET_BUFFER_RULE}",
                hosts,
            ),
            against_hosts(
                "net.ipv4.tcp_wmem",
                "tcp_wmem",
                [4096, 16384, buffer],
                f"autotuning may grow the send buffer to {SOCKET_BUFFER_RULE}",
                hosts,
            ),
            against_hosts(
                "net.core.netdev_max_backlog",
                "netdev_max_backlog",
                [2 * basis.queue_packets],
                "receive queue: twice the transmit queue, so bursts of a full window are not dropped",
                hosts,
            ),
        ),
    )


def _transmit_queue(basis: SettingsBasis) -> Snippet:
    packets = math.ceil(basis.bdp_bytes / basis.mtu_bytes)
    line = against_hosts(
        f"ip link set dev {basis.device} txqueuelen",
        "txqueuelen",
        [basis.queue_packets],
        f"one BDP is {packets:,} packets of {basis.mtu_bytes} bytes; a short queue drops them and TCP backs off",
        basis.hosts,
        separator=" ",
    )
    return Snippet(
        "Transmit queue (primary and standby)", "shell, as root (persist it in the interface configuration)", (line,)
    )


def _oracle_net(basis: SettingsBasis) -> list[Snippet]:
    """sqlnet.ora from the release's defaults (planning/oracle_net.py), and the SDU in the transport's
    connect descriptor when one is set."""
    lines = oracle_net_lines(
        release=basis.release,
        transport_mode=basis.transport_mode,
        socket_buffer_bytes=basis.socket_buffer_bytes,
        gain=basis.explicit_gain,
        rule=SOCKET_BUFFER_RULE,
    )
    items = tuple(SettingLine(line, why, recommended, keep=line.startswith("#")) for line, why, recommended in lines)
    snippets = [Snippet("Oracle Net (primary and standby)", SQLNET_TARGET, items)]
    descriptor = descriptor_line(basis.release, basis.transport_mode)
    if descriptor is not None:
        snippets.append(
            Snippet(
                "Redo transport connect descriptor",
                "tnsnames.ora on the primary (the standby's too, for role reversal): the LOG_ARCHIVE_DEST_n SERVICE",
                (SettingLine(*descriptor),),
            )
        )
    return snippets


def _hadr(basis: SettingsBasis) -> list[Snippet]:
    """The Db2 settings from the values in use (db2pd -hadr captures), never below them without saying
    why (hadr.recommend); the socket buffers from the bandwidth-delay rule."""
    views = list(basis.hadr_pairs)
    mode = basis.hadr_syncmode[0] if basis.hadr_syncmode else recommend.captured_sync_mode(views)
    found = {
        r.setting: r
        for r in recommend.recommendations(
            views, sync_mode=mode, buffer=basis.hadr_buffer, socket_buffer_bytes=basis.socket_buffer_bytes
        )
    }

    def line(setting: str) -> SettingLine:
        item = found[setting]
        why = item.why + (f" (in use: {item.captured})" if item.captured else "")
        if setting.startswith("DB2_HADR_SO"):
            why += f"; an explicit value switches off the kernel's autotuning for the HADR socket: {SOCKET_BUFFER_RULE}"
        return SettingLine(item.line, why)

    registry = Snippet(
        "Db2 HADR registry (primary and standby)",
        "db2set, then restart the instance",
        (line("DB2_HADR_SOSNDBUF"), line("DB2_HADR_SORCVBUF"), _hadr_buffer(basis.hadr_buffer)),
    )
    database = [line("HADR_TIMEOUT"), line("HADR_PEER_WINDOW")]
    if basis.hadr_syncmode is not None:
        mode, why = basis.hadr_syncmode
        database.insert(0, SettingLine(f"db2 update db cfg for <DBNAME> using HADR_SYNCMODE {mode}", why))
    return [registry, Snippet("Db2 HADR database configuration (primary and standby)", "db2 CLP", tuple(database))]


def _hadr_buffer(hadr_buffer: tuple[int, str] | None) -> SettingLine:
    if hadr_buffer is None:
        return SettingLine(
            "db2set DB2_HADR_BUF_SIZE=<2 x LOGBUFSZ>",
            f"standby receive buffer in 4 KiB pages: twice LOGBUFSZ ({IBM_HADR_SIMULATOR}: 4096 for a LOGBUFSZ "
            "of 2048); "
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


def _captured(value, fields: int) -> list[int] | None:
    """A captured value as its fields (an integer, or tcp_rmem's three), None when not read."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or len(value) != fields or not all(isinstance(v, int) for v in value):
        return None
    return value


def against_hosts(
    name: str, key: str, recommended: list[int], why: str, hosts: tuple[HostKernel, ...], *, separator: str = " = "
) -> SettingLine:
    """One setting's recommended value next to each host's captured one. The line never lowers a host:
    each field (tcp_rmem's min, default and max alike) is the highest of the recommendation and every
    host's current value, as one file serves both hosts. A host whose value is already at or above the
    recommendation in every field keeps it; when every host does, the line says "keep" and sets nothing."""
    shown = " ".join(map(str, recommended))
    target, currents = list(recommended), []
    for host in hosts:
        current = _captured(host.captured.get(key), len(recommended))
        currents.append((host, current))
        if current is not None:
            target = [max(t, c) for t, c in zip(target, current, strict=True)]
    values = tuple(
        HostValue(host.host, None, "set")
        if current is None
        else HostValue(host.host, " ".join(map(str, current)), "keep" if current == target else "raise")
        for host, current in currents
    )
    keeps = bool(currents) and all(
        c is not None and all(v >= r for v, r in zip(c, recommended, strict=True)) for _, c in currents
    )
    said = [f"recommended {shown}" if hosts else "no host's current value captured yet (a run captures them)"] + [
        f"{v.host}: {v.current} ({'keep' if keeps or v.action == 'keep' else 'raised'}; {host.where})"
        if v.current is not None
        else f"{v.host}: not captured ({host.where})"
        for v, (host, _) in zip(values, currents, strict=True)
    ]
    if keeps:
        return SettingLine(
            f"# keep: {name}{separator}(every host's own value, at or above {shown})",
            f"{why}; {'; '.join(said)}",
            shown,
            tuple(HostValue(v.host, v.current, "keep") for v in values),
            keep=True,
        )
    value = " ".join(map(str, target))
    raised = " (never below a host's own value)" if target != recommended else ""
    return SettingLine(f"{name}{separator}{value}", f"{why}{raised}; {'; '.join(said)}", shown, values)
