"""The network a Db2 HADR calculator uses for one hop: the fastest one-stream run measured over it, else
its nominal link (said so), else what is missing. Units: bytes per second, seconds."""

from __future__ import annotations

from redolab.core.units import format_bit_rate
from redolab.hadr.calculator import Network


def measured_network(
    runs, *, link_rtt_seconds: float | None, rtt_owner: str = "the environment"
) -> tuple[Network | None, str, str | None, int | None]:
    """(network, its basis, what is missing, the run's id) from the fastest of one-stream `runs` (over
    the link before loopback, ASYNC before SYNC): its rate (bytes/s) and minimum RTT, else `link_rtt_seconds`
    (the link RTT of `rtt_owner`)."""
    over_link = [run for run in runs if not run.loopback]
    chosen = over_link or runs
    if not chosen:
        return None, "", "a measured network: run a one-stream test from the primary to the standby", None
    streaming = [run for run in chosen if run.mode == "async"]  # a SYNC run's rate includes its waits
    best = max(streaming or chosen, key=lambda run: run.bytes_per_second)
    rtt = best.metrics.rtt_min_seconds or link_rtt_seconds
    if rtt is None:
        return None, "", f"the round trip time: set the link RTT on {rtt_owner}, or run a test that reports it", None
    basis = f"{best.source.label}; RTT {rtt * 1000:,.3f} ms"
    if best.loopback:
        basis += " (a loopback run on the redolab machine, not the standby link)"
    if best.mode != "async":
        basis += " (a SYNC run: its rate includes the waits for acknowledgements; use an ASYNC run)"
    return Network(best.bytes_per_second, rtt), basis, None, best.id


NOMINAL = "the nominal link"


def nominal_network(destination) -> tuple[Network | None, str, str | None]:
    """A hop no one-stream run measured: its nominal link (bandwidth, RTT), said so; else what is missing."""
    bandwidth, rtt = destination.link_bandwidth_bits_per_second, destination.link_rtt_seconds
    if bandwidth and rtt is not None:
        basis = (
            f"{NOMINAL} of '{destination.name}': {format_bit_rate(bandwidth)}, RTT {rtt * 1000:,.3f} ms (no "
            "one-stream run measured this hop)"
        )
        return Network(bandwidth / 8, rtt), basis, None
    needs = f"a network for '{destination.name}': run a one-stream test from the primary to one of its hosts, "
    return None, "", needs + "or set its nominal link bandwidth and RTT"
