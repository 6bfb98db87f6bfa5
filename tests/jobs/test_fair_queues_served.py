"""Fair queues against a real `redolab serve` (issue 33, items 5 and 6), on SQLite and on PostgreSQL
with two web processes: simultaneous requests at the per-user cap (only the cap passes), a bounded
flood at the host-pair cap, a sweep planned past its cap, the queue's place in the JSON, paging, and
an admin's bulk cancel that frees the queue; and an environment deleted under a running run on
"This machine", which ends quietly (its probes stopped, no traceback in the worker's log)."""

from __future__ import annotations

import itertools
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx
import pytest

from redolab.auth.models import Role
from redolab.core.db import make_engine, make_sessionmaker
from tests.conftest import _fresh_postgres_database, migrated
from tests.factories import PASSWORD, make_environment, make_host, make_user
from tests.services import start_redolab

CAPS = {"REDOLAB_MAX_QUEUED_PER_USER": "5", "REDOLAB_MAX_QUEUED_PER_HOST_PAIR": "8"}
CAPS |= {"REDOLAB_MAX_SWEEP_SECONDS": "3600"}
FLOOD = 30  # requests of one user, one after the other: bounded
STARTUP_SECONDS = 120  # two web processes on a busy machine


@dataclass
class Lab:
    url: str
    environment_id: int
    pairs: list[tuple[int, int]]  # (client host id, server host id)
    write_root: Path  # REDOLAB_LOCAL_WRITE_ROOT's default under the data directory
    users: dict[str, str]  # "root" (an admin), "ann", "ben" (operators): each test's own usernames


def populate(url: str, users: dict[str, str]) -> tuple[int, list[tuple[int, int]]]:
    """The users (an admin, two operators) and an environment with two pairs of "This machine" hosts;
    (environment id, pairs)."""
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        make_user(session, users["root"], role=Role.admin)
        for name in ("ann", "ben"):
            make_user(session, users[name], role=Role.operator)
        environment = make_environment(session)
        hosts = [
            make_host(session, environment, name=f"{role[0]}{node}", transport="local", role=role, node_number=node)
            for node in (1, 2)
            for role in ("primary", "standby")
        ]
        environment_id, pairs = environment.id, [(hosts[0].id, hosts[1].id), (hosts[2].id, hosts[3].id)]
    engine.dispose()
    return environment_id, pairs


