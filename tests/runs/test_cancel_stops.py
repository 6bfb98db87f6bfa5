"""Cancel means stopped: a probe with a 600 s interval is gone within about a second of the cancel
(it wakes on TERM, not at its next interval), a probe that ignores TERM gets KILL after the grace,
a cancel during set-up ends as cancelled, and a server shutdown stops the probes the same way.
Each test measures cancel-to-gone: from the request until the worker has confirmed no probe left."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

import pytest
from sqlalchemy import select

from redolab.core.db import make_sessionmaker
from redolab.remote.local import LocalTransport
from redolab.remote.transport import command_name
from redolab.runs import runner, service
from redolab.runs.command import PID_PREFIX
from redolab.runs.models import RunEvent, RunStatus
from redolab.worker import Worker
from tests.conftest import migrated_sqlite
from tests.execution import execute_in_background, reload, request_run
from tests.margins import measured_within
from tests.runs.test_many_connections import this_machine
from tests.services import leftover_probes

LONG = {"duration_seconds": 3600, "interval_seconds": 600}
# Blocks SIGTERM, then becomes the probe: the mask survives exec, so TERM stays pending for good.
IGNORE_TERM = (
    "import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """How fast a probe stops does not depend on the database: these runs use SQLite."""
    return migrated_sqlite(tmp_path_factory)


def wait_for_event(session, run, role: str, event: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session.expire_all()
        line = session.scalar(
            select(RunEvent.line).where(RunEvent.run_id == run.id, RunEvent.role == role, RunEvent.event == event)
        )
        if line is not None:
            return json.loads(line)["data"]
        time.sleep(0.05)
    raise AssertionError(f"no {role} {event} event within {timeout} s: {reload(session, run).failure_reason}")


def gone_after(thread: threading.Thread, asked: float, timeout: float = 60) -> float:
    """Seconds from `asked` until the worker finished the run (its clean-up confirms every probe gone)."""
    thread.join(timeout)
    assert not thread.is_alive(), "the worker did not finish the run"
    assert leftover_probes() == []
    return time.monotonic() - asked


def environment_for(kind: str, session, request):
    return request.getfixturevalue("ssh_env") if kind == "ssh" else this_machine(session)


def slower_than(limit: float, what: str):
    """The margin of a stop a busy machine can miss (the test measures it once more first)."""
    return lambda gone: [f"{what} {gone:.2f} s (< {limit:g} s)"] if gone >= limit else []


@pytest.mark.parametrize("kind", ["this machine", "ssh"])
def test_cancel_stops_a_600_s_interval_at_once(kind, session, engine, secret_key, request):
    environment, primary, standby = environment_for(kind, session, request)

    def cancelled() -> float:
        run = request_run(session, environment, primary, standby, **LONG)
        thread = execute_in_background(engine, secret_key)
        wait_for_event(session, run, "client", "start")
        asked = time.monotonic()
        service.cancel_run(session=session, run=reload(session, run))
        gone = gone_after(thread, asked)
        run = reload(session, run)
        assert run.status is RunStatus.cancelled, run.failure_reason
        end = next(json.loads(e.line)["data"] for e in run.events if e.role == "client" and e.event == "end")
        assert end["interrupted"] is True  # it stopped on TERM and reported, not killed
        return gone

    gone = measured_within(cancelled, slower_than(10, "cancel to gone"), "its next interval 600 s away")
    print(f"\n{kind}: cancel to gone {gone:.2f} s (interval 600 s)")


def test_a_probe_that_ignores_term_gets_kill_after_the_grace(session, engine, secret_key, monkeypatch):
    environment, primary, standby = this_machine(session)
    original = LocalTransport.start

    async def start(self, argv):
        argv = [str(arg) for arg in argv]
        if argv[: len(PID_PREFIX)] == PID_PREFIX and command_name(argv) == "redoprobe client":
            argv = [*PID_PREFIX, sys.executable, "-c", IGNORE_TERM, *argv[len(PID_PREFIX) :]]
        return await original(self, argv)

    monkeypatch.setattr(LocalTransport, "start", start)

    def cancelled() -> float:
        run = request_run(session, environment, primary, standby, **LONG)
        thread = execute_in_background(engine, secret_key)
        wait_for_event(session, run, "client", "start")
        asked = time.monotonic()
        service.cancel_run(session=session, run=reload(session, run))
        gone = gone_after(thread, asked)
        run = reload(session, run)
        assert run.status is RunStatus.cancelled, run.failure_reason
        assert not [e for e in run.events if e.role == "client" and e.event == "end"]  # killed: no report
        assert gone >= runner.KILL_GRACE_SECONDS  # KILL only once the grace is over
        return gone

    limit = runner.KILL_GRACE_SECONDS + 10
    gone = measured_within(cancelled, slower_than(limit, "cancel to gone"), "TERM ignored, KILL after the grace")
    print(f"\nTERM ignored: cancel to gone {gone:.2f} s (grace {runner.KILL_GRACE_SECONDS:g} s, then KILL)")


def test_a_cancel_during_set_up_ends_as_cancelled(session, engine, secret_key, monkeypatch):
    """Set-up held up (capturing the hosts' settings takes a minute here): the cancel stops it."""
    environment, primary, standby = this_machine(session)
    capture = runner.capture_settings

    async def slow_capture(*args, **kwargs):
        await asyncio.sleep(60)
        return await capture(*args, **kwargs)

    monkeypatch.setattr(runner, "capture_settings", slow_capture)

    def cancelled() -> float:
        run = request_run(session, environment, primary, standby, **LONG)
        thread = execute_in_background(engine, secret_key)
        deadline = time.monotonic() + 30
        while reload(session, run).status is not RunStatus.running and time.monotonic() < deadline:
            time.sleep(0.05)
        asked = time.monotonic()
        service.cancel_run(session=session, run=reload(session, run))
        gone = gone_after(thread, asked)
        run = reload(session, run)
        assert run.status is RunStatus.cancelled, run.failure_reason
        assert run.failure_reason == "cancelled by the user before the test began"
        assert run.server_command is None and run.client_command is None  # no probe started
        return gone

    gone = measured_within(cancelled, slower_than(5, "cancel to gone"), "a set-up held up for a minute")
    print(f"\nset-up: cancel to gone {gone:.2f} s")


def test_shutdown_stops_the_probes_the_same_way(session, engine, secret_key):
    environment, primary, standby = this_machine(session)

    def stopped() -> float:
        run = request_run(session, environment, primary, standby, **LONG)
        worker = Worker(make_sessionmaker(engine), secret_key=secret_key)
        thread = threading.Thread(target=lambda: asyncio.run(worker.run_once()), daemon=True)
        thread.start()
        wait_for_event(session, run, "client", "start")
        asked = time.monotonic()
        worker.stopping.set()  # what `redolab serve` does when it stops, and `redolab worker` on SIGTERM
        gone = gone_after(thread, asked)
        run = reload(session, run)
        assert run.status is RunStatus.failed
        assert "redolab was stopped during the run" in run.failure_reason
        return gone

    gone = measured_within(stopped, slower_than(10, "stop to gone"), "a shutdown during a run")
    print(f"\nshutdown: stop to gone {gone:.2f} s")
