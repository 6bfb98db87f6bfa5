"""The layers agree on limits: what a rehearsal may ask of the probe, the probe accepts (its option
parser, run for real on the command lines the runner builds)."""

from __future__ import annotations

import json
import socket
import subprocess

from redolab import redoprobe as probe_package
from redolab.rehearsals.schedule import SPEEDUP_RANGE, build_schedule
from redolab.rehearsals.service import replay_cap
from redolab.rehearsals.window import MAX_WINDOW_SECONDS, choose_window
from redolab.runs.command import ProbeParameters, client_argv, server_argv
from tests.rehearsals.history import requirement_of, row


def test_the_probe_takes_the_caps_of_the_longest_window(tmp_path):
    """A 24-hour window at speedup 1 may run for twice that plus a minute (its drain), and the server
    30 s more: both command lines pass the probe's option checks (it refused over 86,400 s)."""
    binary = str(probe_package.build())
    schedule = tmp_path / "schedule.txt"
    schedule.write_text(f"0 0 1000\n0 {MAX_WINDOW_SECONDS:g} 0\n")
    cap = replay_cap(MAX_WINDOW_SECONDS, SPEEDUP_RANGE[0])
    assert cap > MAX_WINDOW_SECONDS
    parameters = ProbeParameters("async", 1, 1 << 20, None, cap, 1.0, schedule_path=str(schedule))
    server = subprocess.Popen(
        server_argv(binary, parameters), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        first = json.loads(server.stdout.readline() or "{}")
    finally:
        server.kill()
        _, error = server.communicate(timeout=10)
    assert first.get("event") == "start", error
    with socket.socket() as closed:  # a port nobody listens on: the client gets past its options, then fails
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    argv = client_argv(binary, parameters, server_address="127.0.0.1", port=port)
    client = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert client.returncode != 2, client.stderr  # 2: a usage error
    error = next(json.loads(line)["data"] for line in client.stdout.splitlines() if '"error"' in line)
    assert error["code"] == "connect", error


def _client_error(binary: str, schedule_path: str) -> dict:
    """The client's error event for a schedule, run against a port nobody listens on: 'schedule' when
    the probe refuses the file (it reads it before connecting), else 'connect'."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    argv = [binary, "client", "127.0.0.1", "--json", "--port", str(port), "--schedule", schedule_path]
    client = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return next(json.loads(line)["data"] for line in client.stdout.splitlines() if '"error"' in line)


def test_a_schedule_the_api_accepts_the_probe_reads(tmp_path):
    """0.8 TB/s in one-second slots is under the 1 TB/s limit: the probe takes the schedule, each slot
    generated over its second (the slot width), the last one too. One such slot alone has no width but
    the 0.1 s the probe assumes: 8 TB/s, refused, naming the limit."""
    binary = str(probe_package.build())
    rows = [row(1, 600 * n, 600, 480 * 2**20) for n in range(7)]  # 10-minute logs of 480 TiB
    history = requirement_of(rows)
    schedule = build_schedule(history, choose_window(history, "worst-60m"))
    assert schedule.slot_seconds == 1.0
    path = tmp_path / "fast.txt"
    path.write_text(schedule.text)
    assert _client_error(binary, str(path))["code"] == "connect"
    path.write_text("".join(line + "\n" for line in schedule.text.splitlines() if not line.endswith(" 0")))
    assert _client_error(binary, str(path))["code"] == "connect"  # the last slot: the slot width, without end lines
    first = next(line for line in schedule.text.splitlines() if not line.startswith("#"))
    path.write_text(first + "\n")
    refused = _client_error(binary, str(path))
    assert refused["code"] == "schedule" and "1 TB/s" in refused["message"], refused
