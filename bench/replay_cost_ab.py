#!/usr/bin/env python3
"""Where the replay's sender CPU goes at one rate: interleaved runs of the replay and of `--rate`
(the same bytes in the same 1 MiB sends over the same time), each repetition in a turned order, the
sender's CPU seconds per GiB of each and each repetition's ratio to the first variant. The machine's
state drifts over minutes and one run's figure moves by a fifth, so only ratios taken within one
repetition are compared; their median and range are printed.

A variant is NAME:KIND[:BINARY] with KIND `replay` or `rate`; BINARY defaults to the built probe, so
a changed probe (built elsewhere) runs beside the current one. --congestion sets the machine's
net.ipv4.tcp_congestion_control for the runs (as root; put back after).

    python3 bench/replay_cost_ab.py [--seconds 20] [--repeat 6] [--rate 1000] [--congestion cubic] [--pin]
                                    rate:rate replay:replay [fewer:replay:/tmp/x/redoprobe]

--pin runs every client on CPU 0 and every server on CPU 1 (taskset); on this 2-vCPU VM that doubled
both costs and did not narrow the spread.

2026-11-27, 2 vCPUs, 1,000 MiB/s, 20 s: under BBR the replay / --rate median ratio was 1.28 (4 runs),
under CUBIC 1.07, both probes then costing about 0.10 s/GiB. Every count then came back in a packet
of its own; with them leaving together every 10 ms (later that day, 8 runs) 1.01 against 1.14 for the
previous probe in the same runs. 2026-11-28, 16 runs, that probe against the one sleeping with
clock_nanosleep() and reading counts every 5 ms: median ratios 1.06 [0.78 - 1.44] and 1.14
[0.77 - 1.79], where replay_profile.py finds the second's sleeps and reads cheaper: with one run's
figure moving by a third, sixteen runs do not resolve a few per cent. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rehearsal_pacing as pacing

SYSCTL = "net.ipv4.tcp_congestion_control"


def run(kind: str, binary: Path, schedule: Path, seconds: int, bits_per_second: str) -> float:
    pacing.REDOPROBE = binary
    common = ["--conns", "1", "--message-size", "1M"]
    if kind == "replay":
        args = ["--schedule", str(schedule), "--warmup", "0"]
    else:
        args = ["--duration", str(seconds), "--rate", bits_per_second]
    return pacing.run_pair([*args, *common]).cpu_per_gib


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", help="NAME:KIND[:BINARY], KIND replay or rate")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=6)
    parser.add_argument("--rate", type=float, default=1000, help="MiB/s")
    parser.add_argument("--pin", action="store_true", help="client on CPU 0, server on CPU 1 (taskset)")
    parser.add_argument("--congestion", help="the machine's TCP congestion control for the runs")
    args = parser.parse_args()
    pacing.PIN = args.pin
    variants = {}
    for spec in args.variants:
        name, kind, *binary = spec.split(":", 2)
        if kind not in ("replay", "rate"):
            parser.error(f"{spec}: KIND is replay or rate")
        variants[name] = (kind, Path(binary[0]) if binary else pacing.REDOPROBE)
    schedule = Path(tempfile.mkdtemp()) / "constant.txt"
    pacing.constant_schedule(schedule, args.rate, args.seconds, 1)
    bits_per_second = str(round(args.rate * pacing.MIB * 8))
    before = Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    if args.congestion:
        subprocess.run(["sysctl", "-q", f"{SYSCTL}={args.congestion}"], check=True)
    names, figures = list(variants), {name: [] for name in variants}
    try:
        print(f"# {args.rate:g} MiB/s, {args.seconds} s runs, congestion control {args.congestion or before}")
        for k in range(args.repeat):
            for name in names[k % len(names) :] + names[: k % len(names)]:
                kind, binary = variants[name]
                figures[name].append(run(kind, binary, schedule, args.seconds, bits_per_second))
            print(f"run {k + 1}: " + ", ".join(f"{n} {figures[n][-1]:.3f}" for n in names) + " s/GiB", flush=True)
    finally:
        if args.congestion:
            subprocess.run(["sysctl", "-q", f"{SYSCTL}={before}"], check=True)
    first = names[0]
    for name in names:
        ratios = [a / b for a, b in zip(figures[name], figures[first], strict=True)]
        print(
            f"{name:>10}: median {statistics.median(figures[name]):.3f} s/GiB, / {first} median "
            f"{statistics.median(ratios):.2f} [{min(ratios):.2f} - {max(ratios):.2f}]"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
