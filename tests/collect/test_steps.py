"""One command of a collection: its output capped, stopped at its time limit or at a cancel."""

from __future__ import annotations

import asyncio
import subprocess
import time

import pytest

from redolab.collect.errors import CollectionError
from redolab.collect.steps import Cancelled, run_step
from redolab.remote.local import LocalTransport


def test_output_over_the_cap_is_stopped_and_refused():
    with pytest.raises(CollectionError) as caught:
        asyncio.run(run_step(LocalTransport(), ["sh", "-c", "yes redo | head -c 1000000"], step="session",
                             cap_bytes=10_000))  # fmt: skip
    assert caught.value.kind == "truncated" and "10,000 bytes" in caught.value.message


def test_a_hang_is_stopped_at_the_time_limit():
    started = time.monotonic()
    said = asyncio.run(run_step(LocalTransport(), ["sleep", "30"], step="session", timeout=0.5))
    assert said.was_stopped and time.monotonic() - started < 3


def running(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return found.split()


def test_a_cancel_stops_the_command_within_a_second():
    """Stopped on the host, not just no longer read: the command and its children are gone at once
    (TERM by PID to the command's `timeout`), long before its time limit."""
    started = time.monotonic()
    marker = "sleep 29.731"
    with pytest.raises(Cancelled):
        asyncio.run(run_step(LocalTransport(), ["sh", "-c", f"{marker}; echo never"], step="session",
                             should_stop=lambda: time.monotonic() - started > 0.3))  # fmt: skip
    assert time.monotonic() - started < 1.5
    deadline = time.monotonic() + 1
    while running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running(marker) == []


def test_the_pid_line_is_not_part_of_the_output():
    said = asyncio.run(run_step(LocalTransport(), ["echo", "redolab-pid 12"], step="session"))
    assert said.stdout == "redolab-pid 12" and said.exit_code == 0  # the command's own line is kept


def test_output_and_exit_code_and_undecodable_bytes():
    said = asyncio.run(run_step(LocalTransport(), ["sh", "-c", "cat; printf '\\377\\n' ; echo oops >&2; exit 3"],
                                step="session", input="hello\n"))  # fmt: skip
    assert said.stdout == "hello\n\ufffd" and said.stderr.strip() == "oops" and said.exit_code == 3
    assert not said.was_stopped
