#!/usr/bin/env python3
"""redoprobe against iperf3 on loopback, in the same session, alternating.

For 1 and 4 streams, runs each tool `--repetitions` times for `--duration` seconds (the order
alternates between repetitions), then prints the median throughput of each, the ratio
redoprobe / iperf3, and CPU seconds per GiB moved (client + server processes, from wait4's
rusage, measured the same way for both tools).

    python3 bench/probe_vs_iperf3.py [--duration 10] [--repetitions 3] [--streams 1 4]

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
REDOPROBE = ROOT / "backend" / "redolab" / "probe" / "redoprobe"
GIB = 1024**3
MIB = 1024**2


@dataclass
class Sample:
    tool: str
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


def run_pair(server_cmd: list[str], client_cmd: list[str], port: int, probe_port: bool):
    server = subprocess.Popen(server_cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if not probe_port:  # redoprobe reports readiness itself (start event); iperf3 we poll
        time.sleep(0.3)
    else:
        server.stdout.readline()
    client = subprocess.Popen(client_cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    client_out, client_cpu = reap(client)
    server_out, server_cpu = reap(server)
    return client_out, server_out, client_cpu + server_cpu


def run_iperf3(streams: int, duration: float) -> Sample:
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
            "-J",
        ],
        port,
        probe_port=False,
    )
    received = json.loads(client_out)["end"]["sum_received"]
    return Sample("iperf3", streams, int(received["bytes"]), float(received["seconds"]), cpu)


def run_redoprobe(streams: int, duration: float) -> Sample:
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
        ],
        port,
        probe_port=True,
    )
    end = [json.loads(line) for line in client_out.splitlines() if '"end"' in line][-1]["data"]
    return Sample("redoprobe", streams, int(end["bytes_received"]), float(end["seconds"]), cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per run (default 10)")
    parser.add_argument("--repetitions", type=int, default=3, help="runs per tool and stream count (default 3)")
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 4], help="stream counts (default 1 4)")
    args = parser.parse_args()
    if shutil.which("iperf3") is None:
        print("iperf3 is not installed: apt-get install iperf3", file=sys.stderr)
        return 1
    if not REDOPROBE.exists():
        print(f"{REDOPROBE} is missing: run make probe", file=sys.stderr)
        return 1
    version = subprocess.run(["iperf3", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"# {version}; {subprocess.run([REDOPROBE, '--version'], capture_output=True, text=True).stdout.strip()}")
    print(
        f"# loopback, {args.duration:g} s per run, {args.repetitions} repetitions, alternating, {os.cpu_count()} CPUs"
    )
    samples: list[Sample] = []
    for repetition in range(args.repetitions):
        for streams in args.streams:
            order = (run_redoprobe, run_iperf3) if repetition % 2 == 0 else (run_iperf3, run_redoprobe)
            for run in order:
                sample = run(streams, args.duration)
                samples.append(sample)
                print(
                    f"  run {repetition + 1}: {sample.tool:9s} {streams} stream(s) "
                    f"{sample.bytes_per_second / MIB:10.1f} MiB/s  {sample.cpu_per_gib:.3f} CPU s/GiB",
                    flush=True,
                )
    print()
    print(
        f"{'streams':>7}  {'redoprobe MiB/s':>15}  {'iperf3 MiB/s':>12}  {'ratio':>6}  "
        f"{'redoprobe CPU s/GiB':>19}  {'iperf3 CPU s/GiB':>16}"
    )
    for streams in args.streams:
        chosen = [s for s in samples if s.streams == streams]

        def median(tool: str, field: str, chosen=chosen) -> float:
            return statistics.median(getattr(s, field) for s in chosen if s.tool == tool)

        probe_rate = median("redoprobe", "bytes_per_second")
        iperf_rate = median("iperf3", "bytes_per_second")
        print(
            f"{streams:>7}  {probe_rate / MIB:>15.1f}  {iperf_rate / MIB:>12.1f}  "
            f"{probe_rate / iperf_rate:>6.2f}  {median('redoprobe', 'cpu_per_gib'):>19.3f}  "
            f"{median('iperf3', 'cpu_per_gib'):>16.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
