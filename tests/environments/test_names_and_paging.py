"""Names people compare (issue 33): environment and host names are compared after NFKC and case
folding with invisible characters left out, names of only filler or invisible characters are
refused; run tags are stored folded. Look-alike names sent at once meet a unique index on the stored
key of the folded name (answered 409 as the check answers). The environments list API is paged."""

from __future__ import annotations

import contextlib
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import func, select, text

from redolab.core.db import make_engine, make_sessionmaker
from redolab.core.errors import FieldError
from redolab.core.fields import name_key
from redolab.core.migrate import upgrade
from redolab.environments.models import Environment, Host, same_or_new_key, stored_name_key
from redolab.environments.schemas import EnvironmentCreate, HostCreate
from tests.conftest import migrated_sqlite
from tests.factories import make_environment
from tests.web.test_runs import local_env

ENV = {"name": "Prod", "platform": "dataguard"}
HOST = {"role": "primary", "name": "db1", "ssh_address": "10.0.0.1", "ssh_user": "oracle"}
FULLWIDTH_PROD = "\uff30\uff52\uff4f\uff44"  # 'Prod' in fullwidth letters
HANGUL_FILLER = "\u3164"


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """Comparison happens in Python, the same on either database: these tests run on SQLite."""
    return migrated_sqlite(tmp_path_factory)


@pytest.mark.parametrize(
    "look_alike", [FULLWIDTH_PROD, "PROD", "prod", f"Prod{HANGUL_FILLER}", "Pro\u0064", "Prod\ufe0f"]
)
def test_a_look_alike_environment_name_is_the_same_name(api_client, look_alike):
    assert api_client.post("/api/v1/environments", json=ENV).status_code == 201
    clash = api_client.post("/api/v1/environments", json={**ENV, "name": look_alike})
    assert clash.status_code == 409, clash.text
    assert clash.json()["detail"][0]["loc"] == ["body", "name"] and "'Prod' already exists" in clash.text
    assert api_client.get("/api/v1/environments").json()["count"] == 1


@pytest.mark.parametrize(
    "blank", [HANGUL_FILLER, f" {HANGUL_FILLER} ", "\u115f\u1160", "\uffa0", "\u2800", "\u3000", "\u00a0\u2003"]
)
def test_a_name_of_only_filler_or_invisible_characters_is_refused(api_client, session, blank):
    created = api_client.post("/api/v1/environments", json={**ENV, "name": blank})
    assert created.status_code == 422, created.text
    assert created.json()["detail"][0]["loc"] == ["body", "name"]
    environment = make_environment(session)
    host = api_client.post(f"/api/v1/environments/{environment.id}/hosts", json={**HOST, "name": blank})
    assert host.status_code == 422 and host.json()["detail"][0]["loc"] == ["body", "name"]


def test_renaming_onto_a_look_alike_is_refused(api_client):
    api_client.post("/api/v1/environments", json=ENV)
    other = api_client.post("/api/v1/environments", json={**ENV, "name": "Test"}).json()
    renamed = api_client.patch(f"/api/v1/environments/{other['id']}", json={"name": FULLWIDTH_PROD})
    assert renamed.status_code == 409
    same = api_client.patch(f"/api/v1/environments/{other['id']}", json={"name": "TEST"})  # its own name
    assert same.status_code == 200 and same.json()["name"] == "TEST"


def test_host_names_are_unique_in_an_environment_as_people_read_them(api_client, session):
    environment = make_environment(session)
    base = f"/api/v1/environments/{environment.id}/hosts"
    assert api_client.post(base, json=HOST).status_code == 201
    clash = api_client.post(base, json={**HOST, "role": "standby", "name": "\uff24\uff22\uff11"})  # DB1, fullwidth
    assert clash.status_code == 409 and clash.json()["detail"][0]["loc"] == ["body", "name"]
    assert "host named 'db1'" in clash.text
    standby = api_client.post(base, json={**HOST, "role": "standby", "name": "sb1"}).json()
    assert api_client.patch(f"{base}/{standby['id']}", json={"name": "DB1"}).status_code == 409
    other = make_environment(session)  # another environment may have its own db1
    assert api_client.post(f"/api/v1/environments/{other.id}/hosts", json=HOST).status_code == 201


def test_run_tags_are_stored_folded_and_once(api_client, session):
    environment, primary, standby = local_env(session)
    run = api_client.post(
        f"/api/v1/environments/{environment.id}/runs",
        json={
            "client_host_id": primary.id,
            "server_host_id": standby.id,
            "tags": ["MTU9000", "\uff4d\uff54\uff559000", "mtu9000", "WAN"],
        },
    )
    assert run.status_code == 201, run.text
    assert run.json()["tags"] == ["mtu9000", "wan"]
    filler = api_client.post(
        f"/api/v1/environments/{environment.id}/runs",
        json={"client_host_id": primary.id, "server_host_id": standby.id, "tags": [HANGUL_FILLER]},
    )
    assert filler.status_code == 422


