#!/usr/bin/env python3
"""/healthz latency while 60 clients send wrong passwords to a real `redolab serve`.

Starts `redolab serve` (SQLite, a fresh data directory) with one user, then for each phase polls
/healthz from one client and prints p50/p99/max, with the count of login answers by status:

  quiet      /healthz alone (the baseline)
  one-host   60 clients from 127.0.0.1 guessing alice's password (throttling answers 429 quickly)
  spray      60 clients, each from its own loopback address (127.0.1.N), each attempt a new user
             name: no account or address is throttled for its first 20 attempts, so every attempt
             reaches the password check and the bounded pool is full the whole phase (503s)

    python3 -m uv run python bench/login_flood.py [--seconds 10] [--clients 60] [--tree PATH]

--tree runs another checkout's redolab (e.g. a worktree of an older commit) for a before/after
comparison on the same machine in the same session. Target (issue 18): /healthz p99 < 200 ms
during the floods on the 2-core CI machine. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "violet tractor sonnet"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(tree: Path, data_dir: Path) -> tuple[subprocess.Popen, int]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env |= {"REDOLAB_DATA_DIR": str(data_dir), "REDOLAB_WORKER_ENABLED": "false"}
    found = os.environ.get("UV") or shutil.which("uv")  # `uv run` names itself in $UV
    uv = [found] if found else ["python3", "-m", "uv"]
    command = [*uv, "run", "--project", str(tree), "redolab"]
    subprocess.run(
        [*command, "user", "create", "alice", "--password-stdin", "--role", "admin"],
        input=PASSWORD + "\n",
        text=True,
        env=env,
        check=True,
        capture_output=True,
    )
    port = free_port()
    server = subprocess.Popen(
        [*command, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(300):
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return server, port
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("redolab serve did not start")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def poll_health(port: int, stop: threading.Event, latencies: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", "/healthz")
            connection.getresponse().read()
            latencies.append(time.perf_counter() - started)
        except OSError:
            latencies.append(float("inf"))
        time.sleep(0.02)


def flood(port: int, stop: threading.Event, answers: Counter, lock: threading.Lock, source: str, names) -> None:
    while not stop.is_set():
        body = urlencode({"username": next(names), "password": "not the password"})
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(source, 0))
            connection.request("POST", "/login", body, {"Content-Type": "application/x-www-form-urlencoded"})
            status = connection.getresponse().status
        except OSError as error:
            status = type(error).__name__
        with lock:
            answers[status] += 1


def phase(port: int, name: str, seconds: float, clients: int) -> None:
    stop, lock, answers, latencies = threading.Event(), threading.Lock(), Counter(), []
    threads = [threading.Thread(target=poll_health, args=(port, stop, latencies))]
    counter = itertools.count()
    for index in range(clients if name != "quiet" else 0):
        if name == "one-host":
            source, names = "127.0.0.1", itertools.repeat("alice")
        else:
            source, names = f"127.0.1.{index + 1}", (f"spray{next(counter)}" for _ in itertools.count())
        threads.append(threading.Thread(target=flood, args=(port, stop, answers, lock, source, names)))
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    finite = [x for x in latencies if x != float("inf")]
    ms = {
        k: 1000 * v
        for k, v in (("p50", statistics.median(finite)), ("p99", percentile(finite, 0.99)), ("max", max(finite)))
    }
    logins = ", ".join(f"{status}: {count:,}" for status, count in sorted(answers.items(), key=str)) or "none"
    print(
        f"{name:9} /healthz n={len(latencies):,} p50 {ms['p50']:.1f} ms  p99 {ms['p99']:.1f} ms  "
        f"max {ms['max']:.1f} ms  failed {len(latencies) - len(finite)}  |  logins in {seconds:g} s: {logins}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=60)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose redolab to serve")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        server, port = start(args.tree.resolve(), Path(data_dir))
        try:
            print(f"redolab serve from {args.tree}, {os.cpu_count()} CPUs, {args.clients} flooding clients")
            for name in ("quiet", "one-host", "spray"):
                phase(port, name, args.seconds, args.clients)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
