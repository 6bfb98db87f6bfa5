"""Names people compare (issue 33): environment and host names are compared after NFKC and case
folding with invisible characters left out, names of only filler or invisible characters are
refused; run tags are stored folded. The environments list API is paged."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redolab.core.fields import name_key
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
        json={"client_host_id": primary.id, "server_host_id": standby.id,
              "tags": ["MTU9000", "\uff4d\uff54\uff559000", "mtu9000", "WAN"]},
    )  # fmt: skip
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
