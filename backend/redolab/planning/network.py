"""Socket buffers and TCP windows (pure). Units: bytes, seconds, bits or bytes per second.

Sources: seed 003 (bandwidth-delay product; socket buffers of SOCKET_BUFFER_BDP_MULTIPLE x BDP: 1 Gbit/s
and 25 ms give a BDP of 3,125,000 bytes and buffers of 9,375,000 bytes) and seed 001 (TCP window = send rate x
round-trip time: 2.02 MB/s, where MB means MiB, and 27.7 ms give about 58,672 bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SOCKET_BUFFER_BDP_MULTIPLE = 3  # seed 003: "3 times the Bandwidth Delay Product"
SOCKET_BUFFER_RULE = f"{SOCKET_BUFFER_BDP_MULTIPLE} x BDP"  # the rule as every page, report and snippet says it


@dataclass(frozen=True)
class BandwidthDelay:
    bandwidth_bits_per_second: float
    rtt_seconds: float
    bdp_bytes: int
    socket_buffer_bytes: int


def bandwidth_delay(*, bandwidth_bits_per_second: float, rtt_seconds: float) -> BandwidthDelay:
    """BDP = bandwidth (bit/s) / 8 x RTT (s), in bytes; the recommended socket buffer is
    SOCKET_BUFFER_BDP_MULTIPLE x BDP."""
    require_positive(bandwidth_bits_per_second, "bandwidth")
    require_positive(rtt_seconds, "round-trip time")
    bdp = round(bandwidth_bits_per_second / 8 * rtt_seconds)
    return BandwidthDelay(bandwidth_bits_per_second, rtt_seconds, bdp, bdp * SOCKET_BUFFER_BDP_MULTIPLE)


def tcp_window_bytes(*, send_bytes_per_second: float, rtt_seconds: float) -> int:
    """The TCP window a sender needs to keep `send_bytes_per_second` in flight over `rtt_seconds`."""
    require_positive(send_bytes_per_second, "send rate")
    require_positive(rtt_seconds, "round-trip time")
    return round(send_bytes_per_second * rtt_seconds)


def packets_in_flight(*, bdp_bytes: float, mtu_bytes: int) -> int:
    """How many MTU-sized packets one BDP holds: the floor for a device queue (seed 003)."""
    require_positive(mtu_bytes, "MTU")
    return math.ceil(bdp_bytes / mtu_bytes)


def require_positive(value: float, what: str) -> None:
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"the {what} must be greater than zero (got {value})")
