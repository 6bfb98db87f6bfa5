"""Fair queues (issue 33, item 5), in the app on SQLite and PostgreSQL: caps on queued runs and
sweeps per user and per host pair (429 naming the cap, nothing written), on a sweep's planned time
(422 naming the total and the cap), on a user's active schedules; simultaneous requests at a cap
(only the cap passes); schedules that skip while their own earlier occurrence holds the hosts; the
queue position and estimated start. The same against a real server: test_fair_queues_served.py."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from hypothesis import assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from pydantic import ValidationError
from sqlalchemy import func, select

from redolab.auth.models import Role
from redolab.core.config import get_settings
from redolab.core.db import make_sessionmaker, utcnow
from redolab.core.limits import LimitReached
from redolab.jobs.admission import RUN_SETUP_SECONDS, QueueCaps, check_sweep_time
from redolab.jobs.claims import claim_next
from redolab.jobs.models import Job, JobStatus
from redolab.main import create_app
from redolab.runs.models import Run
from redolab.runs.schemas import RunCreate
from redolab.runs.service import create_run
from redolab.sweeps.models import Schedule, ScheduleStatus, Sweep
from redolab.sweeps.schedules import Repeat, create_schedule, fire_due
from redolab.sweeps.schemas import SweepCreate
from redolab.sweeps.service import planned_seconds
from tests.execution import request_run
from tests.factories import PASSWORD, make_environment, make_host, make_user

CAPS = {"max_queued_per_user": 3, "max_queued_per_host_pair": 5, "max_active_schedules_per_user": 2}
CAPS |= {"max_sweep_seconds": 3600}


@pytest.fixture
def capped(settings, engine):
    """The app with small caps, and a bearer-token client per user name."""
    app = create_app(settings.model_copy(update=CAPS))
    clients: list[TestClient] = []

    def client_of(username: str, role: Role = Role.operator) -> TestClient:
        with make_sessionmaker(engine)() as own:
            make_user(own, username, role=role)
        client = TestClient(app, follow_redirects=False).__enter__()
        clients.append(client)
        answer = client.post("/api/v1/auth/token", data={"username": username, "password": PASSWORD})
        assert answer.status_code == 200, answer.text
        client.headers["Authorization"] = f"Bearer {answer.json()['access_token']}"
        return client

    yield client_of
    for client in clients:
        client.__exit__(None, None, None)


def two_pairs(session):
    environment = make_environment(session)
    hosts = [
        make_host(session, environment, name=name, transport="local", role=role, node_number=node)
        for name, role, node in (("p1", "primary", 1), ("s1", "standby", 1), ("p2", "primary", 2), ("s2", "standby", 2))
    ]
    session.refresh(environment)
    return environment, hosts


def run_body(client_host, server_host, **fields) -> dict:
    return {
        "client_host_id": client_host.id,
        "server_host_id": server_host.id,
        "duration_seconds": 60,
        "interval_seconds": 5,
        **fields,
    }


def count(session, model, *where) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(model).where(*where))


def test_a_user_at_the_cap_is_refused_before_anything_is_written(capped, session):
    environment, (p1, s1, p2, s2) = two_pairs(session)
    ann = capped("ann")
    url = f"/api/v1/environments/{environment.id}/runs"
    assert [ann.post(url, json=run_body(p1, s1)).status_code for _ in range(3)] == [201] * 3
    refused = ann.post(url, json=run_body(p2, s2))  # another pair: the user's own cap still holds
    assert refused.status_code == 429, refused.text
    detail = refused.json()["detail"]
    assert "REDOLAB_MAX_QUEUED_PER_USER=3" in detail and "3 runs and sweeps queued" in detail
    assert "cancel some" in detail
    sweep = ann.post(f"/api/v1/environments/{environment.id}/sweeps", json=run_body(p2, s2, conns_max=2))
    assert sweep.status_code == 429  # a sweep is one queued job of the same user
    assert count(session, Run) == 3 and count(session, Job) == 3 and count(session, Sweep) == 0
    jobs = session.scalars(select(Job)).all()
    assert {job.requested_by for job in jobs} == {"ann"}
    assert {job.planned_seconds for job in jobs} == {60 + RUN_SETUP_SECONDS}


def test_a_host_pair_at_the_cap_is_refused_either_way_round(capped, session):
    environment, (p1, s1, p2, s2) = two_pairs(session)
    url = f"/api/v1/environments/{environment.id}/runs"
    ann, ben = capped("ann"), capped("ben")
    assert [ann.post(url, json=run_body(p1, s1)).status_code for _ in range(3)] == [201] * 3
    assert [ben.post(url, json=run_body(s1, p1)).status_code for _ in range(2)] == [201] * 2
    refused = ben.post(url, json=run_body(p1, s1))
    assert refused.status_code == 429, refused.text
    assert "Hosts p1 and s1 have 5 runs and sweeps queued" in refused.json()["detail"]
    assert "REDOLAB_MAX_QUEUED_PER_HOST_PAIR=5" in refused.json()["detail"]
    assert ben.post(url, json=run_body(p2, s2)).status_code == 201  # another pair is free
    assert count(session, Run) == 6


def test_simultaneous_requests_at_the_cap_pass_only_up_to_it(capped, session):
    """Eight requests of one user released together: the check and the insert are one serialised
    step, so exactly the cap's three are queued (without it, several saw 'two queued' at once)."""
    environment, (p1, s1, _, _) = two_pairs(session)
    ann = capped("ann")
    barrier = threading.Barrier(8)

    def post(_):
        barrier.wait(timeout=30)
        return ann.post(f"/api/v1/environments/{environment.id}/runs", json=run_body(p1, s1)).status_code

    with ThreadPoolExecutor(8) as pool:
        answers = sorted(pool.map(post, range(8)))
    assert answers == [201] * 3 + [429] * 5
    assert count(session, Job, Job.status == JobStatus.queued) == 3


