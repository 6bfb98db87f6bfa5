"""A rehearsal capped at a link tier (issue 55, item 6): the tier's line rate (bit/s) shared by the
rehearsal's connections, one a thread, each paced at its share by the kernel (the probe's --fq-rate,
SO_MAX_PACING_RATE). A shaper on the real link shares the tier first in, first out across the threads;
pacing gives each thread a fixed share, which the plan's prediction models the same way (one queue per
thread drained at the tier's payload rate / threads)."""

from __future__ import annotations

from redolab.core.errors import FieldError
from redolab.core.units import ETHERNET_WIRE_BYTES, IP_PACKET_BYTES, format_bit_rate, format_count

MIN_FQ_RATE_BITS_PER_SECOND = 8000  # the least --fq-rate redoprobe takes (redoprobe/main.c)


def per_connection(cap_bits_per_second: int | None, connections: int) -> int | None:
    """Each connection's pacing rate (bit/s of IP packets, rounded down: together never over the tier);
    None when the rehearsal is not capped. The tier's line rate counts Ethernet's wire bytes, the
    kernel's pacing IP bytes: a connection paced at the tier's rate would carry 1538/1500 of it (in the
    lab, lags 8 % under the prediction), so it is paced at the tier's IP rate, 1500/1538 of it."""
    if not cap_bits_per_second:
        return None
    return cap_bits_per_second * IP_PACKET_BYTES // ETHERNET_WIRE_BYTES // max(1, connections)


def check_cap(cap_bits_per_second: int | None, connections: int, *, across_hops: bool) -> None:
    """422 naming the field when the tier cannot be shared as asked: to every destination at once (a tier
    is one link), or a share below what the probe can pace."""
    if not cap_bits_per_second:
        return
    if across_hops:
        raise FieldError(
            "cap_bits_per_second", "A tier is one link: rehearse at a tier to one destination, not to all at once.", 422
        )
    share = per_connection(cap_bits_per_second, connections) or 0
    if share < MIN_FQ_RATE_BITS_PER_SECOND:
        raise FieldError(
            "cap_bits_per_second",
            f"{format_bit_rate(cap_bits_per_second)} shared by {format_count(connections, 'thread')} is "
            f"{format_bit_rate(share)} a connection, under the {format_bit_rate(MIN_FQ_RATE_BITS_PER_SECOND)} the "
            "probe can pace: choose a faster tier.",
            422,
        )


def pacing_notes(cap_bits_per_second: int | None, cap_label: str, connections: int) -> list[str]:
    """What the rehearsal's notes say of its pacing (nothing when not capped)."""
    share = per_connection(cap_bits_per_second, connections)
    if share is None:
        return []
    named = cap_label and cap_label != format_bit_rate(cap_bits_per_second)
    tier = f"the {cap_label} tier's" if named else "the tier's"
    line = f"{tier} {format_bit_rate(cap_bits_per_second)} line rate, 1500 bytes of IP in every 1538 on the wire"
    if connections == 1:
        return [f"paced at {format_bit_rate(share)} of IP packets: {line}, for its one thread"]
    return [
        f"paced at {format_bit_rate(share)} of IP packets per connection: {line}, shared by {connections} threads; "
        "a shaper on the link would share it first in, first out"
    ]
