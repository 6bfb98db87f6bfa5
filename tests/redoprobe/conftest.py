"""Run redoprobe server and client on loopback and read their JSON events."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from redolab import redoprobe as probe_package


@pytest.fixture(scope="session")
def redoprobe() -> str:
    return str(probe_package.build())


def events(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    start: dict
    lines: list[str] = field(default_factory=list)

    def finish(self, timeout: float = 30) -> tuple[int, list[dict]]:
        out, err = self.process.communicate(timeout=timeout)
        self.stderr = err
        return self.process.returncode, [self.start, *events(out)]

    def kill(self, sig=signal.SIGKILL) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)


def start_server(binary: str, *args: str) -> Server:
    process = subprocess.Popen(
        [binary, "server", "--json", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = json.loads(process.stdout.readline())
    assert first["event"] == "start", first
    return Server(process, first["data"]["port"], first)


def start_client(binary: str, port: int, *args: str) -> subprocess.Popen:
    """A client on loopback left running (its stdout and stderr piped, as text), to be signalled."""
    return subprocess.Popen(
        [binary, "client", "127.0.0.1", "--json", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_client(binary: str, port: int, *args: str, timeout: float = 60):
    started = time.monotonic()
    result = subprocess.run(
        [binary, "client", "127.0.0.1", "--json", "--port", str(port), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    result.elapsed = time.monotonic() - started
    result.events = events(result.stdout)
    return result


def connections_to(port: int, *states: str) -> str:
    """`ss -tni`: the client side of each TCP connection to 127.0.0.1:`port` in one of `states`."""
    state_args = [arg for state in states for arg in ("state", state)]
    return subprocess.run(
        ["ss", "-tniH", *state_args, f"( dport = :{port} )"], capture_output=True, text=True, check=True, timeout=10
    ).stdout


def wait_for_streaming(port: int, timeout: float = 30) -> int:
    """Until a connection to the server on `port` has had more bytes acknowledged than the server's
    receive buffer can hold (so the server has read some, not only its kernel): a test's streams are
    under way, what a fixed sleep used to hope for. The bytes acknowledged."""
    enough = int(Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split()[2]) + 1024 * 1024
    deadline = time.monotonic() + timeout
    acked = 0
    while time.monotonic() < deadline:
        acked = max((int(n) for n in re.findall(r"bytes_acked:(\d+)", connections_to(port, "established"))), default=0)
        if acked >= enough:
            return acked
        time.sleep(0.02)
    raise AssertionError(f"the streams to port {port} carried {acked:,} bytes in {timeout} s, not {enough:,}")


def wait_for_shut_streams(port: int, process: subprocess.Popen, timeout: float = 30) -> None:
    """Until the client (`process`) has shut its streams' sending side to the server on `port` (a FIN
    queued: FIN-WAIT): it stopped sending and next asks the server for its count."""
    deadline = time.monotonic() + timeout
    while not connections_to(port, "fin-wait-1", "fin-wait-2").strip():
        assert process.poll() is None, f"the client ended (exit {process.returncode}) before it stopped its streams"
        assert time.monotonic() < deadline, f"the client did not stop its streams within {timeout} s"
        time.sleep(0.02)


@pytest.fixture
def server(redoprobe):
    started: list[Server] = []

    def start(*args: str) -> Server:
        instance = start_server(redoprobe, *args)
        started.append(instance)
        return instance

    yield start
    for instance in started:  # nothing left running, whatever the test did
        instance.kill()
        instance.process.wait(timeout=10)
