"""A cancelled sweep changes no host setting afterwards: cancelled once the worker has claimed it, it
never begins (no sysctl, no run); cancelled during a run of a kernel-maximum sweep, that run stops
within about a second and the only sysctls after the cancel put the original values back.

The sysctls are recorded instead of run (kernel sweeps that really change them run in tests/lab)."""

from __future__ import annotations

import asyncio
import time

import pytest

from redolab.core.db import make_sessionmaker
from redolab.jobs.claims import claim_next
from redolab.jobs.models import Job, JobStatus
from redolab.remote.kernel import read_buffers
from redolab.remote.local import LocalTransport
from redolab.runs.models import RunStatus
from redolab.sweeps import service, sweeper
from redolab.sweeps.models import Sweep
from redolab.sweeps.schemas import SweepCreate
from redolab.worker import Worker
from tests.conftest import migrated_sqlite
from tests.execution import execute_in_background
from tests.margins import measured_within
from tests.runs.test_cancel_stops import wait_for_event
from tests.runs.test_many_connections import this_machine


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """The order of sysctls and runs does not depend on the database (the race runs on both in
    tests/jobs/test_cancel_race.py): these sweeps use SQLite."""
    return migrated_sqlite(tmp_path_factory)


@pytest.fixture
def sysctls(monkeypatch):
    """Every tcp_rmem/tcp_wmem a sweep sets, as (monotonic time, values), instead of setting it."""
    done: list[tuple[float, dict]] = []

    async def set_buffers(transport, buffers, *, prefix):
        done.append((time.monotonic(), buffers))

    async def privilege(transport):
        return []

    monkeypatch.setattr(sweeper, "set_buffers", set_buffers)
    monkeypatch.setattr(sweeper, "privilege", privilege)
    return done


def kernel_sweep(session, **fields) -> tuple[Sweep, dict]:
    environment, primary, standby = this_machine(session)
    for host in (primary, standby):
        host.allow_kernel_changes = True
    session.commit()
    sweep = service.create_sweep(
        session=session,
        environment=environment,
        sweep_in=SweepCreate(
            client_host_id=primary.id, server_host_id=standby.id, kind="kernel_max", sizes="1M, 2M", **fields
        ),
        requested_by="alice",
    )
    return sweep, asyncio.run(read_buffers(LocalTransport()))


def reload_sweep(session, sweep: Sweep) -> Sweep:
    session.expire_all()
    return session.get(Sweep, sweep.id)


def test_cancelled_after_the_claim_it_never_begins(session, engine, secret_key, sysctls):
    sweep, _ = kernel_sweep(session, duration_seconds=2, interval_seconds=0.5)
    sessions = make_sessionmaker(engine)
    job = claim_next(sessions, "worker-a")
    answered = service.cancel_sweep(session=session, sweep=reload_sweep(session, sweep))
    assert answered.status is RunStatus.queued and answered.cancel_requested  # recorded, not yet seen
    asyncio.run(Worker(sessions, secret_key=secret_key).run_job(job))
    sweep = reload_sweep(session, sweep)
    assert sweep.status is RunStatus.cancelled and sweep.failure_reason == "cancelled by the user before it started"
    assert sweep.started_at is None and sweep.runs == []
    assert sysctls == []  # no host setting was touched
    assert session.get(Job, job.id).status is JobStatus.cancelled


def test_cancelled_mid_run_only_puts_the_original_values_back(session, engine, secret_key, sysctls):

    def cancelled() -> float:
        sysctls.clear()
        sweep, original = kernel_sweep(session, duration_seconds=3600, interval_seconds=600)
        thread = execute_in_background(engine, secret_key)
        deadline = time.monotonic() + 30
        while not reload_sweep(session, sweep).runs and time.monotonic() < deadline:
            time.sleep(0.05)
        wait_for_event(session, reload_sweep(session, sweep).runs[0], "client", "start")
        asked = time.monotonic()
        service.cancel_sweep(session=session, sweep=reload_sweep(session, sweep))
        thread.join(60)
        gone = time.monotonic() - asked
        assert not thread.is_alive()
        sweep = reload_sweep(session, sweep)
        assert sweep.status is RunStatus.cancelled, sweep.failure_reason
        assert [run.status for run in sweep.runs] == [RunStatus.cancelled]  # the 2 MiB point never ran
        before = [values for at, values in sysctls if at < asked]
        after = [values for at, values in sysctls if at >= asked]
        assert [values["tcp_rmem"][2] for values in before] == [1024 * 1024] * 2  # both hosts, the first size
        assert after == [original, original]  # after the cancel: only the originals, put back
        assert sweep.kernel_restored is True
        return gone

    # the run's next interval was 600 s away; a busy machine may take longer than 10 s: once more then
    gone = measured_within(
        cancelled,
        lambda gone: [f"cancel to gone {gone:.2f} s (< 10 s)"] * (gone >= 10),
        "a kernel sweep cancelled mid-run",
    )
    print(f"\nkernel sweep: cancel to gone {gone:.2f} s")