def test_the_environments_list_is_paged(api_client):
    for n in range(7):
        assert api_client.post("/api/v1/environments", json={**ENV, "name": f"env {n}"}).status_code == 201
    first = api_client.get("/api/v1/environments", params={"limit": 3}).json()
    rest = api_client.get("/api/v1/environments", params={"limit": 3, "offset": 3}).json()
    last = api_client.get("/api/v1/environments", params={"limit": 3, "offset": 6}).json()
    assert first["count"] == rest["count"] == last["count"] == 7  # how many in all
    names = [e["name"] for page in (first, rest, last) for e in page["data"]]
    assert names == [f"env {n}" for n in range(7)]
    everything = api_client.get("/api/v1/environments").json()
    assert len(everything["data"]) == 7  # the default page (100) holds them
    for bad in ({"limit": 0}, {"limit": 501}, {"offset": -1}, {"limit": "all"}):
        assert api_client.get("/api/v1/environments", params=bad).status_code == 422, bad


@given(st.text(max_size=30))
def test_name_key_is_stable_and_ignores_invisible_characters(name):
    key = name_key(name)
    assert name_key(key) == key  # comparing keys again changes nothing
    assert name_key(f"{HANGUL_FILLER}{name}\u200b") == key
    assert key == key.strip() and "  " not in key


@given(st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=30))
def test_name_key_ignores_case_and_width(name):
    fullwidth = "".join(chr(ord(ch) + 0xFEE0) for ch in name)  # U+FF01..U+FF5E mirror ASCII ! to ~
    assert name_key(name.swapcase()) == name_key(fullwidth) == name_key(name) == name.casefold()


# -- look-alike names sent at once: the unique index on the stored key decides ---------------------


