"""redoprobe wakes on SIGTERM at once: with a 600 s interval and a 3600 s test, the client and the
server each stop and report within about a second of the signal, not at their next interval (the
waits watch a self-pipe the signal handler writes; t_stop.c checks the wait itself)."""

from __future__ import annotations

import signal
import subprocess
import time

from tests.redoprobe.conftest import events
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
    time.sleep(0.5)
    return process


def _gone_after(process, sig) -> tuple[float, str]:
    signalled = time.monotonic()
    process.send_signal(sig)
    out, _ = process.communicate(timeout=30)
    return time.monotonic() - signalled, out


def test_client_stops_on_sigterm_before_its_interval_ends(redoprobe, server):
    srv = server("--once", "--interval", "600")
    client = _client(redoprobe, srv.port)
    seconds, out = _gone_after(client, signal.SIGTERM)
    assert client.returncode == 0
    end = by_event(events(out), "end")[0]
    assert end["interrupted"] is True and end["bytes_received"] == end["bytes_sent"] > 0
    assert seconds < 2, f"the client took {seconds:.1f} s"
    status, server_events = srv.finish(timeout=10)  # the client's END ended the server's test too
    assert status == 0 and by_event(server_events, "end")
    print(f"\nclient: SIGTERM to exit {seconds:.3f} s (interval 600 s)")


def test_server_stops_on_sigterm_before_its_interval_ends(redoprobe, server):
    srv = server("--once", "--interval", "600")
    client = _client(redoprobe, srv.port)
    signalled = time.monotonic()
    srv.kill(signal.SIGTERM)
    status, server_events = srv.finish(timeout=30)
    seconds = time.monotonic() - signalled
    assert status == 0
    assert by_event(server_events, "end")[0]["interrupted"] is True
    assert seconds < 2, f"the server took {seconds:.1f} s"
    client.communicate(timeout=30)  # its server gone, the client reports the loss and ends
    assert client.returncode == 1
    print(f"\nserver: SIGTERM to exit {seconds:.3f} s (interval 600 s)")


def test_idle_server_stops_on_sigterm_at_once(redoprobe, server):
    srv = server("--once", "--idle-timeout", "3600")
    signalled = time.monotonic()
    srv.kill(signal.SIGTERM)
    status, _ = srv.finish(timeout=30)
    seconds = time.monotonic() - signalled
    assert status == 0
    assert seconds < 1
