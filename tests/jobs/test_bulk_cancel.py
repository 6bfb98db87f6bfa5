"""An admin's bulk cancel (issue 33, item 5): one user's, one environment's or one host pair's queued
and running runs and sweeps, by the same one-step cancel as each item's own button, with their active
schedules stopped; in the API (answering how many) and on the users page (admins only)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from redolab.auth.models import Role
from redolab.core.db import make_sessionmaker
from redolab.jobs.claims import claim_next
from redolab.jobs.models import Job, JobStatus
from redolab.runs.models import Run, RunStatus
from redolab.runs.schemas import RunCreate
from redolab.runs.service import create_run
from redolab.sweeps.models import Schedule, ScheduleStatus, Sweep
from redolab.sweeps.schemas import SweepCreate
from redolab.sweeps.service import create_sweep
from tests.jobs.test_fair_queues import hourly, two_pairs
from tests.web.test_runs import HTMX


def queue(session, environment, client, server, user: str, what: str = "run"):
    fields = {"client_host_id": client.id, "server_host_id": server.id, "duration_seconds": 60, "interval_seconds": 5}
    if what == "sweep":
        sweep_in = SweepCreate(**fields, conns_max=2)
        return create_sweep(session=session, environment=environment, sweep_in=sweep_in, requested_by=user)
    return create_run(session=session, environment=environment, run_in=RunCreate(**fields), requested_by=user)


def statuses(session, model) -> dict[int, tuple[RunStatus, bool]]:
    session.expire_all()
    return {item.id: (item.status, item.cancel_requested) for item in session.scalars(select(model))}


def test_an_admin_cancels_one_users_work_and_nothing_else(api_client, session, engine):
    environment, (p1, s1, p2, s2) = two_pairs(session)
    running = queue(session, environment, p1, s1, "ann")
    assert claim_next(make_sessionmaker(engine), "w1").run_id == running.id
    waiting = [queue(session, environment, p1, s1, "ann") for _ in range(3)]
    sweep = queue(session, environment, p2, s2, "ann", "sweep")
    schedule = hourly(session, environment, p2, s2)  # ann's; its first occurrence waits behind the sweep
    other = queue(session, environment, s1, p1, "ben")
    answer = api_client.post("/api/v1/admin/cancel", json={"user": "ann"})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "runs_cancelled": 3,
        "runs_stopping": 1,
        "sweeps_cancelled": 1,
        "sweeps_stopping": 0,
        "schedules_stopped": 1,
        "count": 5,
    }
    runs = statuses(session, Run)
    assert all(runs[run.id] == (RunStatus.cancelled, True) for run in waiting)
    # claimed by a worker: the cancel is recorded, and seen when the worker would mark it running
    assert runs[running.id] == (RunStatus.queued, True)
    assert runs[other.id] == (RunStatus.queued, False)
    assert statuses(session, Sweep)[sweep.id][0] is RunStatus.cancelled
    assert session.get(Schedule, schedule.id).status is ScheduleStatus.stopped
    queued = session.scalars(select(Job.run_id).where(Job.status == JobStatus.queued)).all()
    assert queued == [other.id]


@pytest.mark.parametrize("selector", ["environment", "pair", "reversed pair"])
def test_by_environment_or_host_pair(api_client, session, selector):
    environment, (p1, s1, p2, s2) = two_pairs(session)
    elsewhere, other_hosts = two_pairs(session)
    mine = [queue(session, environment, p1, s1, "ann"), queue(session, environment, s1, p1, "ben")]
    spared = [queue(session, environment, p2, s2, "ann")] if selector != "environment" else []
    body = {
        "environment": {"environment_id": environment.id},
        "pair": {"client_host_id": p1.id, "server_host_id": s1.id},
        "reversed pair": {"client_host_id": s1.id, "server_host_id": p1.id},
    }[selector]
    answer = api_client.post("/api/v1/admin/cancel", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["count"] == answer.json()["runs_cancelled"] == 2
    if selector == "environment":
        spared = [queue(session, elsewhere, *other_hosts[:2], "ann")]
    runs = statuses(session, Run)
    assert all(runs[run.id][0] is RunStatus.cancelled for run in mine)
    assert all(runs[run.id][0] is RunStatus.queued for run in spared)


@pytest.mark.parametrize(
    "body",
    [{}, {"user": "ann", "environment_id": 1}, {"client_host_id": 1}, {"environment_id": 2**63},
     {"environment_id": 0}, {"user": ""}, {"users": "ann"}],
)  # fmt: skip
def test_exactly_one_selector_is_required(api_client, body):
    answer = api_client.post("/api/v1/admin/cancel", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["msg"]


def test_only_admins_cancel_in_bulk(app, session):
    from fastapi.testclient import TestClient

    from tests.factories import PASSWORD, make_user

    make_user(session, "olga", role=Role.operator)
    with TestClient(app) as client:
        token = client.post("/api/v1/auth/token", data={"username": "olga", "password": PASSWORD}).json()
        headers = {"Authorization": f"Bearer {token['access_token']}"}
        assert client.post("/api/v1/admin/cancel", json={"user": "olga"}, headers=headers).status_code == 403


def test_the_users_page_has_the_form_and_it_cancels(browser_client, session):
    environment, (p1, s1, _, _) = two_pairs(session)
    runs = [queue(session, environment, p1, s1, "alice") for _ in range(2)]
    page = browser_client.get("/users")
    assert page.status_code == 200
    assert 'hx-post="/admin/cancel"' in page.text and 'id="bulk-cancel"' in page.text
    answer = browser_client.post("/admin/cancel", data={"user": "alice"}, headers=HTMX)
    assert answer.status_code == 200, answer.text
    assert answer.text.startswith("Cancelled 2 queued runs and 0 queued sweeps")
    assert {status for status, _ in statuses(session, Run).values()} == {RunStatus.cancelled}
    assert len(runs) == 2
    refused = browser_client.post("/admin/cancel", data={"environment_id": "x"}, headers=HTMX)
    assert refused.status_code == 422 and "environment_id" in refused.text
