"""Read and set a host's TCP buffer limits (net.ipv4.tcp_rmem / tcp_wmem) for kernel sweeps.

The values are per network namespace and in memory only (sysctl -w, never sysctl.conf). Setting
them needs root: through `sudo -n` when the SSH user is not root, so a missing sudo rule fails at
once with sudo's own message instead of waiting for a password.
"""

from __future__ import annotations

import shlex

from redolab.remote.transport import Transport, TransportError

Buffers = dict[str, list[int]]  # {"tcp_rmem": [min, default, max], "tcp_wmem": [...]}


async def read_buffers(transport: Transport) -> Buffers:
    result = await transport.run(["cat", "/proc/sys/net/ipv4/tcp_rmem", "/proc/sys/net/ipv4/tcp_wmem"], timeout=20)
    lines = result.stdout.split("\n")
    try:
        rmem, wmem = ([int(part) for part in line.split()] for line in lines[:2])
    except ValueError:
        rmem = wmem = []
    if result.exit_status != 0 or len(rmem) != 3 or len(wmem) != 3:
        raise TransportError(
            f"could not read net.ipv4.tcp_rmem/tcp_wmem on {transport.name}: "
            f"{(result.stderr or result.stdout).strip() or 'unexpected output'}"
        )
    return {"tcp_rmem": rmem, "tcp_wmem": wmem}


async def privilege(transport: Transport) -> list[str]:
    """The prefix that makes a command root: none for root, else `sudo -n` (ask once per host)."""
    result = await transport.run(["id", "-u"], timeout=20)
    return [] if result.stdout.strip() == "0" else ["sudo", "-n"]


async def set_buffers(transport: Transport, buffers: Buffers, *, prefix: list[str]) -> None:
    """prefix: what `privilege` returned for this host."""
    argv = [*prefix, "sysctl", "-w", *sysctl_assignments(buffers["tcp_rmem"], buffers["tcp_wmem"])]
    result = await transport.run(argv, timeout=20)
    if result.exit_status != 0:
        detail = (result.stderr or result.stdout).strip() or f"exit status {result.exit_status}"
        hint = " (the SSH user needs root, or a sudo rule for sysctl without a password)" if argv[0] == "sudo" else ""
        raise TransportError(f"could not set net.ipv4.tcp_rmem/tcp_wmem on {transport.name}: {detail}{hint}")


def kernel_triple(original: list[int], maximum: int) -> list[int]:
    """tcp_rmem/tcp_wmem with a new maximum: the host's own minimum and default are kept (lowered
    to the maximum when above it)."""
    low, default, _ = original
    return [min(low, maximum), min(default, maximum), maximum]


def sysctl_assignments(rmem: list[int], wmem: list[int]) -> list[str]:
    return [
        f"net.ipv4.tcp_rmem={' '.join(map(str, rmem))}",
        f"net.ipv4.tcp_wmem={' '.join(map(str, wmem))}",
    ]


def manual_kernel_commands(maxima: list[int]) -> list[str]:
    """What to run by hand, as root on both hosts, when redolab may not change kernel settings:
    note the current values, set each maximum before its test, put the originals back at the end.
    The minimum and default shown are Linux's usual ones; keep your hosts' own."""
    lines = ["sysctl net.ipv4.tcp_rmem net.ipv4.tcp_wmem   # note these, to put them back afterwards"]
    for maximum in maxima:
        assignments = sysctl_assignments(
            kernel_triple([4096, 131072, 0], maximum), kernel_triple([4096, 16384, 0], maximum)
        )
        lines.append("sysctl -w " + " ".join(shlex.quote(a) for a in assignments))
    return lines
