#!/usr/bin/env python3
"""How faithfully and how cheaply redoprobe replays a schedule (--schedule), on loopback.

For constant schedules at 10, 100 and 1,000 MiB/s (a slot every 0.1 s on whole tenths, so slots fall
on the interval boundaries as recorded profiles' do) the replay runs for `--seconds`; the table prints
for each rate:
  - the median, over the whole 1-second intervals, of |scheduled - received| / scheduled, in percent
    (scheduled: the schedule's bytes generated in the interval, each slot spread over its 0.1 s, so a
    whole second holds ten whole slots; received: the interval's bytes_received, the server's
    count); target under 1 %;
  - the sender's CPU seconds per GiB (the client process, user + system, from wait4's rusage), next
    to plain streaming (no --schedule, no --rate) for the same duration, message size and number
    of connections: like with like. Pacing must not cost more than streaming the same bytes.
    At low rates the cost per GiB is dominated by waking up for each slot, which unpaced streaming
    never does: the last column streams the same bytes at the same average rate (--rate), the
    existing pacing, for the other like-with-like figure;
  - the server's CPU seconds per GiB, replay next to streaming: the replay's server sends a count
    back at most every 1 ms while bytes arrive (streaming sends none), which must not show.

    python3 bench/rehearsal_pacing.py [--seconds 60] [--rates 10 100 1000] [--conns 1] [--message-size 1M]

Needs a built redoprobe (make probe). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REDOPROBE = ROOT / "backend" / "redolab" / "redoprobe" / "redoprobe"
GIB = 1024**3
MIB = 1024**2
SLOTS_PER_SECOND = 10


@dataclass
class Run:
    end: dict
    intervals: list[dict]
    client_cpu_seconds: float
    server_cpu_seconds: float

    @property
    def cpu_per_gib(self) -> float:
        return self.client_cpu_seconds / (self.end["bytes_sent"] / GIB)

    @property
    def server_cpu_per_gib(self) -> float:
        return self.server_cpu_seconds / (self.end["bytes_sent"] / GIB)


def run_pair(client_args: list[str]) -> Run:
    """One server (--once) and one client; the client's events and both CPU seconds (wait4)."""
    server = subprocess.Popen(
        [str(REDOPROBE), "server", "--once", "--json", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    port = json.loads(server.stdout.readline())["data"]["port"]
    client = subprocess.Popen(
        [str(REDOPROBE), "client", "127.0.0.1", "--json", "--port", str(port), *client_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = client.stdout.read()
    err = client.stderr.read()
    _, status, usage = os.wait4(client.pid, 0)
    client.returncode = os.waitstatus_to_exitcode(status)
    server.stdout.read()
    _, server_status, server_usage = os.wait4(server.pid, 0)
    server.returncode = os.waitstatus_to_exitcode(server_status)  # reaped here: Popen must not wait again
    if client.returncode != 0:
        raise RuntimeError(f"redoprobe client exited {client.returncode}: {err.strip()} {out[-500:]}")
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    end = next(e["data"] for e in events if e["event"] == "end")
    intervals = [e["data"] for e in events if e["event"] == "interval"]
    return Run(end, intervals, usage.ru_utime + usage.ru_stime, server_usage.ru_utime + server_usage.ru_stime)


def constant_schedule(path: Path, mib_per_second: float, seconds: int, conns: int) -> list[tuple[int, float, int]]:
    per_slot = round(mib_per_second * MIB / SLOTS_PER_SECOND / conns)
    slots = [(conn, k / SLOTS_PER_SECOND, per_slot) for k in range(seconds * SLOTS_PER_SECOND) for conn in range(conns)]
    path.write_text("".join(f"{conn} {offset:.1f} {size}\n" for conn, offset, size in slots))
    return slots


def scheduled_in(slots, start: float, end: float) -> int:
    return sum(size for _, offset, size in slots if start <= offset < end)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=60, help="schedule length and streaming duration (default 60)")
    parser.add_argument("--rates", type=float, nargs="+", default=[10, 100, 1000], help="MiB/s (default 10 100 1000)")
    parser.add_argument("--conns", type=int, default=1, help="connections, both runs (default 1)")
    parser.add_argument("--message-size", default="1M", help="bytes per send, both runs (default 1M)")
    args = parser.parse_args()
    if not REDOPROBE.exists():
        print(f"{REDOPROBE} is missing: run make probe", file=sys.stderr)
        return 1
    version = subprocess.run([REDOPROBE, "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"# {version}; loopback, {os.cpu_count()} CPUs; {args.seconds} s per run, {args.conns} connection(s), "
        f"--message-size {args.message_size}; constant schedules, a slot every {1 / SLOTS_PER_SECOND:g} s"
    )
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for rate in args.rates:
            path = Path(directory) / f"constant-{rate:g}.txt"
            slots = constant_schedule(path, rate, args.seconds, args.conns)
            common = ["--conns", str(args.conns), "--message-size", args.message_size]
            replay = run_pair(["--schedule", str(path), *common])
            streaming = run_pair(["--duration", str(args.seconds), *common])
            bits_per_second = str(round(rate * MIB * 8))
            paced = run_pair(["--duration", str(args.seconds), "--rate", bits_per_second, *common])
            whole = [i for i in replay.intervals if i["end_seconds"] - i["start_seconds"] == 1.0]
            errors = []
            for interval in whole:
                expected = scheduled_in(slots, interval["start_seconds"], interval["end_seconds"])
                errors.append(abs(interval["bytes_received"] - expected) / expected * 100)
            rows.append((rate, replay, streaming, paced, statistics.median(errors), max(errors), len(whole)))
            print(
                f"  {rate:g} MiB/s: replay {replay.end['bytes_received'] / MIB:.0f} MiB in "
                f"{replay.end['seconds']:.2f} s, max lag {replay.end['max_lag_seconds']:.3f} s, drained "
                f"{replay.end['drained']}; streaming {streaming.end['bytes_received'] / MIB:.0f} MiB",
                flush=True,
            )
    print()
    print(
        f"{'schedule':>12}  {'intervals':>9}  {'median |sched-recv|':>19}  {'worst':>7}  {'max lag s':>9}  "
        f"{'replay CPU s/GiB':>16}  {'streaming CPU s/GiB':>19}  {'streaming MiB/s':>15}  {'--rate CPU s/GiB':>16}"
        f"  {'server CPU s/GiB: replay':>24}  {'streaming':>9}"
    )
    for rate, replay, streaming, paced, median, worst, count in rows:
        print(
            f"{rate:>6g} MiB/s  {count:>9}  {median:>18.3f}%  {worst:>6.2f}%  {replay.end['max_lag_seconds']:>9.3f}  "
            f"{replay.cpu_per_gib:>16.3f}  {streaming.cpu_per_gib:>19.3f}  "
            f"{streaming.end['bytes_per_second'] / MIB:>15.0f}  {paced.cpu_per_gib:>16.3f}  "
            f"{replay.server_cpu_per_gib:>24.3f}  {streaming.server_cpu_per_gib:>9.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
