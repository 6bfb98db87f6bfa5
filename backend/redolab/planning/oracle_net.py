"""The Oracle Net lines of the recommended settings, from the database release's defaults and maximums
(pure). Units: bytes.

Sources, per release (Oracle Net Services Administrator's Guide, "Configuring Session Data Unit", and the
Net Services Reference, DEFAULT_SDU_SIZE):
- 10g: 512 to 32767 bytes, default 2048.
- 11.1: 512 to 32767, default 8192.
- 11.2: 512 to 65535, default 8192 (docs.oracle.com/cd/E11882_01/network.112/e41945/performance.htm).
- 12.1 to 21c: 512 to 2097152 (2 MiB), default 8192.
- 23ai and later: the same range; "The default SDU size for the client is 8192 bytes and the server is
  65536 bytes" (docs.oracle.com/en/database/oracle/oracle-database/23/netag/configuring-session-data-unit.html).
From 11g, Data Guard's ASYNC redo transport and gap resolution send in bulk: "The SDU size limit ... does not
apply to these bulk data transfers" (the same chapter), so the SDU matters for SYNC and FASTSYNC, where each
commit's redo goes out in SDU-sized units. Oracle's MAA note on Data Guard network tuning (MOS 2064368.1)
sets SDU=65535 for synchronous transport; redolab never lowers the release's own default below it.

TCP.NODELAY=YES (Net Services Reference: default yes in current releases) is written explicitly: a copied
sqlnet.ora with NO adds Nagle's delay to every SYNC commit. An explicit RECV_BUF_SIZE / SEND_BUF_SIZE calls
setsockopt(SO_RCVBUF / SO_SNDBUF), which "disables automatic tuning of that socket's receive buffer size"
(Linux Documentation/networking/ip-sysctl.rst, tcp_rmem; likewise tcp_wmem): an explicit value below what
autotuning reaches caps throughput. They are recommended only where a run on this path measured them faster.
"""

from __future__ import annotations

from dataclasses import dataclass

from redolab.environments.releases import Release

SYNC_SDU_BYTES = 65535  # MOS 2064368.1's step for synchronous redo transport
EXPLICIT_GAIN_PERCENT = 5.0  # an explicit buffer must beat autotuning by more than run-to-run noise
SQLNET_TARGET = (
    "sqlnet.ora on the primary and every standby ($ORACLE_HOME/network/admin; the standby's is the server "
    "side of dynamically registered services)"
)


@dataclass(frozen=True)
class SduLimits:
    client_default: int
    server_default: int
    maximum: int
    source: str


def sdu_limits(release: Release) -> SduLimits:
    """The release's SDU defaults and maximum (bytes)."""
    if release < Release(11, 1):
        return SduLimits(2048, 2048, 32767, f"Oracle Net {release.label}: default 2048, maximum 32767")
    if release < Release(11, 2):
        return SduLimits(8192, 8192, 32767, "Oracle Net 11.1: default 8192, maximum 32767")
    if release < Release(12, 1):
        return SduLimits(8192, 8192, 65535, "Oracle Net 11.2: default 8192, maximum 65535")
    if release < Release(23):
        return SduLimits(8192, 8192, 2097152, f"Oracle Net {release.label}: default 8192, maximum 2 MiB")
    return SduLimits(8192, 65536, 2097152, f"Oracle Net {release.label}: client 8192, server 65536, maximum 2 MiB")


@dataclass(frozen=True)
class ExplicitGain:
    """A single-stream run with an explicit socket buffer that beat the best autotuned one on this path."""

    sockbuf_bytes: int
    gain_percent: float
    explicit_run: int
    autotuned_run: int


def explicit_gain(runs) -> ExplicitGain | None:
    """From single-connection ASYNC runs over the link (runs.measured.MeasuredRun): the best run with an
    explicit buffer against the best autotuned one, when it is more than EXPLICIT_GAIN_PERCENT faster."""
    single = [r for r in runs if r.mode == "async" and r.conns == 1 and not r.loopback]
    explicit = max((r for r in single if r.sockbuf_bytes), key=lambda r: r.bytes_per_second, default=None)
    autotuned = max((r for r in single if not r.sockbuf_bytes), key=lambda r: r.bytes_per_second, default=None)
    if explicit is None or autotuned is None or autotuned.bytes_per_second <= 0:
        return None
    gain = (explicit.bytes_per_second / autotuned.bytes_per_second - 1) * 100
    if gain <= EXPLICIT_GAIN_PERCENT:
        return None
    return ExplicitGain(explicit.sockbuf_bytes, gain, explicit.id, autotuned.id)


