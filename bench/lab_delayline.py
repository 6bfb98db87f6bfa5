#!/usr/bin/env python3
"""The lab's delay line under full load: does it keep up, and does the RTT stay at its setting?

Builds a lab (20 ms, no rate limit, kernel buffer maximum 32 MiB in both namespaces), then for MTU
9000 and 1500 streams one connection primary -> standby with redoprobe and with iperf3 (the peer,
same run), pinging across the same path while each stream runs. Then the same with the rate limit
of 1 Gbit/s and its default queue (1 ms), the lab as `redolab lab up --rate 1Gbit/s` makes it.
Reports throughput, the delay line's CPU seconds per GiB, ping min/avg/max during the load, and
redoprobe's TCP_INFO RTT (minimum and median over its intervals).

    python3 -m uv run python bench/lab_delayline.py [--duration 8]    (as root)

Targets (issue 8): at least 500 MiB/s at MTU 9000 and 100 MiB/s at MTU 1500; the RTT within 1 ms
of 20 ms under full load. Needs root, iperf3, ping and a built redoprobe (make probe). Prints
figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
REDOPROBE = ROOT / "backend" / "redolab" / "redoprobe" / "redoprobe"
MIB = 1024**2
GIB = 1024**3


def in_ns(namespace: str, *command: str) -> list[str]:
    return ["ip", "netns", "exec", namespace, *command]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ping_during(namespace: str, address: str, start_after: float, count: int, out: dict) -> None:
    time.sleep(start_after)
    done = subprocess.run(
        in_ns(namespace, "ping", "-n", "-q", "-c", str(count), "-i", "0.2", address), capture_output=True, text=True
    )
    found = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/", done.stdout)
    out["ping_ms"] = tuple(float(v) for v in found.groups()) if found else None


def stream(tool: str, lab, duration: float, message_bytes: int) -> dict:
    primary, standby = lab.hosts[0], lab.hosts[1]
    port = "5301"
    if tool == "redoprobe":
        server = [str(REDOPROBE), "server", "--once", "--json", "--bind", standby.data_address, "--port", port]
        client = [str(REDOPROBE), "client", standby.data_address, "--json", "--port", port, "--duration",
                  str(duration), "--interval", "1", "--message-size", str(message_bytes)]  # fmt: skip
    else:
        server = ["iperf3", "-s", "-1", "-B", standby.data_address, "-p", port]
        client = ["iperf3", "-c", standby.data_address, "-p", port, "-t", str(duration), "-J", "-l", str(message_bytes)]
    server_process = subprocess.Popen(in_ns(standby.namespace, *server), stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    measured: dict = {}
    pinger = threading.Thread(
        target=ping_during, args=(primary.namespace, standby.data_address, 2.0, int((duration - 3) / 0.2), measured)
    )
    before = cpu_seconds(lab.delayline_pid)
    pinger.start()
    out = subprocess.run(in_ns(primary.namespace, *client), capture_output=True, text=True).stdout
    pinger.join()
    measured["delayline_cpu_seconds"] = cpu_seconds(lab.delayline_pid) - before
    server_process.wait(timeout=10)
    if tool == "redoprobe":
        events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        end = next(e["data"] for e in events if e["event"] == "end")
        rtts = [
            s["rtt_us"] for e in events if e["event"] == "interval" for s in e["data"]["streams"] if s.get("rtt_us")
        ]
        measured.update(bytes=end["bytes_received"], seconds=end["seconds"])
        measured["tcp_rtt_ms"] = (min(rtts) / 1000, statistics.median(rtts) / 1000) if rtts else None
    else:
        received = json.loads(out)["end"]["sum_received"]
        measured.update(bytes=received["bytes"], seconds=received["seconds"])
    return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per stream (default 8)")
    parser.add_argument("--message-bytes", type=int, default=MIB, help="redoprobe --message-size and iperf3 -l")
    parser.add_argument("--repetitions", type=int, default=1, help="alternating pairs per case (default 1)")
    parser.add_argument("--cases", type=int, nargs="+", default=[0, 1, 2, 3], help="which cases (0-3)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root (network namespaces, TUN devices)", file=sys.stderr)
        return 1
    for tool in ("iperf3", "ping"):
        if shutil.which(tool) is None:
            print(f"{tool} is missing: apt-get install {'iputils-ping' if tool == 'ping' else tool}", file=sys.stderr)
            return 1
    if not REDOPROBE.exists():
        print(f"{REDOPROBE} is missing: run make probe", file=sys.stderr)
        return 1

    from redolab.lab import control
    from redolab.lab.topology import Shape, plan_lab

    paths = control.Paths(Path(tempfile.mkdtemp(prefix="redolab-lab-bench-")))
    lab = control.up(paths, plan_lab(Shape(rtt_seconds=0.020, rate_bits_per_second=0, mtu_bytes=9000)))
    print(
        f"# {os.cpu_count()} CPUs; RTT 20 ms; one connection, autotuning with a 32 MiB maximum; {args.duration:g} s; "
        f"{args.message_bytes:,}-byte messages for both tools (redoprobe --message-size, iperf3 -l)"
    )
    print(
        f"{'case':34s} {'tool':9s} {'MiB/s':>8s} {'delay line CPU s/GiB':>21s} {'ping min/avg/max ms':>22s} "
        f"{'TCP_INFO rtt min/median ms':>27s}"
    )
    try:
        for host in lab.hosts:
            subprocess.run(
                in_ns(
                    host.namespace,
                    "sysctl",
                    "-q",
                    "-w",
                    "net.ipv4.tcp_rmem=4096 131072 33554432",
                    "net.ipv4.tcp_wmem=4096 16384 33554432",
                ),
                check=True,
            )
        cases = [
            ("MTU 9000, no rate limit", Shape(rtt_seconds=0.020, rate_bits_per_second=0, mtu_bytes=9000)),
            ("MTU 1500, no rate limit", Shape(rtt_seconds=0.020, rate_bits_per_second=0, mtu_bytes=1500)),
            ("MTU 1500, 1 Gbit/s, queue 1 ms", Shape(rtt_seconds=0.020, rate_bits_per_second=10**9, mtu_bytes=1500)),
            ("MTU 9000, 1 Gbit/s, queue 1 ms", Shape(rtt_seconds=0.020, rate_bits_per_second=10**9, mtu_bytes=9000)),
        ]
        ratios: dict[str, list[float]] = {}
        for index, (name, shape) in enumerate(cases):
            if index not in args.cases:
                continue
            control.change(paths, shape)
            for repetition in range(args.repetitions):
                rates = {}
                for tool in ("redoprobe", "iperf3") if repetition % 2 == 0 else ("iperf3", "redoprobe"):
                    m = stream(tool, lab, args.duration, args.message_bytes)
                    rates[tool] = rate = m["bytes"] / m["seconds"]
                    ping = "/".join(f"{v:.2f}" for v in m["ping_ms"]) if m.get("ping_ms") else "-"
                    tcp = "/".join(f"{v:.2f}" for v in m["tcp_rtt_ms"]) if m.get("tcp_rtt_ms") else "-"
                    cpu = m["delayline_cpu_seconds"] / (m["bytes"] / GIB)
                    print(f"{name:34s} {tool:9s} {rate / MIB:8.1f} {cpu:21.3f} {ping:>22s} {tcp:>27s}", flush=True)
                ratios.setdefault(name, []).append(rates["redoprobe"] / rates["iperf3"])
        print()
        for name, values in ratios.items():
            shown = ", ".join(f"{v:.2f}" for v in values)
            print(f"{name:34s} redoprobe / iperf3: median {statistics.median(values):.2f} (pairs {shown})")
    finally:
        control.down(paths)
        shutil.rmtree(paths.root.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
