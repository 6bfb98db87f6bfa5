"""Capture a host's network settings at run time (kernel, MTU, buffers, congestion control)."""

from __future__ import annotations

from redolab.remote.transport import Transport

# A fixed script: the peer address, interface and probe file name arrive as positional arguments
# ($1..$3), quoted by the transport, so nothing a user typed is ever part of the script text. It
# also reports where the probe cache is and the cached probe's SHA-256: one SSH round trip per
# host before a run (each costs ~0.1 s on a non-interactive session).
SETTINGS_SCRIPT = r"""
peer="$1"; iface="$2"; probe="$3"
echo "home=$HOME"
if [ -n "$probe" ]; then
  echo "probe_sha256=$(sha256sum "$HOME/.cache/redolab/$probe" 2>/dev/null | cut -d ' ' -f 1)"
fi
echo "kernel=$(uname -sr)"
echo "arch=$(uname -m)"
echo "hostname=$(uname -n)"
dev="$iface"
if [ -z "$dev" ] && command -v ip >/dev/null 2>&1; then
  dev=$(ip route get "$peer" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n 1)
fi
echo "interface=$dev"
if [ -n "$dev" ] && [ -r "/sys/class/net/$dev/mtu" ]; then
  echo "mtu_bytes=$(cat "/sys/class/net/$dev/mtu")"
  echo "txqueuelen=$(cat "/sys/class/net/$dev/tx_queue_len")"
fi
for key in net/ipv4/tcp_rmem net/ipv4/tcp_wmem net/core/rmem_max net/core/wmem_max \
           net/ipv4/tcp_congestion_control net/ipv4/tcp_sack net/ipv4/tcp_window_scaling \
           net/core/netdev_max_backlog; do
  echo "${key##*/}=$(tr '\t' ' ' < "/proc/sys/$key" 2>/dev/null)"
done
"""

_INTEGER_KEYS = {
    "mtu_bytes",
    "txqueuelen",
    "rmem_max",
    "wmem_max",
    "tcp_sack",
    "tcp_window_scaling",
    "netdev_max_backlog",
}
_TRIPLE_KEYS = {"tcp_rmem", "tcp_wmem"}


def parse_settings(text: str) -> dict:
    """key=value lines -> a dict with numbers where numbers are meant (None when unreadable)."""
    settings: dict = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        value = value.strip()
        if key in _INTEGER_KEYS:
            settings[key] = int(value) if value.isdigit() else None
        elif key in _TRIPLE_KEYS:
            parts = value.split()
            settings[key] = [int(p) for p in parts] if len(parts) == 3 and all(p.isdigit() for p in parts) else None
        else:
            settings[key] = value or None
    return settings


async def capture_settings(
    transport: Transport, *, peer_address: str, interface: str | None, probe_name: str = ""
) -> dict:
    """The host's network settings; with probe_name also "home" and "probe_sha256" (not settings:
    the caller pops them before storing)."""
    result = await transport.run(["sh", "-c", SETTINGS_SCRIPT, "sh", peer_address, interface or "", probe_name])
    return parse_settings(result.stdout)
