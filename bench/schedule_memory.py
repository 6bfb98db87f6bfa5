#!/usr/bin/env python3
"""What a --schedule costs the client host's memory: redoprobe's peak resident set while it reads a
schedule, per slot, for the schedules a day-long rehearsal writes.

The client reads the whole schedule before it connects, so a client pointed at a closed port reads it,
fails to connect and exits: its peak RSS (wait4's ru_maxrss) is the schedule's, held for the whole
replay (the probe's own baseline, a one-line schedule, is printed and subtracted). Cases, 0.1 s slots
(the finest the probe's rate limit assumes, what redolab writes for per-log history):
  - one thread for 24 h (864,000 slots);
  - 8 threads for 24 h on one grid (6,912,000 slots), as redolab writes a RAC rehearsal;
  - 8 threads for 24 h, each connection's offsets 0.01 s after the previous one's (no shared moments),
    as another tool might write them.

    python3 bench/schedule_memory.py [--hours 24] [--threads 8] [--binary PATH]

--binary runs another build (before/after figures in one run). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REDOPROBE = ROOT / "backend" / "redolab" / "redoprobe" / "redoprobe"
MIB = 1024**2


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_schedule(path: Path, threads: int, slots: int, stagger: float) -> int:
    with path.open("w") as out:
        for k in range(slots):
            out.write(
                "".join(
                    f"{t} {k / 10 + t * stagger:.2f} {1_000_000 + (k * 7919 + t) % 65536}\n" for t in range(threads)
                )
            )
    return threads * slots


def measure(binary: Path, schedule: Path) -> tuple[float, str]:
    """The client's peak RSS in bytes, and its last event (a connect error: it read the whole schedule)."""
    process = subprocess.Popen(
        [str(binary), "client", "127.0.0.1", "--json", "--port", str(closed_port()), "--schedule", str(schedule)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    out = process.stdout.read()
    process.stdout.close()
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0  # reaped by wait4
    lines = out.strip().splitlines()
    return usage.ru_maxrss * 1024, lines[-1] if lines else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=24.0, help="schedule length (default 24)")
    parser.add_argument("--threads", type=int, default=8, help="threads of the RAC cases (default 8)")
    parser.add_argument("--binary", type=Path, default=REDOPROBE, help="the redoprobe build to measure")
    args = parser.parse_args()
    binary = args.binary.resolve()
    if not binary.exists():
        print(f"{binary} is missing: run make probe", file=sys.stderr)
        return 1
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    slots = int(args.hours * 3600 * 10) - 1  # the staggered connections' last byte within 24 h
    print(f"# {version} ({binary}); 0.1 s slots, {args.hours:g} h")
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory) / "one.txt"
        base.write_text("0 0 1000\n")
        baseline, _ = measure(binary, base)
        print(f"baseline (one slot): {baseline / MIB:.1f} MiB")
        cases = [("1 thread", 1, 0.0), (f"{args.threads} threads, one grid", args.threads, 0.0),
                 (f"{args.threads} threads, staggered", args.threads, 0.01)]  # fmt: skip
        print(f"{'case':<28} {'slots':>11} {'file MiB':>9} {'peak RSS MiB':>13} {'B/slot':>7}  ended with")
        for name, threads, stagger in cases:
            path = Path(directory) / "schedule.txt"
            count = write_schedule(path, threads, slots, stagger)
            rss, last = measure(binary, path)
            ended = "a connect error (read whole)" if '"connect"' in last else last[:60]
            print(
                f"{name:<28} {count:>11,} {path.stat().st_size / MIB:>9.0f} {rss / MIB:>13.1f} "
                f"{(rss - baseline) / count:>7.1f}  {ended}"
            )
            path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