def _race(engine, monkeypatch, check_name: str, attempt, wait: float = 30) -> list[object]:
    """Run `attempt(session, index)` in two threads whose name checks both pass before either
    commits (a barrier after `check_name`), as two simultaneous requests can; their outcomes. Where a
    lock serialises the writes (a host's checks hold the environment's lock to the commit), the second
    cannot check before the first commits: the barrier gives up after `wait` seconds and they go in turn."""
    from redolab.environments import service

    barrier, original = threading.Barrier(2, timeout=wait), getattr(service, check_name)

    def checked_then_wait(*args, **kwargs):
        original(*args, **kwargs)
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()

    monkeypatch.setattr(service, check_name, checked_then_wait)
    sessions, outcomes = make_sessionmaker(engine), [None, None]

    def run(index: int) -> None:
        with sessions() as session:
            try:
                outcomes[index] = attempt(session, index)
            except FieldError as error:
                outcomes[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


def test_two_simultaneous_creates_of_look_alike_names_make_one_environment(engine, session, monkeypatch):
    from redolab.environments import service

    names = ["Prod", FULLWIDTH_PROD]

    def attempt(s, i):
        return service.create_environment(session=s, env_in=EnvironmentCreate(**{**ENV, "name": names[i]})).id

    outcomes = _race(engine, monkeypatch, "_check_name_free", attempt)
    refused = [o for o in outcomes if isinstance(o, FieldError)]
    created = [o for o in outcomes if isinstance(o, int)]
    assert len(created) == 1 and len(refused) == 1, outcomes
    assert refused[0].status_code == 409 and refused[0].field == "name"
    winner = session.get(Environment, created[0]).name
    assert f"An environment named '{winner}' already exists" in refused[0].message  # as the check says it
    assert session.scalar(select(func.count()).select_from(Environment)) == 1


def test_two_simultaneous_look_alike_hosts_make_one_host(engine, session, monkeypatch):
    from redolab.environments import service

    environment_id = make_environment(session).id
    names = ["db1", "\uff24\uff22\uff11"]  # DB1 in fullwidth letters

    def attempt(s, i):
        environment = service.get_environment(session=s, environment_id=environment_id)
        host_in = HostCreate(**{**HOST, "name": names[i], "node_number": 1 + i})  # two free slots
        return service.create_host(session=s, environment=environment, host_in=host_in).id

    outcomes = _race(engine, monkeypatch, "_check_host_name_free", attempt, wait=2)
    refused = [o for o in outcomes if isinstance(o, FieldError)]
    assert len(refused) == 1 and refused[0].status_code == 409 and refused[0].field == "name", outcomes
    assert "already has a host named" in refused[0].message
    assert session.scalar(select(func.count()).select_from(Host)) == 1


LOOK_ALIKES = ["Prod", "PROD", "prod", FULLWIDTH_PROD, f"Prod{HANGUL_FILLER}", "Prod\ufe0f", "pROD", " Prod"]


@pytest.fixture
def a_web_thread_each(settings):
    """As many web threads (REDOLAB_WEB_THREADS, 4 by default) as look-alikes: all are in the app at
    once, so that all their checks can pass before any commits (with 4, the other 4 waited for a thread
    while the first 4 waited at the barrier, until its 30 s timeout)."""
    settings.web_threads = len(LOOK_ALIKES)


def test_simultaneous_api_creates_of_look_alike_names_answer_201_and_409(
    a_web_thread_each, app, api_client, monkeypatch
):  # a_web_thread_each first: the settings are read when api_client starts the app
    """Through the API, 8 look-alikes of one name at once (their checks held until all have passed)."""
    from redolab.environments import service

    look_alikes = LOOK_ALIKES
    barrier, original = threading.Barrier(len(look_alikes), timeout=30), service._check_name_free

    def checked_then_wait(*args, **kwargs):
        original(*args, **kwargs)
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()

    monkeypatch.setattr(service, "_check_name_free", checked_then_wait)
    answers: list = []
    threads = [
        threading.Thread(
            target=lambda n=name: answers.append(api_client.post("/api/v1/environments", json={**ENV, "name": n}))
        )
        for name in look_alikes
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not barrier.broken  # every check passed before any request went on: the index answered
    assert sorted(a.status_code for a in answers) == [201] + [409] * (len(look_alikes) - 1)
    assert all(a.json()["detail"][0]["loc"] == ["body", "name"] for a in answers if a.status_code == 409)
    assert api_client.get("/api/v1/environments").json()["count"] == 1


def test_editing_other_fields_of_an_environment_keeps_its_key(api_client, session):
    created = api_client.post("/api/v1/environments", json=ENV).json()
    key = session.get(Environment, created["id"]).name_key
    assert key == stored_name_key("PROD") == stored_name_key(FULLWIDTH_PROD)
    assert api_client.patch(f"/api/v1/environments/{created['id']}", json={"description": "x"}).status_code == 200
    renamed = api_client.patch(f"/api/v1/environments/{created['id']}", json={"name": "Test"})
    assert renamed.status_code == 200
    session.expire_all()
    assert session.get(Environment, created["id"]).name_key == stored_name_key("test")


def test_the_migration_keeps_look_alikes_created_before_with_a_suffixed_key(tmp_path):
    """Rows that clash already (made before the check) survive the upgrade, the oldest with the plain
    key, the others with '-<id>'; one environment's hosts are keyed apart from another's."""
    engine = make_engine(f"sqlite:///{tmp_path / 'before.db'}")
    upgrade(engine, "75f36cb7490d")
    stamp = "2026-01-01 00:00:00"
    with engine.begin() as connection:
        for row_id, name in ((1, "Prod"), (2, FULLWIDTH_PROD), (3, "Test"), (4, "prod")):
            connection.execute(
                text(
                    "INSERT INTO environments (id, name, description, platform, primary_rac_nodes, "
                    "standby_rac_nodes, transport_mode, headroom_percent, apply_overhead_percent, time_zone, "
                    "notes, created_at, updated_at) VALUES (:id, :name, '', 'dataguard', 1, 1, 'async', 30, 30, "
                    "'UTC', '', :at, :at)"
                ),
                {"id": row_id, "name": name, "at": stamp},
            )
        for host_id, environment_id, node, name in ((1, 1, 1, "db1"), (2, 1, 2, "DB1"), (3, 3, 1, "db1")):
            connection.execute(
                text(
                    "INSERT INTO hosts (id, environment_id, role, node_number, name, ssh_address, ssh_port, "
                    "ssh_user, transport, allow_kernel_changes, created_at, updated_at) VALUES (:id, :env, "
                    "'primary', :node, :name, '10.0.0.1', 22, 'oracle', 'ssh', 0, :at, :at)"
                ),
                {"id": host_id, "env": environment_id, "node": node, "name": name, "at": stamp},
            )
    upgrade(engine, "d8f1e2a30033")
    with engine.connect() as connection:
        environments = dict(connection.execute(text("SELECT id, name_key FROM environments")).all())
        hosts = dict(connection.execute(text("SELECT id, name_key FROM hosts")).all())
    prod, test = stored_name_key("prod"), stored_name_key("test")
    assert environments == {1: prod, 2: f"{prod}-2", 3: test, 4: f"{prod}-4"}
    assert hosts == {1: stored_name_key("db1"), 2: f"{stored_name_key('db1')}-2", 3: stored_name_key("db1")}
    assert same_or_new_key(f"{prod}-2", FULLWIDTH_PROD) == f"{prod}-2"  # editing it keeps its suffix
    engine.dispose()
