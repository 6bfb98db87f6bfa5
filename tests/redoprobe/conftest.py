"""Run redoprobe server and client on loopback and read their JSON events."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from dataclasses import dataclass, field

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
