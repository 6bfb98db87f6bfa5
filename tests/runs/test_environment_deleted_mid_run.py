"""An environment deleted under a running run or sweep on "This machine" (issue 33, item 6), against a
real `redolab serve` with its worker: the run's rows go with the environment, the worker stops its
probes at once, writes nothing more, and its log says so in one line, without a traceback."""

from __future__ import annotations

import time

import httpx2 as httpx
import pytest

from tests.conftest import migrated
from tests.jobs.test_fair_queues_served import STARTUP_SECONDS, Lab, populate, run_body, token
from tests.services import leftover_probes, start_redolab

PROBE_STOPPED_SECONDS = 15  # TERM, then KILL after 5 s: well within this


@pytest.fixture
def serving(tmp_path):
    url = migrated(f"sqlite:///{tmp_path / 'redolab.db'}")
    users = {"root": "root", "ann": "ann", "ben": "ben"}
    environment_id, pairs = populate(url, users)
    server = start_redolab(tmp_path, timeout=STARTUP_SECONDS, REDOLAB_DATABASE_URL=url)
    lab = Lab(server.url, environment_id, pairs, (tmp_path / "probe-writes").resolve(), users)
    yield lab, server
    server.stop()


def _wait_until(check, seconds: float, what: str, server) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what}:\n" + "".join(server.output[-40:])
        time.sleep(0.2)


@pytest.mark.parametrize("what", ["runs", "sweeps"])
def test_deleting_the_environment_under_a_running_item_ends_it_quietly(serving, what):
    lab, server = serving
    with httpx.Client(base_url=lab.url, timeout=60) as client:
        root = token(client, "root")
        body = run_body(lab.pairs[0], duration_seconds=60, interval_seconds=0.5)
        if what == "sweeps":
            body |= {"conns_max": 2}
        created = client.post(f"/api/v1/environments/{lab.environment_id}/{what}", json=body, headers=root)
        assert created.status_code == 201, created.text
        item = f"/api/v1/{what}/{created.json()['id']}"

        def measuring() -> bool:  # the probes are up and intervals arrive
            return bool(leftover_probes()) and _status(client, item, root) == "running"

        _wait_until(measuring, 60, "the run never started", server)
        _wait_until(lambda: _intervals_stored(client, item, root) >= 2, 30, "no intervals stored", server)
        deleted = client.delete(f"/api/v1/environments/{lab.environment_id}", headers=root)
        assert deleted.status_code == 204, deleted.text
        _wait_until(lambda: not leftover_probes(), PROBE_STOPPED_SECONDS, "a probe outlived its run", server)
        _wait_until(lambda: "deleted while it ran" in "".join(server.output), 10, "nothing logged", server)
        assert client.get(item, headers=root).status_code == 404
        assert client.get("/healthz").status_code == 200
    log = "".join(server.output)
    assert "Traceback" not in log and "crashed" not in log and "exception" not in log.lower(), log[-4000:]


def _intervals_stored(client, item: str, headers) -> int:
    """The client interval events stored for the item (a run, or a sweep's runs)."""
    body = client.get(item, headers=headers).json()
    run_ids = [run["id"] for run in body["runs"]] if "runs" in body else [body["id"]]
    stored = 0
    for run_id in run_ids:
        events = client.get(f"/api/v1/runs/{run_id}/events", headers=headers).json()
        stored += sum(event["role"] == "client" and event["event"] == "interval" for event in events)
    return stored


def _status(client, item: str, headers) -> str | None:
    answer = client.get(item, headers=headers)
    if answer.status_code != 200:
        return None
    body = answer.json()
    return (body.get("sweep") or body)["status"]