def token(client: httpx.Client, username: str) -> dict[str, str]:
    answer = client.post("/api/v1/auth/token", data={"username": username, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


def run_body(pair: tuple[int, int], **fields) -> dict:
    return {
        "client_host_id": pair[0],
        "server_host_id": pair[1],
        "duration_seconds": 60,
        "interval_seconds": 5,
        **fields,
    }


@dataclass
class Served:
    database_url: str
    url: str
    write_root: Path


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request, tmp_path_factory):
    """One `redolab serve` per database for the module (starting one takes seconds, two web processes
    on PostgreSQL). Its worker is off: what the tests queue stays queued, each test on its own users
    and hosts, which are what the caps and the queue places count."""
    data_dir = tmp_path_factory.mktemp(f"served-{request.param}")
    if request.param == "sqlite":
        url, options = migrated(f"sqlite:///{data_dir / 'redolab.db'}"), ()
    else:
        url, options = (
            migrated(_fresh_postgres_database(request.getfixturevalue("postgres_server"))),
            ("--workers", "2"),
        )
    process = start_redolab(
        data_dir, *options, timeout=STARTUP_SECONDS, REDOLAB_DATABASE_URL=url, REDOLAB_WORKER_ENABLED="false", **CAPS
    )
    with httpx.Client(base_url=process.url, timeout=30) as probe:
        deadline = time.monotonic() + STARTUP_SECONDS
        while _health(probe) != 200:
            assert time.monotonic() < deadline, "".join(process.output)
            time.sleep(0.2)
    yield Served(url, process.url, (data_dir / "probe-writes").resolve())
    process.stop()


_labs = itertools.count(1)


@pytest.fixture
def served(server) -> Lab:
    """A lab of this test's own in the module's server: new users, a new environment and hosts."""
    number = next(_labs)
    users = {role: f"{role}{number}" for role in ("root", "ann", "ben")}
    environment_id, pairs = populate(server.database_url, users)
    return Lab(server.url, environment_id, pairs, server.write_root, users)


def _health(client) -> int | None:
    try:
        return client.get("/healthz").status_code
    except httpx.TransportError:
        return None


def _at_once(count: int, call):
    barrier = threading.Barrier(count)

    def run(_):
        barrier.wait(timeout=30)
        return call()

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


def test_simultaneous_requests_and_a_flood_at_the_caps(served):
    runs = f"/api/v1/environments/{served.environment_id}/runs"
    with httpx.Client(base_url=served.url, timeout=60) as client:
        ann, ben = token(client, served.users["ann"]), token(client, served.users["ben"])
        first = served.pairs[0]
        answers = _at_once(12, lambda: client.post(runs, json=run_body(first), headers=ann))
        assert sorted(a.status_code for a in answers) == [201] * 5 + [429] * 7, [a.text[:200] for a in answers]
        assert all("REDOLAB_MAX_QUEUED_PER_USER=5" in a.json()["detail"] for a in answers if a.status_code == 429)
        flood = [client.post(runs, json=run_body(first[::-1]), headers=ben) for _ in range(FLOOD)]
        assert [a.status_code for a in flood] == [201] * 3 + [429] * (FLOOD - 3)  # the pair holds 8 at most
        assert "REDOLAB_MAX_QUEUED_PER_HOST_PAIR=8" in flood[-1].json()["detail"]
        listed = client.get(runs, params={"limit": 2}, headers=ann).json()
        assert listed["count"] == 8 and len(listed["data"]) == 2
        newest = client.get(f"/api/v1/runs/{listed['data'][0]['id']}", headers=ann).json()
        assert newest["queue_position"] == 7 and newest["estimated_start_at"]
        sweep = run_body(served.pairs[1], kind="sockbuf", sizes="64K, 1M", conns_values="1, 8", repetitions=5)
        sweep["duration_seconds"] = 300
        refused = client.post(f"/api/v1/environments/{served.environment_id}/sweeps", json=sweep, headers=ben)
        assert refused.status_code == 422 and "REDOLAB_MAX_SWEEP_SECONDS=3600" in refused.text  # 20 x 310 s


def test_an_admins_bulk_cancel_frees_the_queue(served):
    runs = f"/api/v1/environments/{served.environment_id}/runs"
    with httpx.Client(base_url=served.url, timeout=60) as client:
        ann, root = token(client, served.users["ann"]), token(client, served.users["root"])
        queued = [client.post(runs, json=run_body(served.pairs[i % 2]), headers=ann) for i in range(6)]
        assert [a.status_code for a in queued] == [201] * 5 + [429]
        assert client.post("/api/v1/admin/cancel", json={"user": served.users["ann"]}, headers=ann).status_code == 403
        done = client.post("/api/v1/admin/cancel", json={"user": served.users["ann"]}, headers=root)
        assert done.status_code == 200 and done.json()["runs_cancelled"] == 5 and done.json()["count"] == 5
        statuses = {client.get(f"/api/v1/runs/{a.json()['id']}", headers=ann).json()["status"] for a in queued[:5]}
        assert statuses == {"cancelled"}
        assert client.post(runs, json=run_body(served.pairs[0]), headers=ann).status_code == 201  # room again


def test_a_write_dir_on_this_machine_stays_in_its_root_with_room(served):
    runs = f"/api/v1/environments/{served.environment_id}/runs"
    with httpx.Client(base_url=served.url, timeout=60) as client:
        ann = token(client, served.users["ann"])
        outside = client.post(runs, json=run_body(served.pairs[0], write_dir="/etc"), headers=ann)
        assert outside.status_code == 422, outside.text
        assert f"only inside {served.write_root} (REDOLAB_LOCAL_WRITE_ROOT)" in outside.json()["detail"][0]["msg"]
        assert not (served.write_root / "standby-redo").exists()  # the server makes it (one test per server)
        inside = run_body(served.pairs[0], write_dir=f"{served.write_root}/standby-redo")
        assert client.post(runs, json=inside, headers=ann).status_code == 201
        assert (served.write_root / "standby-redo").is_dir()
        if shutil.disk_usage(served.write_root).free < 1024 * 512 * 2**20:  # 1,024 streams x 512 MiB
            too_big = client.post(runs, json={**inside, "conns": 1024}, headers=ann)
            assert too_big.status_code == 422 and "1,024 connections x 512 MiB" in too_big.text
        listed = client.get(runs, headers=ann).json()
        assert listed["count"] == 1
