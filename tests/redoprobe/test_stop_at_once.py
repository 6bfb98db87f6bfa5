"""redoprobe wakes on SIGTERM at once: with a 600 s interval and a 3600 s test, the client and the
server each stop and report within about a second of the signal, not at their next interval (the
waits watch a self-pipe the signal handler writes; t_stop.c checks the wait itself)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.margins import measured_within
from tests.redoprobe.conftest import events, wait_for_shut_streams, wait_for_streaming
from tests.redoprobe.test_redoprobe import by_event

LONG = ("--duration", "3600", "--interval", "600")


def _client(redoprobe: str, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [redoprobe, "client", "127.0.0.1", "--json", "--port", str(port), *LONG],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert '"event":"start"' in process.stdout.readline()  # streaming: its first interval is 600 s away
    wait_for_streaming(port)
    return process


def _slower_than(limit: float, who: str):
    """The margin of a stop: `who` took `limit` s or more from the signal to its exit."""
    return lambda seconds: [f"{who} took {seconds:.2f} s (margin {limit:g} s)"] if seconds >= limit else []


def _gone_after(process, sig) -> tuple[float, str]:
    signalled = time.monotonic()
    process.send_signal(sig)
    out, _ = process.communicate(timeout=30)
    return time.monotonic() - signalled, out


def test_client_stops_on_sigterm_before_its_interval_ends(redoprobe, server):
    def stop() -> float:
        srv = server("--once", "--interval", "600")
        client = _client(redoprobe, srv.port)
        seconds, out = _gone_after(client, signal.SIGTERM)
        assert client.returncode == 0
        end = by_event(events(out), "end")[0]
        assert end["interrupted"] is True and end["bytes_received"] == end["bytes_sent"] > 0
        status, server_events = srv.finish(timeout=10)  # the client's END ended the server's test too
        assert status == 0 and by_event(server_events, "end")
        return seconds

    # its next interval was 600 s away; a busy machine may take a second or two: measured once more
    seconds = measured_within(stop, _slower_than(2, "the client"), "SIGTERM to exit")
    print(f"\nclient: SIGTERM to exit {seconds:.3f} s (interval 600 s)")


def test_server_stops_on_sigterm_before_its_interval_ends(redoprobe, server):
    def stop() -> float:
        srv = server("--once", "--interval", "600")
        client = _client(redoprobe, srv.port)
        signalled = time.monotonic()
        srv.kill(signal.SIGTERM)
        status, server_events = srv.finish(timeout=30)
        seconds = time.monotonic() - signalled
        assert status == 0
        assert by_event(server_events, "end")[0]["interrupted"] is True
        client.communicate(timeout=30)  # its server gone, the client reports the loss and ends
        assert client.returncode == 1
        return seconds

    seconds = measured_within(stop, _slower_than(2, "the server"), "SIGTERM to exit")
    print(f"\nserver: SIGTERM to exit {seconds:.3f} s (interval 600 s)")


def test_idle_server_stops_on_sigterm_at_once(redoprobe, server):
    def stop() -> float:
        srv = server("--once", "--idle-timeout", "3600")
        signalled = time.monotonic()
        srv.kill(signal.SIGTERM)
        status, _ = srv.finish(timeout=30)
        seconds = time.monotonic() - signalled
        assert status == 0
        return seconds

    measured_within(stop, _slower_than(1, "the idle server"), "SIGTERM to exit (idle timeout 3600 s)")


def test_a_second_term_ends_the_wait_for_a_silent_servers_count(redoprobe, server):
    """Stopped by a TERM, the client waits up to 10 s for the server's count (it may still come); a
    second TERM ends that wait at once (it waited the 10 s whatever the signals)."""

    def stop() -> float:
        srv = server("--once", "--interval", "600")
        client = _client(redoprobe, srv.port)
        srv.process.send_signal(signal.SIGSTOP)  # the server goes silent: its count never comes
        try:
            client.send_signal(signal.SIGTERM)
            wait_for_shut_streams(srv.port, client)  # it stopped sending: next it waits for the count
            assert client.poll() is None  # waiting for the count
            seconds, out = _gone_after(client, signal.SIGTERM)
        finally:
            srv.process.send_signal(signal.SIGCONT)
        assert by_event(events(out), "error")
        return seconds

    measured_within(stop, _slower_than(1.5, "the client"), "the second TERM to exit (the wait: 10 s)")


def test_term_while_reading_a_long_schedule_stops_at_once(redoprobe, tmp_path):
    """A schedule of 2,000,000 lines takes seconds to read; a TERM stops the reading (it read on and
    then connected), and nothing is connected to."""
    path = tmp_path / "long.txt"
    with path.open("w") as out:
        for conn in range(4):
            out.writelines(f"{conn} {k / 10:.1f} 1000\n" for k in range(500_000))

    def stop() -> float:
        process = subprocess.Popen(
            [redoprobe, "client", "127.0.0.1", "--json", "--port", "9", "--schedule", str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait_until_reading(process, path)
        seconds, out = _gone_after(process, signal.SIGTERM)
        error = by_event(events(out), "error")[0]
        assert error["code"] == "schedule" and "stopped (TERM or Ctrl-C) while reading it" in error["message"], error
        return seconds

    measured_within(stop, _slower_than(1, "the client"), "TERM while reading a schedule to exit")


def _wait_until_reading(process: subprocess.Popen, path: Path, timeout: float = 30) -> None:
    """Until `process` has the schedule open (its signal handlers are set before it opens it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "the schedule was read too fast for this test"
        try:
            opened = {os.readlink(fd) for fd in Path(f"/proc/{process.pid}/fd").iterdir()}
        except (FileNotFoundError, ProcessLookupError):
            opened = set()  # it ended meanwhile: the poll above says so
        if str(path.resolve()) in opened:
            return
        time.sleep(0.005)
    raise AssertionError(f"the client did not open {path} within {timeout} s")
