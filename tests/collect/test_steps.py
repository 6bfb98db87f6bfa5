"""One command of a collection: its output capped, stopped at its time limit or at a cancel."""

from __future__ import annotations

import asyncio
import subprocess
import time

import pytest

from redolab.collect.errors import CollectionError
from redolab.collect.steps import OUTPUT_CAPS, Cancelled, OutputCaps, run_step
from redolab.remote.local import LocalTransport
from tests.margins import measured_within


def refused(tmp_path, command: str, caps: OutputCaps) -> CollectionError:
    with pytest.raises(CollectionError) as caught:
        asyncio.run(run_step(LocalTransport(), ["sh", "-c", command], step="session", spool=tmp_path / "o", caps=caps))
    assert caught.value.kind == "too_large" and caught.value.step == "session"
    return caught.value


def test_output_over_the_byte_cap_is_stopped_and_refused(tmp_path):
    error = refused(tmp_path, "yes redo | head -c 1000000", OutputCaps(10_000, 10**6, 1000))
    assert "10,000 bytes" in error.message and "stopped" in error.message


def test_four_byte_characters_count_as_four_bytes(tmp_path):
    """2,600 characters of U+1F600 are 10,400 bytes: over a 10,000-byte cap (the old cap counted
    characters, and 240 MB of them passed a '64 MiB' cap)."""
    error = refused(tmp_path, "for i in $(seq 26); do printf '\\360\\237\\230\\200%.0s' $(seq 100); echo; done",
                    OutputCaps(10_000, 10**6, 10**6))  # fmt: skip
    assert "10,000 bytes" in error.message


def test_short_lines_are_refused_at_the_line_cap(tmp_path):
    error = refused(tmp_path, "yes | head -n 100000", OutputCaps(10**9, 5_000, 1000))
    assert "5,000 lines" in error.message


def test_a_long_line_is_refused_at_the_line_byte_cap(tmp_path):
    error = refused(tmp_path, "echo short; head -c 5000 /dev/zero | tr '\\0' x; echo", OutputCaps(10**9, 10, 4096))
    assert "4,096 bytes" in error.message and "one line" in error.message
    error = refused(tmp_path, "head -c 5000 /dev/zero | tr '\\0' x", OutputCaps(10**9, 10, 4096))  # no newline
    assert "4,096 bytes" in error.message


def test_the_caps_hold_a_year_of_32_threads():
    """1,121,280 archived-log rows (32 threads, a log every 15 minutes, a year), one CSV line each."""
    row = '32,1234567,1088123456,1,"2026-11-20 08:00:00","2026-11-20 08:15:00",12345678,4096\n'
    assert OUTPUT_CAPS.lines > 1_121_280 and OUTPUT_CAPS.total_bytes > 1_121_280 * len(row) * 1.3


def test_a_hang_is_stopped_at_the_time_limit(tmp_path):
    spool = tmp_path / "out"

    def stopped() -> float:
        started = time.monotonic()
        said = asyncio.run(run_step(LocalTransport(), ["sleep", "30"], step="session", spool=spool, timeout=0.5))
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


def test_a_cancel_stops_the_command_within_a_second(tmp_path):
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
                    spool=tmp_path / "out",
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


def test_the_pid_line_is_not_part_of_the_output(tmp_path):
    said = asyncio.run(run_step(LocalTransport(), ["echo", "redolab-pid 12"], step="session", spool=tmp_path / "o"))
    assert said.text() == "redolab-pid 12\n" and said.exit_code == 0  # the command's own line is kept


def test_output_and_exit_code_and_undecodable_bytes(tmp_path):
    said = asyncio.run(
        run_step(
            LocalTransport(),
            ["sh", "-c", "cat; printf '\\377\\n' ; echo oops >&2; exit 3"],
            step="session",
            spool=tmp_path / "out",
            input="hello\n",
        )
    )
    assert (
        said.text() == "hello\n\ufffd\n"
        and said.size_bytes == 8
        and said.stderr.strip() == "oops"
        and said.exit_code == 3
    )
    assert not said.was_stopped
