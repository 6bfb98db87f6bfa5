"""One command of a collection: its output capped, stopped at its time limit or at a cancel."""

from __future__ import annotations

import asyncio
import subprocess
import time

import pytest

from redolab.collect.errors import CollectionError
from redolab.collect.steps import Cancelled, run_step
from redolab.remote.local import LocalTransport
from tests.margins import measured_within


def test_output_over_the_cap_is_stopped_and_refused():
    with pytest.raises(CollectionError) as caught:
        asyncio.run(
            run_step(LocalTransport(), ["sh", "-c", "yes redo | head -c 1000000"], step="session", cap_bytes=10_000)
        )
    assert caught.value.kind == "truncated" and "10,000 bytes" in caught.value.message


def test_a_hang_is_stopped_at_the_time_limit():
    def stopped() -> float:
        started = time.monotonic()
        said = asyncio.run(run_step(LocalTransport(), ["sleep", "30"], step="session", timeout=0.5))
        assert said.was_stopped
        return time.monotonic() - started

    # at its 0.5 s limit, not the command's 30 s; past 3 s only on a busy machine, then once more
    measured_within(
        stopped,
        lambda seconds: [f"stopped after {seconds:.2f} s (< 3 s)"] * (seconds >= 3),
        "a 30 s command with a 0.5 s limit",
    )


def running(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return found.split()


def test_a_cancel_stops_the_command_within_a_second():
    """Stopped on the host, not just no longer read: the command and its children are gone at once
    (TERM by PID to the command's `timeout`), long before its time limit."""
    markers = iter(("sleep 29.731", "sleep 29.732"))  # each attempt's own command

    def cancelled() -> tuple[float, float]:
        """(seconds until the step returned, until its command was gone), from the start."""
        started = time.monotonic()
        marker = next(markers)
        with pytest.raises(Cancelled):
            asyncio.run(
                run_step(
                    LocalTransport(),
                    ["sh", "-c", f"{marker}; echo never"],
                    step="session",
                    should_stop=lambda: time.monotonic() - started > 0.3,
                )
            )
        returned = time.monotonic() - started
        deadline = time.monotonic() + 20  # long before its own 29.7 s
        while running(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running(marker) == []
        return returned, time.monotonic() - started

    def misses(seconds: tuple[float, float]) -> list[str]:  # a busy machine: cancelled once more first
        returned, gone = seconds
        return [f"returned after {returned:.2f} s (< 1.5 s), gone after {gone:.2f} s (< 2.5 s)"] * (
            returned >= 1.5 or gone >= 2.5
        )

    measured_within(cancelled, misses, "a cancel 0.3 s into a 29.7 s command")


def test_the_pid_line_is_not_part_of_the_output():
    said = asyncio.run(run_step(LocalTransport(), ["echo", "redolab-pid 12"], step="session"))
    assert said.stdout == "redolab-pid 12" and said.exit_code == 0  # the command's own line is kept


def test_output_and_exit_code_and_undecodable_bytes():
    said = asyncio.run(
        run_step(
            LocalTransport(),
            ["sh", "-c", "cat; printf '\\377\\n' ; echo oops >&2; exit 3"],
            step="session",
            input="hello\n",
        )
    )
    assert said.stdout == "hello\n\ufffd" and said.stderr.strip() == "oops" and said.exit_code == 3
    assert not said.was_stopped
