"""SYNC under load through the lab (issue 59, item 4): one SYNC connection of commit-sized messages on
an idle 100 Mbit/s path, then again while an ASYNC load of four streams fills the path's bottleneck
(runs.loaded, both runs started together on the same hosts). A full bottleneck queue holds
QUEUE_BYTES, QUEUE_DELAY at the rate, ahead of every SYNC message: the acknowledgement p99 under load
exceeds the idle p99 by at least that, and the SYNC commit card shows both.

Runs with the CPU first (tests/conftest.py MEASURING): it times acknowledgements to the millisecond
through a userspace delay line."""

from __future__ import annotations

import json
import threading
import time

from redolab.core.db import make_sessionmaker
from redolab.core.units import format_duration
from redolab.environments.models import Environment
from redolab.lab import control
from redolab.lab.topology import Shape
from redolab.planning.service import environment_plan
from redolab.runs import loaded
from redolab.runs.models import Run, RunStatus
from redolab.runs.parsers.redoprobe import run_metrics
from redolab.runs.schemas import RunCreate
from redolab.web.planning import plan_context
from tests.execution import execute_next
from tests.lab.test_lab import RTT, lab, needs_root  # noqa: F401  (the module's lab, made for this file)
from tests.margins import measured_within

RATE = 100_000_000  # bits per second
QUEUE_BYTES = 250_000
QUEUE_DELAY = QUEUE_BYTES * 8 / RATE  # 20 ms: what a full bottleneck adds to every packet behind it
SYNC_RUN = {"mode": "sync", "message_bytes": "8K", "duration_seconds": 3, "interval_seconds": 1}


def _p99(engine, run_id: int) -> float:
    with make_sessionmaker(engine)() as session:
        run = session.get(Run, run_id)
        assert run.status is RunStatus.succeeded, run.failure_reason
        return run_metrics([e.line for e in run.events if e.role == "client"]).ack_p99_seconds


def _pair(session, environment_id: int):
    environment = session.get(Environment, environment_id)
    hosts = {h.name: h for h in environment.hosts}
    ids = {"client_host_id": hosts["lab-primary-1"].id, "server_host_id": hosts["lab-standby-1"].id}
    return environment, RunCreate(**ids, **SYNC_RUN)


def _idle(engine, environment_id: int) -> tuple[int, float]:
    from redolab.runs.service import create_run

    with make_sessionmaker(engine)() as session:
        environment, sync_in = _pair(session, environment_id)
        run = create_run(session=session, environment=environment, run_in=sync_in, requested_by="alice")
    assert execute_next(engine, "lab-tests")
    return run.id, _p99(engine, run.id)


def _under_load(engine, environment_id: int) -> tuple[int, float]:
    with make_sessionmaker(engine)() as session:
        environment, sync_in = _pair(session, environment_id)
        sync, load = loaded.create_sync_under_load(
            session=session, environment=environment, sync_in=sync_in, load_conns=4, requested_by="alice"
        )
        sync_id, load_id = sync.id, load.id

    def claim_one() -> None:  # SQLite: a claim that meets the other's write lock finds nothing; try again
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not execute_next(engine, "lab-tests"):
            time.sleep(0.05)

    workers = [threading.Thread(target=claim_one) for _ in range(2)]
    for worker in workers:  # two workers claim the pair at once: their jobs are one group
        worker.start()
    for worker in workers:
        worker.join(60)
    _p99(engine, load_id)  # the load ran to its end
    return sync_id, _p99(engine, sync_id)


def test_sync_p99_under_an_async_load_exceeds_the_idle_p99_by_the_queue_delay(lab):  # noqa: F811
    engine, environment_id, paths = lab
    control.change(paths, Shape(rtt_seconds=RTT, rate_bits_per_second=RATE, queue_bytes=QUEUE_BYTES))
    try:

        def measure():
            idle_id, idle = _idle(engine, environment_id)
            loaded_id, under = _under_load(engine, environment_id)
            assert idle >= RTT  # every acknowledgement crosses the path
            return idle_id, idle, loaded_id, under

        def misses(found):
            _, idle, _, under = found
            if under >= idle + QUEUE_DELAY:
                return []
            return [f"p99 {under * 1e3:.1f} ms under load < idle {idle * 1e3:.1f} ms + queue {QUEUE_DELAY * 1e3:g} ms"]

        idle_id, idle, loaded_id, under = measured_within(measure, misses, "SYNC under a 4-stream ASYNC load")
        with make_sessionmaker(engine)() as session:
            plan = environment_plan(session=session, environment=session.get(Environment, environment_id))
            row = dict(plan.card("commit").rows)["SYNC acknowledgement idle / under load"]
            environment = session.get(Environment, environment_id)
            cdf = json.loads(plan_context(session, environment, history=None)["ack_cdf_figure"])
        idle_curve, loaded_curve = cdf["data"]  # the page's CDF from both runs' stored histograms
        assert loaded_curve["name"] == f"under load, run #{loaded_id}" and idle_curve["y"][-1] == 100.0
        assert max(loaded_curve["x"]) > max(idle_curve["x"])
        assert f"idle run #{idle_id}, under load run #{loaded_id}" in row, row
        assert f"; p99 {format_duration(idle)} / {format_duration(under)} (+" in row, row  # both on the card
        assert row.startswith("p50 ") and " at p99) per 8 KiB message" in row, row
    finally:
        control.change(paths, Shape(rtt_seconds=RTT, rate_bits_per_second=1_000_000_000))
