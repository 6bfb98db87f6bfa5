#!/usr/bin/env python3
"""redoprobe against iperf3 on loopback, like with like, in the same session, alternating.

Both tools send the same message size (redoprobe --message-size N, iperf3 -l N) on the same number
of streams for the same duration. For every (message size, stream count) each tool runs
`--repetitions` times, alternating which goes first; the table prints the median throughput of
each, the ratio of the medians and the median of the per-pair ratios, and CPU seconds per GiB moved
(client + server processes, from wait4's rusage, measured the same way for both tools). iperf3's -P
streams share one thread; redoprobe runs a thread per stream.

    python3 bench/probe_vs_iperf3.py [--duration 10] [--repetitions 5] [--streams 1 4 8]
                                     [--sizes 128K 1M] [--probe-args "--zerocopy"] [--pin]

Needs iperf3 (Debian package) and a built redoprobe (make probe). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REDOPROBE = ROOT / "backend" / "redolab" / "redoprobe" / "redoprobe"
GIB = 1024**3
MIB = 1024**2


@dataclass
class Sample:
    tool: str
    size: int
    streams: int
    bytes: int
    seconds: float
    cpu_seconds: float

    @property
    def bytes_per_second(self) -> float:
        return self.bytes / self.seconds

    @property
    def cpu_per_gib(self) -> float:
        return self.cpu_seconds / (self.bytes / GIB)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def reap(process: subprocess.Popen) -> tuple[str, float]:
    """Wait for a process; return its stdout and the CPU seconds it used (user + system)."""
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{process.args[0]} exited {process.returncode}")
    return out, usage.ru_utime + usage.ru_stime


PIN: dict[str, list[str]] = {"server": [], "client": []}  # taskset prefixes, the same for both tools


def run_pair(server_cmd: list[str], client_cmd: list[str], port: int, probe_port: bool):
    server_cmd, client_cmd = PIN["server"] + server_cmd, PIN["client"] + client_cmd
    server = subprocess.Popen(server_cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if not probe_port:  # redoprobe reports readiness itself (start event); iperf3 we poll
        time.sleep(0.3)
    else:
        server.stdout.readline()
    client = subprocess.Popen(client_cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    client_out, client_cpu = reap(client)
    server_out, server_cpu = reap(server)
    return client_out, server_out, client_cpu + server_cpu


def run_iperf3(size: int, streams: int, duration: float, extra: list[str]) -> Sample:
    port = free_port()
    client_out, _, cpu = run_pair(
        ["iperf3", "-s", "-1", "-p", str(port)],
        [
            "iperf3",
            "-c",
            "127.0.0.1",
            "-p",
            str(port),
            "-t",
            str(duration),
            "-P",
            str(streams),
            "-l",
            str(size),
            "-J",
        ],
        port,
        probe_port=False,
    )
    received = json.loads(client_out)["end"]["sum_received"]
    return Sample("iperf3", size, streams, int(received["bytes"]), float(received["seconds"]), cpu)


def run_redoprobe(size: int, streams: int, duration: float, extra: list[str]) -> Sample:
    port = free_port()
    client_out, _, cpu = run_pair(
        [str(REDOPROBE), "server", "--once", "--json", "--port", str(port)],
        [
            str(REDOPROBE),
            "client",
            "127.0.0.1",
            "--json",
            "--port",
            str(port),
            "--duration",
            str(duration),
            "--conns",
            str(streams),
            "--message-size",
            str(size),
            *extra,
        ],
        port,
        probe_port=True,
    )
    end = [json.loads(line) for line in client_out.splitlines() if '"end"' in line][-1]["data"]
    return Sample("redoprobe", size, streams, int(end["bytes_received"]), float(end["seconds"]), cpu)


def parse_size(text: str) -> int:
    units = {"K": 1024, "M": MIB}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def show_size(size: int) -> str:
    return f"{size // MIB} MiB" if size % MIB == 0 else f"{size // 1024} KiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per run (default 10)")
    parser.add_argument("--repetitions", type=int, default=5, help="pairs per size and stream count (default 5)")
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 4, 8], help="stream counts (default 1 4 8)")
    parser.add_argument("--sizes", nargs="+", default=["128K", "1M"], help="message sizes (default 128K 1M)")
    parser.add_argument("--probe-args", default="", help="extra redoprobe client options, e.g. --zerocopy")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run every client on CPU 0 and every server on CPU 1 (taskset, both tools alike): takes the "
        "scheduler's placement of sender and receiver out of the comparison",
    )
    args = parser.parse_args()
    if args.pin:
        PIN["client"], PIN["server"] = ["taskset", "-c", "0"], ["taskset", "-c", "1"]
    if shutil.which("iperf3") is None:
        print("iperf3 is not installed: apt-get install iperf3", file=sys.stderr)
        return 1
    if not REDOPROBE.exists():
        print(f"{REDOPROBE} is missing: run make probe", file=sys.stderr)
        return 1
    sizes = [parse_size(size) for size in args.sizes]
    extra = args.probe_args.split()
    version = subprocess.run(["iperf3", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"# {version}; {subprocess.run([REDOPROBE, '--version'], capture_output=True, text=True).stdout.strip()}")
    print(
        f"# loopback, {args.duration:g} s per run, {args.repetitions} alternating pairs, {os.cpu_count()} CPUs"
        f"{'; clients on CPU 0, servers on CPU 1' if args.pin else ''}; "
        f"redoprobe --message-size N against iperf3 -l N{(' ; redoprobe ' + args.probe_args) if extra else ''}"
    )
    pairs: dict[tuple[int, int], list[tuple[Sample, Sample]]] = {}
    for repetition in range(args.repetitions):
        for size in sizes:
            for streams in args.streams:
                first_probe = repetition % 2 == 0
                order = (run_redoprobe, run_iperf3) if first_probe else (run_iperf3, run_redoprobe)
                done = {}
                for run in order:
                    sample = run(size, streams, args.duration, extra)
                    done[sample.tool] = sample
                    print(
                        f"  pair {repetition + 1}: {show_size(size):>7} {streams} stream(s) {sample.tool:9s} "
                        f"{sample.bytes_per_second / MIB:10.1f} MiB/s  {sample.cpu_per_gib:.3f} CPU s/GiB",
                        flush=True,
                    )
                pairs.setdefault((size, streams), []).append((done["redoprobe"], done["iperf3"]))
    print()
    print(
        f"{'message':>8} {'streams':>7}  {'redoprobe MiB/s':>15}  {'iperf3 MiB/s':>12}  {'ratio':>6}  "
        f"{'pair ratios':>11}  {'redoprobe CPU s/GiB':>19}  {'iperf3 CPU s/GiB':>16}"
    )
    for (size, streams), chosen in pairs.items():
        probe = statistics.median(p.bytes_per_second for p, _ in chosen)
        iperf = statistics.median(i.bytes_per_second for _, i in chosen)
        pair_ratio = statistics.median(p.bytes_per_second / i.bytes_per_second for p, i in chosen)
        print(
            f"{show_size(size):>8} {streams:>7}  {probe / MIB:>15.1f}  {iperf / MIB:>12.1f}  {probe / iperf:>6.2f}  "
            f"{pair_ratio:>11.2f}  {statistics.median(p.cpu_per_gib for p, _ in chosen):>19.3f}  "
            f"{statistics.median(i.cpu_per_gib for _, i in chosen):>16.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
