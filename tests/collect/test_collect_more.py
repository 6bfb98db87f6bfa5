"""Standard input over both transports, the '|' session before 12.2, ORACLE_HOME from /etc/oratab, the
collection schedule, and who may collect or change a host's database access."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from redolab.collect import execution, service
from redolab.collect.models import Collection, CollectionStatus
from redolab.core.db import make_sessionmaker, utcnow
from redolab.environments.connect import connect_host
from redolab.remote.local import LocalTransport
from tests.collect.test_collect_ssh import collect
from tests.factories import PASSWORD, make_user

SCRIPT = "line one\n'quoted' $(not run) `nor this`\n" + "x" * 100_000 + "\n"


@pytest.mark.parametrize("kind", ["local", "ssh"])
def test_standard_input_reaches_the_command_and_never_its_argv(kind, session, sshd, secret_key, oracle_env):
    _, primary = oracle_env

    async def check():
        transport = LocalTransport() if kind == "local" else await connect_host(primary, secret_key=secret_key)
        try:
            done = await transport.run(["sh", "-c", "cat; echo; ps -o args= -p $$"], input=SCRIPT)
            process = await transport.start(["wc", "-c"], input=SCRIPT)
            counted = [line async for line in process.lines()]
            await process.wait()
            await process.stderr_text()
            return done, counted
        finally:
            await transport.close()

    done, counted = asyncio.run(check())
    assert done.exit_status == 0 and done.stdout.startswith(SCRIPT)
    assert "quoted" not in done.stdout[len(SCRIPT) :]  # the command line shows no part of the input
    assert counted[0].strip() == str(len(SCRIPT.encode()))


def test_colsep_session_before_12_2(session, engine, secret_key, oracle_env, database):
    environment, _ = oracle_env
    database.scenario = "old_version"
    database.write()
    collection = collect(session, engine, secret_key, environment)
    assert collection.status is CollectionStatus.succeeded, collection.failure_message
    assert collection.scripts[0]["name"] == "oracle_session_colsep"
    assert collection.row_counts["archived_log"] == 11


def test_oracle_home_from_oratab(session, engine, secret_key, oracle_env, database, tmp_path, monkeypatch):
    environment, primary = oracle_env
    oratab = tmp_path / "oratab"
    oratab.write_text(f"# oratab\nORCL1:{database.oracle_home}:N\n")
    monkeypatch.setattr(execution, "ORATAB", str(oratab))
    primary.oracle_home = None
    session.commit()
    collection = collect(session, engine, secret_key, environment)
    assert collection.status is CollectionStatus.succeeded, collection.failure_message
    primary.oracle_sid = "OTHER"
    session.commit()
    missing = collect(session, engine, secret_key, environment)
    assert (missing.failure_kind, missing.failure_step) == ("environment", "oratab")
    assert "no line for OTHER" in missing.failure_message


def test_schedule_queues_one_collection_per_occurrence(session, engine, oracle_env):
    environment, _ = oracle_env
    environment.collect_every_seconds = 86400
    session.commit()
    sessions = make_sessionmaker(engine)
    assert service.fire_due_collections(sessions) == 1
    assert service.fire_due_collections(sessions) == 0  # next one is a day away
    session.expire_all()
    assert session.get(type(environment), environment.id).collect_next_at > utcnow() + timedelta(hours=23)
    queued = session.scalars(select(Collection)).all()
    assert len(queued) == 1 and queued[0].scheduled and queued[0].requested_by == "schedule"
    # due again while the first is still queued: skipped, not piled up
    environment = session.get(type(environment), environment.id)
    environment.collect_next_at = utcnow() - timedelta(seconds=1)
    session.commit()
    assert service.fire_due_collections(sessions) == 0
    assert session.scalar(select(func.count(Collection.id))) == 1


def test_roles(app, session, oracle_env):
    environment, primary = oracle_env
    make_user(session, "vera", role="viewer")
    make_user(session, "otto", role="operator")
    with TestClient(app) as anonymous:
        assert anonymous.post(f"/api/v1/environments/{environment.id}/collections").status_code == 401

    def client_for(name):
        client = TestClient(app)
        token = client.post("/api/v1/auth/token", data={"username": name, "password": PASSWORD}).json()
        client.headers["Authorization"] = f"Bearer {token['access_token']}"
        return client

    viewer, operator = client_for("vera"), client_for("otto")
    assert viewer.post(f"/api/v1/environments/{environment.id}/collections").status_code == 403
    response = operator.post(f"/api/v1/environments/{environment.id}/collections")
    assert response.status_code == 201, response.text
    assert response.json()["status"] == "queued" and response.json()["host_name"] == primary.name
    access = f"/api/v1/environments/{environment.id}/hosts/{primary.id}/database-access"
    assert operator.put(access, json={"db_kind": "oracle", "oracle_sid": "X"}).status_code == 403
    assert viewer.get(f"/api/v1/collections/{response.json()['id']}").status_code == 200


def test_one_collection_at_a_time_per_environment(session, oracle_env, api_client):
    environment, _ = oracle_env
    first = api_client.post(f"/api/v1/environments/{environment.id}/collections")
    assert first.status_code == 201
    second = api_client.post(f"/api/v1/environments/{environment.id}/collections")
    assert second.status_code == 409
    assert f"Collection #{first.json()['id']}" in second.text


def test_the_api_asks_for_the_compressibility_step_of_oracle_only(session, oracle_env, db2_env, api_client):
    """`compressibility` in the body queues the step (stored on the collection); a Db2 host refuses it."""
    environment, _ = oracle_env
    response = api_client.post(f"/api/v1/environments/{environment.id}/collections", json={"compressibility": True})
    assert response.status_code == 201, response.text
    assert response.json()["compressibility"] is True
    session.expire_all()
    assert session.get(Collection, response.json()["id"]).compressibility
    db2, _ = db2_env
    refused = api_client.post(f"/api/v1/environments/{db2.id}/collections", json={"compressibility": True})
    assert refused.status_code == 422 and "Oracle archived logs" in refused.text
    plain = api_client.post(f"/api/v1/environments/{db2.id}/collections", json={})
    assert plain.status_code == 201 and plain.json()["compressibility"] is False


def test_db2_sync_mode_offered_to_a_hadr_environment(session, engine, secret_key, db2_env):
    environment, _ = db2_env
    collection = collect(session, engine, secret_key, environment)
    assert collection.facts["offered"] == {"transport_mode": "NEARSYNC"}
    assert service.offered_changes(environment, collection) == {}  # the environment says NEARSYNC already
