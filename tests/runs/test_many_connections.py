"""Runs of many connections: 1,024 (the most the API accepts) work end to end on "This machine" and
over SSH, though every interval line is about 100 KB; output redolab cannot read fails the run with
its real cause, read to its end so the probe never blocks (no "SSH connection dropped" on a local
host)."""

from __future__ import annotations

import json
import time

import pytest

from redolab.remote.local import LocalTransport
from redolab.remote.transport import MAX_LINE_BYTES, command_name
from redolab.runs.command import PID_PREFIX
from redolab.runs.models import RunStatus
from tests.conftest import migrated_sqlite
from tests.execution import execute_next, reload, request_run
from tests.factories import make_environment, make_host

MOST_CONNECTIONS = 1024


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """What the transports read is the same on either database: these runs use SQLite."""
    return migrated_sqlite(tmp_path_factory)


def this_machine(session):
    """(environment, primary, standby), both "This machine": the local transport, no SSH."""
    environment = make_environment(session)
    primary = make_host(session, environment, role="primary", transport="local")
    standby = make_host(session, environment, role="standby", transport="local")
    session.commit()
    return environment, primary, standby


def replace_client(monkeypatch, script: str) -> None:
    """The run's client becomes `sh -c script`, started as the worker starts the client (its first
    line must be its PID); the server stays the real probe."""
    original = LocalTransport.start

    async def start(self, argv):
        argv = [str(arg) for arg in argv]
        if argv[: len(PID_PREFIX)] == PID_PREFIX and command_name(argv) == "redoprobe client":
            return await original(self, ["sh", "-c", script])
        return await original(self, argv)

    monkeypatch.setattr(LocalTransport, "start", start)


@pytest.mark.parametrize("kind", ["this machine", "ssh"])
def test_1024_connections_end_to_end(kind, session, engine, secret_key, request):
    if kind == "ssh":
        environment, primary, standby = request.getfixturevalue("ssh_env")
    else:
        environment, primary, standby = this_machine(session)
    # paced (1 Gbit/s in all): 2,048 busy threads on a small test machine would measure the CPU
    run = request_run(
        session,
        environment,
        primary,
        standby,
        conns=MOST_CONNECTIONS,
        duration_seconds=2,
        interval_seconds=0.5,
        message_bytes="64K",
        rate_bits_per_second="1 Gbit/s",
    )
    started = time.monotonic()
    assert execute_next(engine, secret_key)
    elapsed = time.monotonic() - started
    run = reload(session, run)
    assert run.status is RunStatus.succeeded, run.failure_reason
    assert run.bytes_received == run.bytes_sent > 0
    for role in ("client", "server"):
        lines = [e.line for e in run.events if e.role == role and e.event == "interval"]
        assert len(lines) >= 3, role
        assert min(map(len, lines)) > 64 * 1024  # each past asyncio's default line limit
        assert all(len(json.loads(line)["data"]["streams"]) == MOST_CONNECTIONS for line in lines)
    print(f"1,024 connections on {kind}: {elapsed:.1f} s from claim to end, lines of {len(lines[0]):,} bytes")


def test_output_redolab_cannot_read_fails_with_its_cause(session, engine, secret_key, monkeypatch):
    """A client line past MAX_LINE_BYTES, then endless output: the run fails naming the line, the
    rest is read and dropped (the writer is never blocked), and the client is stopped by TERM."""
    environment, primary, standby = this_machine(session)
    replace_client(
        monkeypatch,
        f"echo \"$$\"; head -c {MAX_LINE_BYTES + 1} /dev/zero | tr '\\0' x; echo; exec yes '{{}}'",
    )
    run = request_run(session, environment, primary, standby, duration_seconds=30, interval_seconds=1)
    started = time.monotonic()
    assert execute_next(engine, secret_key)
    elapsed = time.monotonic() - started
    run = reload(session, run)
    assert run.status is RunStatus.failed
    assert f"printed a line of more than {MAX_LINE_BYTES:,} bytes" in run.failure_reason
    assert "SSH" not in run.failure_reason  # a local host has no SSH connection to blame
    # stopped at once: the claim to the end took less than the client's own 30 s (left to run, it
    # could not end sooner), whatever the load
    assert elapsed < 30, (elapsed, run.failure_reason)


def test_text_that_is_not_an_event_fails_with_its_cause(session, engine, secret_key, monkeypatch):
    environment, primary, standby = this_machine(session)
    replace_client(monkeypatch, 'echo "$$"; echo "Segmentation fault (core dumped)"; exec sleep 30')
    run = request_run(session, environment, primary, standby, duration_seconds=30, interval_seconds=1)
    started = time.monotonic()
    assert execute_next(engine, secret_key)
    elapsed = time.monotonic() - started
    run = reload(session, run)
    assert run.status is RunStatus.failed
    assert f"redoprobe client on {primary.name} printed something unexpected" in run.failure_reason
    assert "SSH" not in run.failure_reason
    assert elapsed < 30, elapsed  # the client was sent TERM when the line arrived, not left to its 30 s
