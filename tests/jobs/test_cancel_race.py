"""A cancel racing the worker's claim (SQLite and PostgreSQL): two threads released together, one
cancelling, one claiming and executing, many times. Whichever wins, the item ends cancelled: when the
cancel answered `cancelled` nothing ran at all, and when the worker claimed first the cancel was
recorded and seen, so no run ever succeeds after a cancel, and nothing is left `running`."""

from __future__ import annotations

import asyncio
import random
import threading
from collections import Counter

from sqlalchemy import func, select

from redolab.core.db import make_sessionmaker
from redolab.jobs.models import Job, JobStatus
from redolab.runs import service as run_service
from redolab.runs.models import Run, RunEvent, RunStatus
from redolab.sweeps import service as sweep_service
from redolab.sweeps.models import Sweep
from redolab.sweeps.schemas import SweepCreate
from redolab.worker import Worker
from tests.execution import request_run
from tests.runs.conftest import nothing_left_behind  # noqa: F401 (fixture: no probe outlives a test)
from tests.runs.test_many_connections import this_machine

ITERATIONS = 25
JITTER_SECONDS = 0.01  # each side starts 0-10 ms after the release: both orders happen


def race(sessions, secret_key: str, cancel) -> tuple[object, bool]:
    """Release a cancel and a worker's claim-and-execute together; (the cancel's answer, whether the
    worker ran a job). Bounded: both threads must end within 60 s."""
    gate = threading.Barrier(2)
    answer: dict = {}
    worker = Worker(sessions, secret_key=secret_key)

    def cancelling() -> None:
        gate.wait()
        threading.Event().wait(random.uniform(0, JITTER_SECONDS))
        with sessions() as own:
            answer["status"] = cancel(own).status

    def claiming() -> None:
        gate.wait()
        threading.Event().wait(random.uniform(0, JITTER_SECONDS))
        answer["claimed"] = asyncio.run(worker.run_once())

    threads = [threading.Thread(target=cancelling, daemon=True), threading.Thread(target=claiming, daemon=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "a cancel or a claim hung"
    return answer["status"], answer["claimed"]


def test_a_cancel_racing_the_claim_of_a_run(session, engine, secret_key):
    environment, primary, standby = this_machine(session)
    sessions = make_sessionmaker(engine)
    seen: Counter = Counter()
    for _ in range(ITERATIONS):
        run = request_run(session, environment, primary, standby, duration_seconds=2, interval_seconds=0.5)
        answered, claimed = race(
            sessions,
            secret_key,
            lambda own, run_id=run.id: run_service.cancel_run(session=own, run=own.get(Run, run_id)),
        )
        session.expire_all()
        run = session.get(Run, run.id)
        job = session.scalar(select(Job).where(Job.run_id == run.id))
        events = session.scalar(select(func.count()).select_from(RunEvent).where(RunEvent.run_id == run.id))
        assert run.status is RunStatus.cancelled, run.failure_reason  # never succeeded after the cancel
        assert job.status is JobStatus.cancelled
        if answered is RunStatus.cancelled:  # the answer was the truth: nothing ran, and nothing will
            assert run.client_command is None and events == 0
        if job.worker_id is None:  # the cancel won: the worker never saw the job
            assert not claimed and answered is RunStatus.cancelled and run.started_at is None
            seen["cancelled before the claim"] += 1
        elif run.started_at is None:  # claimed first: the cancel was seen when the run would have begun
            assert run.cancel_requested and run.client_command is None and events == 0
            seen["claimed, cancelled before it began"] += 1
        else:  # it had begun: stopped by the watch, in set-up or while the probes ran
            assert run.cancel_requested and run.finished_at >= run.started_at
            seen["begun, then stopped"] += 1
    print(f"\nruns: {dict(seen)}")


def test_a_cancel_racing_the_claim_of_a_sweep(session, engine, secret_key):
    environment, primary, standby = this_machine(session)
    sessions = make_sessionmaker(engine)
    seen: Counter = Counter()
    for _ in range(ITERATIONS):
        sweep = sweep_service.create_sweep(
            session=session,
            environment=environment,
            sweep_in=SweepCreate(
                client_host_id=primary.id,
                server_host_id=standby.id,
                kind="sockbuf",
                sizes="64K, 128K",
                duration_seconds=2,
                interval_seconds=0.5,
            ),
            requested_by="alice",
        )
        answered, claimed = race(
            sessions,
            secret_key,
            lambda own, sweep_id=sweep.id: sweep_service.cancel_sweep(session=own, sweep=own.get(Sweep, sweep_id)),
        )
        session.expire_all()
        sweep = session.get(Sweep, sweep.id)
        job = session.scalar(select(Job).where(Job.sweep_id == sweep.id))
        assert sweep.status is RunStatus.cancelled, sweep.failure_reason
        assert job.status is JobStatus.cancelled
        assert all(run.status is RunStatus.cancelled for run in sweep.runs)
        assert len(sweep.runs) <= 1  # nothing ran after the cancel was seen
        if answered is RunStatus.cancelled:
            assert sweep.runs == []
        if job.worker_id is None:
            assert not claimed and answered is RunStatus.cancelled and sweep.started_at is None
            seen["cancelled before the claim"] += 1
        elif sweep.started_at is None:
            assert sweep.cancel_requested and sweep.runs == []
            seen["claimed, cancelled before it began"] += 1
        else:
            assert sweep.finished_at >= sweep.started_at  # never a finish before its start
            seen["begun, then stopped"] += 1
    print(f"\nsweeps: {dict(seen)}")