def test_a_sweep_planned_past_the_cap_is_refused_naming_both(capped, session):
    environment, (p1, s1, _, _) = two_pairs(session)
    ann = capped("ann")
    body = run_body(p1, s1, kind="sockbuf", sizes="64K, 256K, 1M", conns_values="1, 4", repetitions=3)
    body |= {"duration_seconds": 300}  # 18 runs x 310 s = 5,580 s
    refused = ann.post(f"/api/v1/environments/{environment.id}/sweeps", json=body)
    assert refused.status_code == 422, refused.text
    message = refused.json()["detail"][0]["msg"]
    assert "5,580 s" in message and "REDOLAB_MAX_SWEEP_SECONDS=3600" in message
    assert count(session, Sweep) == 0 and count(session, Job) == 0


@hypothesis_settings(max_examples=60, deadline=None)
@given(
    start=st.integers(1, 64),
    extra=st.integers(0, 512),
    step=st.one_of(st.none(), st.integers(1, 64)),
    repetitions=st.integers(1, 10),
    duration=st.floats(0.5, 3600),
    cap=st.integers(60, 366 * 86400),
)
def test_the_planned_time_counts_every_point_and_repetition(start, extra, step, repetitions, duration, cap):
    stepped = {} if step is None else {"conns_step": step}  # the form's blank step: connection_steps' default
    try:
        sweep_in = SweepCreate(
            client_host_id=1,
            server_host_id=2,
            conns_start=start,
            conns_max=start + extra,
            **stepped,
            repetitions=repetitions,
            duration_seconds=duration,
            interval_seconds=min(duration, 0.5),
        )
    except ValidationError:  # more grid points than a sweep may have: refused before any cap
        assume(False)
    planned = planned_seconds(sweep_in)
    assert planned == pytest.approx(len(sweep_in.grid_values()) * repetitions * (duration + RUN_SETUP_SECONDS))
    refusal = check_sweep_time(planned, QueueCaps(sweep_seconds=cap))
    assert (refusal is None) == (planned <= cap)
    if refusal:
        assert f"REDOLAB_MAX_SWEEP_SECONDS={cap}" in refusal and f"{planned:,.0f} s" in refusal


