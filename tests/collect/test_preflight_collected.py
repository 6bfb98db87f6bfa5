"""The Pre-flight card from a collection over the real sshd with the stand-in sqlplus (issue 56, item 2):
a configuration missing standby redo logs on one thread, with a SYNC destination of NET_TIMEOUT 180 s and
COMPRESSION=ENABLE unlicensed, fails each by name; a complete one passes every row."""

from __future__ import annotations

from redolab.collect.models import CollectionStatus
from redolab.environments.models import TransportMode
from tests.collect.test_collect_ssh import collect
from tests.standins.standin_common import DEFAULT_DATA

GIB = 1024**3


def logs(standby_per_thread: dict[int, int]) -> list[list]:
    rows, group = [], 1
    for thread in (1, 2):
        for _ in range(2):
            rows.append(["ONLINE", thread, group, GIB, 2, "INACTIVE"])
            group += 1
        for _ in range(standby_per_thread.get(thread, 0)):
            rows.append(["STANDBY", thread, group, GIB, None, "UNASSIGNED"])
            group += 1
    return rows


def destination(mode: str, affirm: str, net_timeout: int, compression: str) -> list:
    return [2, "LOG_ARCHIVE_DEST_2", "VALID", "STANDBY", "orcl_stby", mode, affirm, "ONLINE_LOGFILES,PRIMARY_ROLE",
            "ORCL_STBY", net_timeout, compression, 300, 0, 1, 0, "NONE"]  # fmt: skip


def rows_by_check(body: dict) -> dict[tuple[str, str], dict]:
    return {(row["member"], row["check"]): row for row in body["checks"]}


def test_a_broken_configuration_fails_each_check_by_name(
    session, engine, secret_key, oracle_env, database, api_client, browser_client
):
    environment, _ = oracle_env
    environment.transport_mode = TransportMode.sync
    session.commit()
    data = dict(DEFAULT_DATA)
    data["redo_logs"] = logs({1: 3})  # thread 2 has none
    data["archive_dests"] = [DEFAULT_DATA["archive_dests"][0], destination("SYNCHRONOUS", "YES", 180, "ENABLE")]
    database.data = data
    database.write()
    collection = collect(session, engine, secret_key, environment)
    assert collection.status is CollectionStatus.succeeded, collection.failure_message

    body = api_client.get(f"/api/v1/environments/{environment.id}/preflight").json()
    assert body["status"] == "FAIL" and body["collected"].startswith(f"collection #{collection.id}")
    found = rows_by_check(body)
    dest = "LOG_ARCHIVE_DEST_2 (ORCL_STBY)"
    assert found[("primary ORCL_PRIM", "Standby redo logs, thread 2")]["status"] == "FAIL"
    assert found[("primary ORCL_PRIM", "Standby redo logs, thread 1")]["status"] == "PASS"  # 3 for 2 online
    assert found[(dest, "NET_TIMEOUT")]["status"] == "FAIL" and "180 s" in found[(dest, "NET_TIMEOUT")]["detail"]
    assert found[(dest, "COMPRESSION")]["status"] == "FAIL"
    assert "Advanced Compression" in found[(dest, "COMPRESSION")]["detail"]
    assert found[(dest, "Transport mode")]["status"] == "PASS"  # SYNC, AFFIRM: the environment's SYNC

    page = browser_client.get(f"/environments/{environment.id}")
    assert 'id="preflight"' in page.text and "Standby redo logs, thread 2" in page.text
    # the licence ticked: compression passes, the other failures stay
    environment.advanced_compression_licensed = True
    session.commit()
    found = rows_by_check(api_client.get(f"/api/v1/environments/{environment.id}/preflight").json())
    assert found[(dest, "COMPRESSION")]["status"] == "PASS"


def test_a_complete_configuration_passes_every_row(session, engine, secret_key, oracle_env, database, api_client):
    environment, _ = oracle_env
    data = dict(DEFAULT_DATA)
    data["redo_logs"] = logs({1: 3, 2: 3})
    data["archive_dests"] = [DEFAULT_DATA["archive_dests"][0], destination("ASYNCHRONOUS", "NO", 30, "DISABLE")]
    database.data = data
    database.write()
    assert collect(session, engine, secret_key, environment).status is CollectionStatus.succeeded
    body = api_client.get(f"/api/v1/environments/{environment.id}/preflight").json()
    assert {row["status"] for row in body["checks"]} == {"PASS"}, body["checks"]
    assert len(body["checks"]) >= 9 and body["status"] == "PASS"
