"""The layers agree on limits (issue 33): a run or sweep interval the probe would refuse (it takes
0.1 to 3600 s, redoprobe/main.c) is refused when it is asked for, before anything is queued."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from redolab.runs.models import Run
from redolab.sweeps.models import Sweep
from tests.conftest import migrated_sqlite
from tests.web.test_runs import local_env

TOO_SHORT_OR_LONG = [0.05, "50 ms", 0.0999, 3600.5, "2 h", 0, -1, ""]


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """Validation before any row is written, the same on either database: run on SQLite."""
    return migrated_sqlite(tmp_path_factory)


def _count(session, model) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(model))


@pytest.mark.parametrize("interval", TOO_SHORT_OR_LONG)
def test_a_run_interval_the_probe_refuses_is_refused_by_the_api(api_client, session, interval):
    environment, primary, standby = local_env(session)
    response = api_client.post(
        f"/api/v1/environments/{environment.id}/runs",
        json={
            "client_host_id": primary.id,
            "server_host_id": standby.id,
            "duration_seconds": 3600,
            "interval_seconds": interval,
        },
    )
    assert response.status_code == 422, response.text
    assert ["body", "interval_seconds"] in [error["loc"] for error in response.json()["detail"]]
    assert _count(session, Run) == 0


@pytest.mark.parametrize("interval", TOO_SHORT_OR_LONG)
def test_a_sweep_interval_the_probe_refuses_is_refused_by_the_api(api_client, session, interval):
    environment, primary, standby = local_env(session)
    response = api_client.post(
        f"/api/v1/environments/{environment.id}/sweeps",
        json={
            "client_host_id": primary.id,
            "server_host_id": standby.id,
            "duration_seconds": 3600,
            "interval_seconds": interval,
            "conns_max": 2,
        },
    )
    assert response.status_code == 422, response.text
    assert ["body", "interval_seconds"] in [error["loc"] for error in response.json()["detail"]]
    assert _count(session, Sweep) == 0


@pytest.mark.parametrize("interval", [0.1, "100 ms", 1, "1 h"])
def test_the_probes_own_bounds_are_accepted(api_client, session, interval):
    environment, primary, standby = local_env(session)
    response = api_client.post(
        f"/api/v1/environments/{environment.id}/runs",
        json={
            "client_host_id": primary.id,
            "server_host_id": standby.id,
            "duration_seconds": 3600,
            "interval_seconds": interval,
        },
    )
    assert response.status_code == 201, response.text


def test_the_run_form_refuses_it_too(browser_client, session):
    environment, primary, standby = local_env(session)
    response = browser_client.post(
        f"/environments/{environment.id}/runs",
        data={
            "client_host_id": primary.id,
            "server_host_id": standby.id,
            "duration_seconds": "10 s",
            "interval_seconds": "20 ms",
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 422 and "0.1 s to 1 h" in response.text
    assert _count(session, Run) == 0