def hourly(session, environment, client, server, user="ann", caps=QueueCaps(active_schedules_per_user=2)):
    return create_schedule(
        session=session,
        environment=environment,
        item=RunCreate(client_host_id=client.id, server_host_id=server.id, duration_seconds=1, interval_seconds=0.5),
        repeat=Repeat(every_seconds="1 h", until=utcnow() + timedelta(hours=5)),
        requested_by=user,
        caps=caps,
    )


def test_a_users_active_schedules_are_capped_also_when_made_at_once(session, engine):
    environment, (p1, s1, p2, s2) = two_pairs(session)
    sessions = make_sessionmaker(engine)
    barrier = threading.Barrier(4)
    pairs = [(p1, s1), (p2, s2), (s1, p1), (s2, p2)]

    def make(pair):
        barrier.wait(timeout=30)
        with sessions() as own:
            try:
                hourly(own, own.get(type(environment), environment.id), *pair)
                return "made"
            except LimitReached as refusal:
                assert refusal.status_code == 429 and "REDOLAB_MAX_ACTIVE_SCHEDULES_PER_USER=2" in refusal.message
                return "refused"

    with ThreadPoolExecutor(4) as pool:
        answers = sorted(pool.map(make, pairs))
    assert answers == ["made", "made", "refused", "refused"]
    assert count(session, Schedule, Schedule.status == ScheduleStatus.active) == 2


def test_an_occurrence_waits_for_none_while_its_own_earlier_one_holds_the_hosts(session, engine):
    environment, (p1, s1, _, _) = two_pairs(session)
    sessions = make_sessionmaker(engine)
    schedule = hourly(session, environment, p1, s1)
    first = session.scalar(select(Run).where(Run.schedule_id == schedule.id))
    assert claim_next(sessions, "w1").run_id == first.id  # it runs (for a long time, say)
    assert fire_due(sessions, now=schedule.next_at) == 0
    session.refresh(schedule)
    assert schedule.skipped[-1]["reason"] == f"skipped: the hosts were busy with run #{first.id}"
    assert schedule.status is ScheduleStatus.active  # a skip is not a failure
    assert count(session, Run, Run.schedule_id == schedule.id) == 1


@pytest.fixture
def one_queued_per_user(monkeypatch):
    """This process's settings (what the worker firing schedules reads) with a cap of one."""
    monkeypatch.setenv("REDOLAB_MAX_QUEUED_PER_USER", "1")
    get_settings.cache_clear()
    yield
    monkeypatch.delenv("REDOLAB_MAX_QUEUED_PER_USER")
    get_settings.cache_clear()


def test_an_occurrence_past_the_queue_cap_is_skipped_and_the_schedule_goes_on(session, engine, one_queued_per_user):
    environment, (p1, s1, p2, s2) = two_pairs(session)
    schedule = hourly(session, environment, p1, s1)
    for job in session.scalars(select(Job)):  # the first occurrence ran and ended
        job.status = JobStatus.done
    session.commit()
    run_in = RunCreate(client_host_id=p2.id, server_host_id=s2.id, duration_seconds=1, interval_seconds=0.5)
    create_run(session=session, environment=environment, run_in=run_in, requested_by="ann")  # elsewhere
    assert fire_due(make_sessionmaker(engine), now=schedule.next_at) == 0
    session.refresh(schedule)
    assert schedule.skipped[-1]["reason"].startswith("skipped: You have 1 runs and sweeps queued")
    assert "REDOLAB_MAX_QUEUED_PER_USER=1" in schedule.skipped[-1]["reason"]
    assert schedule.status is ScheduleStatus.active  # a full queue is no failure of the schedule
    assert count(session, Run, Run.schedule_id == schedule.id) == 1


def test_the_first_occurrence_is_skipped_while_the_hosts_are_busy(session):
    environment, (p1, s1, _, _) = two_pairs(session)
    busy = request_run(session, environment, s1, p1)
    schedule = hourly(session, environment, p1, s1)
    assert count(session, Run, Run.schedule_id == schedule.id) == 0
    assert schedule.skipped[-1]["reason"] == f"skipped: the hosts were busy with run #{busy.id}"
    assert schedule.status is ScheduleStatus.active