def sdu_value(release: Release | None, transport_mode: str) -> tuple[int | None, str]:
    """The SDU to set (None: leave the release's default) and why."""
    if release is None:
        return None, (
            "the database release is not known: enter it on the environment (or collect: V$INSTANCE.VERSION) "
            "for an SDU from its default and maximum"
        )
    limits = sdu_limits(release)
    floor = max(limits.client_default, limits.server_default)
    if transport_mode in ("SYNC", "FASTSYNC"):
        value = max(floor, min(SYNC_SDU_BYTES, limits.maximum))
        return value, (
            f"{transport_mode} sends each commit's redo in SDU-sized units: {SYNC_SDU_BYTES} for synchronous "
            f"transport (MOS 2064368.1), never below the release's default ({limits.source})"
        )
    if release < Release(11, 1):
        return limits.maximum, f"ASYNC redo on {release.label} is sent in SDU units: the maximum ({limits.source})"
    return None, (
        f"ASYNC redo transport sends in bulk, which the SDU does not limit (11g and later): keep the "
        f"release's default ({limits.source})"
    )


def oracle_net_lines(
    *, release: Release | None, transport_mode: str, socket_buffer_bytes: int, gain: ExplicitGain | None, rule: str
) -> list[tuple[str, str, str | None]]:
    """(line, why, recommended) for sqlnet.ora: the SDU, TCP.NODELAY and the socket buffers."""
    lines = []
    sdu, why = sdu_value(release, transport_mode)
    if sdu is None:
        default = sdu_limits(release).server_default if release else None
        lines.append((f"# keep: DEFAULT_SDU_SIZE{f' (the default, {default})' if default else ''}", why, None))
    else:
        lines.append((f"DEFAULT_SDU_SIZE={sdu}", why, str(sdu)))
    lines.append(
        (
            "TCP.NODELAY=YES",
            "no Nagle delay on the transport's small writes (the default in current releases: said explicitly, "
            "as a copied sqlnet.ora with NO would delay every SYNC commit)",
            "YES",
        )
    )
    if gain is None:
        lines.append(
            (
                "# not set: RECV_BUF_SIZE, SEND_BUF_SIZE (the sockets autotune)",
                "an explicit socket buffer switches off Linux's autotuning for that socket; no single-stream "
                "run on this path measured an explicit buffer faster than autotuning, so the kernel maximum "
                f"above lets autotuning grow each socket to {rule}",
                None,
            )
        )
        return lines
    size = max(socket_buffer_bytes, gain.sockbuf_bytes)
    why = (
        f"run #{gain.explicit_run} with an explicit {gain.sockbuf_bytes:,}-byte buffer carried "
        f"{gain.gain_percent:.0f} % more than autotuned run #{gain.autotuned_run} on this path; an explicit "
        f"value switches off autotuning for the socket, so it is at least {rule}"
    )
    lines += [(f"RECV_BUF_SIZE={size}", f"socket receive buffer: {why}", str(size))]
    lines += [(f"SEND_BUF_SIZE={size}", f"socket send buffer: {why}", str(size))]
    return lines


def descriptor_line(release: Release | None, transport_mode: str) -> tuple[str, str] | None:
    """The SDU in the transport's connect descriptor (LOG_ARCHIVE_DEST_n SERVICE): None when none is set."""
    sdu, _ = sdu_value(release, transport_mode)
    if sdu is None:
        return None
    return (
        f"(DESCRIPTION=(SDU={sdu})(ADDRESS=(PROTOCOL=TCP)(HOST=<standby>)(PORT=<port>))"
        "(CONNECT_DATA=(SERVICE_NAME=<standby service>)))",
        "the session takes the smaller of the two ends' SDU: set it in the redo transport's connect descriptor "
        "too (the standby's listener.ora SID_DESC with SDU= for a statically registered service)",
    )
