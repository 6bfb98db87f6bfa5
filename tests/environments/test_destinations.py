"""Destinations and shared links (issue 38, part 1): the API and the service, every refusal with its
status and message, the mirror rule (the environment's transport and link are its first
destination's), hosts per destination, and a property over sequences of requests."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from redolab.auth.models import Role
from redolab.core.errors import FieldError
from redolab.environments import destinations, service
from redolab.environments.models import Destination, Host, SharedLink, shared_link_hops
from redolab.environments.schemas import EnvironmentUpdate
from redolab.environments.schemas_destinations import DestinationCreate, DestinationUpdate
from redolab.sweeps.clusters import node_pairs
from tests.factories import PASSWORD, make_environment, make_host, make_user

ENV = {
    "name": "SALES prod",
    "platform": "dataguard",
    "transport_mode": "SYNC",
    "protection_mode": "max_availability",
    "link_bandwidth_bits_per_second": "10 Gbit/s",
    "link_rtt_seconds": "2 ms",
}
HADR = {"name": "db2 prod", "platform": "hadr", "transport_mode": "NEARSYNC", "link_rtt_seconds": "1 ms"}
HOST = {"role": "standby", "node_number": 1, "ssh_address": "10.0.0.9", "ssh_user": "oracle"}


def _env(api_client, **fields) -> dict:
    response = api_client.post("/api/v1/environments", json={**ENV, **fields})
    assert response.status_code == 201, response.text
    return response.json()


def _destinations(api_client, environment_id: int) -> list[dict]:
    response = api_client.get(f"/api/v1/environments/{environment_id}/destinations")
    assert response.status_code == 200, response.text
    assert response.json()["count"] == len(response.json()["data"])
    return response.json()["data"]


def _add(api_client, environment_id: int, **fields):
    return api_client.post(f"/api/v1/environments/{environment_id}/destinations", json=fields)


def _problem(response, status: int) -> tuple[str, str]:
    """(field, message) of a refusal, after checking its status."""
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    return detail[0]["loc"][-1], detail[0]["msg"]


# -- the first destination and the mirror rule ----------------------------------------------------


def test_a_new_environment_has_its_first_destination(api_client):
    environment = _env(api_client)
    [first] = _destinations(api_client, environment["id"])
    assert first["name"] == "standby" and first["kind"] == "standby" and first["position"] == 1
    assert first["transport"] == "SYNC" and first["hadr_role"] is None and first["feeds_from"] is None
    assert first["link_bandwidth_bits_per_second"] == 10_000_000_000 and first["link_rtt_seconds"] == 0.002
    assert environment["destinations"] == [{"id": first["id"], "name": "standby"}]
    hadr = _env(api_client, **HADR, protection_mode=None)
    [principal] = _destinations(api_client, hadr["id"])
    assert principal["hadr_role"] == "principal" and principal["transport"] == "NEARSYNC"


def test_create_list_read_update_delete(api_client):
    environment = _env(api_client)
    created = _add(
        api_client,
        environment["id"],
        name="DR London",
        kind="standby",
        transport="ASYNC",
        link_bandwidth_bits_per_second="1 GB/s",
        link_rtt_seconds="40 ms",
        notes="WAN circuit 7",
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["position"] == 2 and body["transport"] == "ASYNC" and body["host_ids"] == []
    assert body["link_bandwidth_bits_per_second"] == 8 * 1024**3 and body["link_rtt_seconds"] == 0.04
    assert "binary" in body["unit_readings"]["link_bandwidth_bits_per_second"]  # "1 GB/s" reads two ways
    assert [d["name"] for d in _destinations(api_client, environment["id"])] == ["standby", "DR London"]
    assert api_client.get(f"/api/v1/destinations/{body['id']}").json()["notes"] == "WAN circuit 7"
    updated = api_client.put(f"/api/v1/destinations/{body['id']}", json={"kind": "far_sync", "transport": "FASTSYNC"})
    assert updated.status_code == 200, updated.text
    assert updated.json()["kind"] == "far_sync" and updated.json()["name"] == "DR London"  # the rest kept
    assert api_client.delete(f"/api/v1/destinations/{body['id']}").status_code == 204
    assert api_client.get(f"/api/v1/destinations/{body['id']}").status_code == 404
    assert len(_destinations(api_client, environment["id"])) == 1


def test_the_environment_mirrors_its_first_destination(api_client):
    environment = _env(api_client, protection_mode="max_performance", transport_mode="ASYNC")
    env_url = f"/api/v1/environments/{environment['id']}"
    first = _destinations(api_client, environment["id"])[0]
    second = _add(api_client, environment["id"], name="far", transport="SYNC", link_rtt_seconds="30 ms").json()
    assert api_client.get(env_url).json()["transport_mode"] == "ASYNC"  # a second one changes nothing
    changed = api_client.put(
        f"/api/v1/destinations/{first['id']}",
        json={"transport": "FASTSYNC", "link_bandwidth_bits_per_second": "2.5 Gbit/s", "link_rtt_seconds": "3 ms"},
    )
    assert changed.status_code == 200, changed.text
    mirrored = api_client.get(env_url).json()
    assert (mirrored["transport_mode"], mirrored["link_bandwidth_bits_per_second"], mirrored["link_rtt_seconds"]) == (
        "FASTSYNC",
        2_500_000_000,
        0.003,
    )
    patched = api_client.patch(env_url, json={"transport_mode": "SYNC", "link_rtt_seconds": "5 ms"})
    assert patched.status_code == 200, patched.text
    first = api_client.get(f"/api/v1/destinations/{first['id']}").json()
    assert (first["transport"], first["link_rtt_seconds"], first["link_bandwidth_bits_per_second"]) == (
        "SYNC",
        0.005,
        2_500_000_000,
    )
    assert api_client.get(f"/api/v1/destinations/{second['id']}").json()["transport"] == "SYNC"
    # the first deleted: the next is the first, at position 1, and the environment follows it
    assert api_client.delete(f"/api/v1/destinations/{first['id']}").status_code == 204
    [now_first] = _destinations(api_client, environment["id"])
    assert now_first["id"] == second["id"] and now_first["position"] == 1
    after = api_client.get(env_url).json()
    assert (after["transport_mode"], after["link_rtt_seconds"], after["link_bandwidth_bits_per_second"]) == (
        "SYNC",
        0.03,
        None,
    )


def test_the_first_destination_keeps_the_environment_valid(api_client):
    environment = _env(api_client)  # Maximum Availability, SYNC
    first = _destinations(api_client, environment["id"])[0]
    field, message = _problem(api_client.put(f"/api/v1/destinations/{first['id']}", json={"transport": "ASYNC"}), 422)
    assert field == "transport" and "Maximum Availability needs SYNC or FASTSYNC" in message
    second = _add(api_client, environment["id"], name="dr", transport="ASYNC").json()
    field, message = _problem(api_client.delete(f"/api/v1/destinations/{first['id']}"), 409)
    assert field == "transport" and "'dr' would be the first destination" in message
    assert api_client.get(f"/api/v1/environments/{environment['id']}").json()["transport_mode"] == "SYNC"
    assert len(_destinations(api_client, environment["id"])) == 2 and second["position"] == 2


# -- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "status", "field", "words"),
    [
        ({"kind": "cascaded"}, 422, "feeds_from", "give feeds_from"),
        ({"kind": "standby", "feeds_from": "FIRST"}, 422, "kind", "use kind cascaded"),
        ({"kind": "far_sync", "feeds_from": "FIRST"}, 422, "feeds_from", "never fed by another destination"),
        ({"kind": "cascaded", "feeds_from": "FIRST", "transport": "SYNC"}, 422, "transport", "ASYNC, not SYNC"),
        ({"kind": "cascaded", "feeds_from": "FIRST", "transport": "FASTSYNC"}, 422, "transport", "not FASTSYNC"),
        ({"kind": "cascaded", "feeds_from": 999_999}, 422, "feeds_from", "Destination 999999 is not one of"),
        ({"kind": "cascaded", "feeds_from": "OTHER"}, 422, "feeds_from", "is not one of 'SALES prod'"),
        ({"transport": "NEARSYNC"}, 422, "transport", "NEARSYNC is not a transport mode of Oracle Data Guard"),
        ({"hadr_role": "auxiliary"}, 422, "hadr_role", "leave it empty for Oracle Data Guard"),
        ({"name": "STANDBY"}, 409, "name", "already has a destination named 'standby'"),
        ({"name": "\uff33\uff34\uff21\uff2e\uff24\uff22\uff39"}, 409, "name", "differ only in case, width"),
        ({"name": "\u3164"}, 422, "name", "only blank, filler or invisible"),
        ({"name": "a\nb"}, 422, "name", "line break"),
        ({"kind": "bogus"}, 422, "kind", "standby"),
        ({"transport": "FAST"}, 422, "transport", "SYNC"),
        ({"feeds_from": "abc"}, 422, "feeds_from", "integer"),
        ({"feeds_from": 2**40}, 422, "feeds_from", "less than or equal"),
        ({"link_bandwidth_bits_per_second": "10"}, 422, "link_bandwidth_bits_per_second", "has no unit"),
        ({"link_bandwidth_bits_per_second": 0}, 422, "link_bandwidth_bits_per_second", "more than zero"),
        ({"link_bandwidth_bits_per_second": -5}, 422, "link_bandwidth_bits_per_second", "zero or more"),
        ({"link_bandwidth_bits_per_second": "9 Tbit/s"}, 422, "link_bandwidth_bits_per_second", "at most 8 Tbit/s"),
        ({"link_rtt_seconds": "20 s"}, 422, "link_rtt_seconds", "at most 10 s"),
        ({"link_rtt_seconds": "fast"}, 422, "link_rtt_seconds", "RTT"),
        ({"link_rtt_seconds": [1]}, 422, "link_rtt_seconds", ""),
        ({"colour": "red"}, 422, "colour", "Extra inputs"),
    ],
)
def test_a_refused_destination_names_its_field(api_client, fields, status, field, words):
    environment, other = _env(api_client), _env(api_client, name="other")
    ids = {"FIRST": _destinations(api_client, environment["id"])[0]["id"]}
    ids["OTHER"] = _destinations(api_client, other["id"])[0]["id"]
    fields = {key: ids.get(value, value) if isinstance(value, str) else value for key, value in fields.items()}
    got_field, message = _problem(_add(api_client, environment["id"], **{"name": "dr", **fields}), status)
    assert got_field == field and words in message, message
    assert len(_destinations(api_client, environment["id"])) == 1  # nothing written


def test_the_maa_shape_a_far_sync_near_the_primary_feeding_a_remote_standby(api_client):
    environment = _env(api_client)  # Maximum Availability, its first destination SYNC
    far = _add(api_client, environment["id"], name="far", kind="far_sync", transport="SYNC", link_rtt_seconds="1 ms")
    assert far.status_code == 201, far.text
    assert far.json()["feeds_from"] is None and far.json()["transport"] == "SYNC"
    remote = _add(
        api_client,
        environment["id"],
        name="remote",
        kind="standby",
        feeds_from=far.json()["id"],
        transport="ASYNC",
        link_rtt_seconds="40 ms",
    )
    assert remote.status_code == 201, remote.text
    assert (remote.json()["kind"], remote.json()["feeds_from"]) == ("standby", far.json()["id"])
    assert remote.json()["transport"] == "ASYNC"
    # FASTSYNC into the far sync works as well, and the far sync forwards to a second standby
    fast = api_client.put(f"/api/v1/destinations/{far.json()['id']}", json={"transport": "FASTSYNC"})
    assert fast.status_code == 200, fast.text
    other = _add(api_client, environment["id"], name="remote2", feeds_from=far.json()["id"])  # ASYNC by default
    assert other.status_code == 201 and other.json()["kind"] == "standby", other.text


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"kind": "far_sync", "feeds_from": "far"}, "feeds_from", "never fed by another destination"),
        ({"kind": "far_sync", "feeds_from": "remote"}, "feeds_from", "receives redo from the primary"),
        ({"kind": "far_sync", "feeds_from": "casc"}, "feeds_from", "leave feeds_from empty"),
        ({"kind": "standby", "feeds_from": "far", "transport": "SYNC"}, "transport", "far sync forwards redo ASYNC"),
        ({"kind": "standby", "feeds_from": "far", "transport": "FASTSYNC"}, "transport", "ASYNC, not FASTSYNC"),
        ({"kind": "cascaded", "feeds_from": "far"}, "kind", "a standby fed by a far sync is kind standby"),
        ({"kind": "standby", "feeds_from": "remote"}, "kind", "use kind cascaded"),
        ({"kind": "standby", "feeds_from": "casc"}, "kind", "'casc' is a cascaded standby"),
        ({"kind": "cascaded", "feeds_from": "remote", "transport": "SYNC"}, "transport", "cascades ship ASYNC"),
        ({"kind": "cascaded", "feeds_from": "casc", "transport": "FASTSYNC"}, "transport", "ASYNC, not FASTSYNC"),
    ],
)
def test_who_may_feed_whom(api_client, fields, field, words):
    environment = _env(api_client)
    far = _add(api_client, environment["id"], name="far", kind="far_sync", transport="SYNC").json()
    remote = _add(api_client, environment["id"], name="remote", feeds_from=far["id"]).json()
    casc = _add(api_client, environment["id"], name="casc", kind="cascaded", feeds_from=remote["id"]).json()
    assert casc["kind"] == "cascaded" and casc["feeds_from"] == remote["id"] and casc["transport"] == "ASYNC"
    spare = _add(api_client, environment["id"], name="spare").json()  # a standby the primary feeds, ASYNC
    ids = {"far": far["id"], "remote": remote["id"], "casc": casc["id"]}
    fields = {**fields, "feeds_from": ids[fields["feeds_from"]]}
    got_field, message = _problem(_add(api_client, environment["id"], name="new", **fields), 422)
    assert got_field == field and words in message, message
    assert len(_destinations(api_client, environment["id"])) == 5  # nothing written
    # an update is held to the same rules
    got_field, message = _problem(api_client.put(f"/api/v1/destinations/{spare['id']}", json=fields), 422)
    assert got_field == field and words in message, message
    assert api_client.get(f"/api/v1/destinations/{spare['id']}").json()["feeds_from"] is None


def test_a_new_kind_keeps_what_the_destination_feeds_valid(api_client):
    environment = _env(api_client)
    far = _add(api_client, environment["id"], name="far", kind="far_sync", transport="SYNC").json()
    remote = _add(api_client, environment["id"], name="remote", feeds_from=far["id"]).json()
    casc = _add(api_client, environment["id"], name="casc", kind="cascaded", feeds_from=remote["id"]).json()
    # the kind kept, the rest may change
    assert api_client.put(f"/api/v1/destinations/{far['id']}", json={"notes": "near the primary"}).status_code == 200
    # a standby is fed from the far sync: it stays a far sync
    for change in ({"kind": "standby"}, {"kind": "cascaded", "feeds_from": remote["id"]}):
        field, message = _problem(api_client.put(f"/api/v1/destinations/{far['id']}", json=change), 422)
        assert (
            field == "kind" and "The standby 'remote' is fed from 'far'" in message and "keep kind far_sync" in message
        )
    # a cascaded standby is fed from the remote standby: never a far sync
    field, message = _problem(
        api_client.put(f"/api/v1/destinations/{remote['id']}", json={"kind": "far_sync", "feeds_from": None}), 422
    )
    assert field == "kind" and "The cascaded standby 'casc' is fed from 'remote'" in message
    # a standby or cascaded standby it may be: what it feeds stays valid
    first_id = _destinations(api_client, environment["id"])[0]["id"]
    moved = api_client.put(f"/api/v1/destinations/{remote['id']}", json={"kind": "cascaded", "feeds_from": first_id})
    assert moved.status_code == 200 and moved.json()["kind"] == "cascaded", moved.text
    assert api_client.get(f"/api/v1/destinations/{casc['id']}").json()["feeds_from"] == remote["id"]
    # nothing fed from it any more: the far sync may become a standby
    became = api_client.put(f"/api/v1/destinations/{far['id']}", json={"kind": "standby"})
    assert became.status_code == 200 and became.json()["kind"] == "standby", became.text


def test_who_feeds_whom(api_client):
    environment = _env(api_client)
    first = _destinations(api_client, environment["id"])[0]
    far = _add(api_client, environment["id"], name="far", kind="far_sync", transport="SYNC").json()
    remote = _add(api_client, environment["id"], name="remote", feeds_from=far["id"]).json()
    casc = _add(api_client, environment["id"], name="casc", kind="cascaded", feeds_from=remote["id"]).json()
    casc2 = _add(api_client, environment["id"], name="casc2", kind="cascaded", feeds_from=casc["id"]).json()
    assert casc2["feeds_from"] == casc["id"]
    # a cycle: casc <- casc2 <- casc is refused, naming the chain
    field, message = _problem(
        api_client.put(f"/api/v1/destinations/{casc['id']}", json={"feeds_from": casc2["id"]}), 422
    )
    assert field == "feeds_from" and "casc <- casc2 <- casc" in message
    field, message = _problem(
        api_client.put(f"/api/v1/destinations/{casc['id']}", json={"feeds_from": casc["id"]}), 422
    )
    assert field == "feeds_from" and "from itself" in message
    # the first destination is fed by the primary
    field, message = _problem(
        api_client.put(f"/api/v1/destinations/{first['id']}", json={"kind": "cascaded", "feeds_from": remote["id"]}),
        422,
    )
    assert field == "feeds_from" and "first destination" in message
    field, message = _problem(
        api_client.put(f"/api/v1/destinations/{first['id']}", json={"feeds_from": far["id"]}), 422
    )
    assert field == "feeds_from" and "first destination" in message
    # a cascaded standby turned standby must lose its source (or take a far sync's), and says how
    field, message = _problem(api_client.put(f"/api/v1/destinations/{casc['id']}", json={"kind": "standby"}), 422)
    assert field == "kind" and "use kind cascaded" in message
    ok = api_client.put(f"/api/v1/destinations/{casc['id']}", json={"kind": "standby", "feeds_from": None})
    assert ok.status_code == 200 and ok.json()["feeds_from"] is None
    ok = api_client.put(f"/api/v1/destinations/{casc['id']}", json={"feeds_from": far["id"]})
    assert ok.status_code == 200 and ok.json()["feeds_from"] == far["id"] and ok.json()["kind"] == "standby"
    # a SYNC standby fed by the primary cannot move behind the far sync without becoming ASYNC
    sync = _add(api_client, environment["id"], name="near", transport="SYNC").json()
    field, message = _problem(api_client.put(f"/api/v1/destinations/{sync['id']}", json={"feeds_from": far["id"]}), 422)
    assert field == "transport" and "'near' is fed by the far sync instance 'far'" in message


def test_hadr_has_a_principal_and_up_to_two_auxiliaries(api_client):
    environment = _env(api_client, **HADR, protection_mode=None)
    [principal] = _destinations(api_client, environment["id"])
    field, message = _problem(_add(api_client, environment["id"], name="fs", kind="far_sync"), 422)
    assert field == "kind" and "Db2 HADR has no far sync instance" in message
    field, message = _problem(_add(api_client, environment["id"], name="aux", transport="SYNC"), 422)
    assert field == "transport" and "SUPERASYNC" in message and "not SYNC" in message
    field, message = _problem(_add(api_client, environment["id"], name="aux", hadr_role="principal"), 409)
    assert field == "hadr_role" and "'standby' is already the principal" in message
    first = _add(api_client, environment["id"], name="aux1")
    assert first.status_code == 201, first.text
    assert first.json()["hadr_role"] == "auxiliary" and first.json()["transport"] == "SUPERASYNC"  # the defaults
    assert _add(api_client, environment["id"], name="aux2", transport="SUPERASYNC").status_code == 201
    field, message = _problem(_add(api_client, environment["id"], name="aux3"), 409)
    assert field == "hadr_role" and "at most two auxiliaries" in message
    field, message = _problem(
        api_client.put(f"/api/v1/destinations/{principal['id']}", json={"hadr_role": "auxiliary"}), 409
    )
    assert field == "hadr_role" and "exactly one principal" in message
    field, message = _problem(
        api_client.put(f"/api/v1/destinations/{first.json()['id']}", json={"transport": "ASYNC"}), 422
    )
    assert field == "transport"
    field, message = _problem(api_client.delete(f"/api/v1/destinations/{principal['id']}"), 409)
    assert field == "hadr_role" and "delete the auxiliaries" in message and "'aux1', 'aux2'" in message
    # the principal's mode is the environment's
    assert api_client.put(f"/api/v1/destinations/{principal['id']}", json={"transport": "SYNC"}).status_code == 200
    assert api_client.get(f"/api/v1/environments/{environment['id']}").json()["transport_mode"] == "SYNC"


def test_a_platform_change_keeps_the_destinations_consistent(api_client):
    environment = _env(api_client, protection_mode="max_performance", transport_mode="ASYNC")
    env_url = f"/api/v1/environments/{environment['id']}"
    extra = _add(api_client, environment["id"], name="far", kind="far_sync").json()
    field, message = _problem(api_client.patch(env_url, json={"platform": "hadr", "protection_mode": None}), 409)
    assert field == "platform" and "delete all but the first ('far')" in message
    assert api_client.delete(f"/api/v1/destinations/{extra['id']}").status_code == 204
    moved = api_client.patch(env_url, json={"platform": "hadr", "protection_mode": None})
    assert moved.status_code == 200, moved.text
    [first] = _destinations(api_client, environment["id"])
    assert first["hadr_role"] == "principal"
    back = api_client.patch(env_url, json={"platform": "dataguard"})
    assert back.status_code == 200 and _destinations(api_client, environment["id"])[0]["hadr_role"] is None


def test_deleting_a_destination_still_needed_is_refused(api_client, session):
    environment = _env(api_client)
    first = _destinations(api_client, environment["id"])[0]
    field, message = _problem(api_client.delete(f"/api/v1/destinations/{first['id']}"), 409)
    assert field == "destination" and "the only destination" in message
    far = _add(api_client, environment["id"], name="far", kind="far_sync", transport="SYNC").json()
    remote = _add(api_client, environment["id"], name="remote", feeds_from=far["id"]).json()  # a standby behind it
    field, message = _problem(api_client.delete(f"/api/v1/destinations/{far['id']}"), 409)
    assert field == "feeds_from" and "'remote' is fed from 'far'" in message
    hosts_url = f"/api/v1/environments/{environment['id']}/hosts"
    host = api_client.post(hosts_url, json={**HOST, "name": "sb-remote", "destination_id": remote["id"]})
    assert host.status_code == 201, host.text
    field, message = _problem(api_client.delete(f"/api/v1/destinations/{remote['id']}"), 409)
    assert field == "hosts" and "'sb-remote'" in message
    link = api_client.post(
        f"/api/v1/environments/{environment['id']}/shared-links",
        json={"name": "wan", "destination_ids": [remote["id"]]},
    )
    assert link.status_code == 201, link.text
    assert api_client.delete(f"{hosts_url}/{host.json()['id']}").status_code == 204
    field, message = _problem(api_client.delete(f"/api/v1/destinations/{remote['id']}"), 409)
    assert field == "shared_links" and "only hop of the shared link 'wan'" in message
    both = api_client.put(
        f"/api/v1/shared-links/{link.json()['id']}", json={"destination_ids": [remote["id"], far["id"]]}
    )
    assert both.status_code == 200, both.text
    assert api_client.delete(f"/api/v1/destinations/{remote['id']}").status_code == 204
    assert api_client.get(f"/api/v1/shared-links/{link.json()['id']}").json()["destination_ids"] == [far["id"]]
    assert [d["id"] for d in _destinations(api_client, environment["id"])] == [first["id"], far["id"]]


def test_the_next_first_destination_must_be_fed_by_the_primary(session):
    environment = make_environment(session, transport_mode="ASYNC")
    first = environment.destinations[0]
    standby = destinations.create_destination(
        session=session, environment=environment, destination_in=DestinationCreate(name="b")
    )
    cascaded = destinations.create_destination(
        session=session,
        environment=environment,
        destination_in=DestinationCreate(name="c", kind="cascaded", feeds_from=standby.id),
    )
    # order by hand: the cascaded one right after the first
    cascaded.position, standby.position = 2, 3
    session.commit()
    with pytest.raises(FieldError) as refused:
        destinations.delete_destination(session=session, destination=first)
    assert refused.value.status_code == 409 and "'c' the first destination" in refused.value.message


# -- hosts per destination ------------------------------------------------------------------------


def test_hosts_belong_to_a_destination(api_client, session):
    environment = _env(api_client)
    first = _destinations(api_client, environment["id"])[0]
    second = _add(api_client, environment["id"], name="dr2", transport="SYNC").json()
    hosts_url = f"/api/v1/environments/{environment['id']}/hosts"
    primary = api_client.post(hosts_url, json={**HOST, "role": "primary", "name": "db1"})
    assert primary.status_code == 201 and primary.json()["destination_id"] is None
    sb1 = api_client.post(hosts_url, json={**HOST, "name": "sb1"})
    assert sb1.status_code == 201 and sb1.json()["destination_id"] == first["id"]  # the first by default
    # node 1 again, in another destination: a standby's node number is unique per destination
    dr1 = api_client.post(hosts_url, json={**HOST, "name": "dr1", "destination_id": second["id"]})
    assert dr1.status_code == 201, dr1.text
    field, message = _problem(
        api_client.post(hosts_url, json={**HOST, "name": "dr1b", "destination_id": second["id"]}), 409
    )
    assert field == "node_number" and "node number 1 in the destination 'dr2'" in message
    field, message = _problem(api_client.post(hosts_url, json={**HOST, "role": "primary", "name": "db1b"}), 409)
    assert field == "node_number" and "primary host with node number 1 in this environment" in message
    field, message = _problem(
        api_client.post(hosts_url, json={**HOST, "role": "primary", "name": "db2", "destination_id": second["id"]}),
        422,
    )
    assert field == "destination_id" and "A primary host belongs to no destination" in message
    other = _env(api_client, name="other")
    other_first = _destinations(api_client, other["id"])[0]
    field, message = _problem(
        api_client.post(hosts_url, json={**HOST, "name": "x", "destination_id": other_first["id"]}), 422
    )
    assert field == "destination_id" and f"Destination {other_first['id']} is not one of 'SALES prod'" in message
    assert api_client.get(f"/api/v1/destinations/{second['id']}").json()["host_ids"] == [dr1.json()["id"]]
    # moving a host: to the other destination's free slot, or to the primary side (no destination)
    moved = api_client.patch(f"{hosts_url}/{sb1.json()['id']}", json={"destination_id": second["id"], "node_number": 2})
    assert moved.status_code == 200 and moved.json()["destination_id"] == second["id"]
    promoted = api_client.patch(f"{hosts_url}/{dr1.json()['id']}", json={"role": "primary", "node_number": 2})
    assert promoted.status_code == 200 and promoted.json()["destination_id"] is None
    demoted = api_client.patch(f"{hosts_url}/{promoted.json()['id']}", json={"role": "standby"})
    assert demoted.status_code == 200 and demoted.json()["destination_id"] == first["id"]


def test_the_database_holds_the_node_numbers_unique(session):
    """The indexes themselves, on both databases: a primary's slot per environment (a partial index),
    a standby's per destination."""
    environment = make_environment(session)
    first = environment.destinations[0]
    base = {"environment_id": environment.id, "name_key": None, "ssh_address": "h", "ssh_port": 22,
            "ssh_user": "u", "transport": "ssh", "allow_kernel_changes": False, "created_at": first.created_at,
            "updated_at": first.created_at}  # fmt: skip
    session.execute(insert(Host).values(**base, role="primary", node_number=1, name="p1"))
    session.commit()
    with pytest.raises(IntegrityError):
        session.execute(insert(Host).values(**base, role="primary", node_number=1, name="p2"))
    session.rollback()
    session.execute(insert(Host).values(**base, role="standby", node_number=1, name="s1", destination_id=first.id))
    session.commit()
    with pytest.raises(IntegrityError):
        session.execute(insert(Host).values(**base, role="standby", node_number=1, name="s2", destination_id=first.id))
    session.rollback()


def test_cluster_pairs_use_the_first_destination_unless_told(session):
    environment = make_environment(session)
    second = destinations.create_destination(
        session=session, environment=environment, destination_in=DestinationCreate(name="dr2")
    )
    primary = make_host(session, environment, name="db1")
    standby = make_host(session, environment, role="standby", name="sb1")
    make_host(session, environment, role="standby", name="dr1", destination_id=second.id)
    session.refresh(environment)
    assert [(c.name, s.name) for c, s in node_pairs(environment)] == [("db1", "sb1")]
    assert [(c.name, s.name) for c, s in node_pairs(environment, destination=second)] == [("db1", "dr1")]
    assert [(c.name, s.name) for c, s in node_pairs(environment, reverse=True)] == [("sb1", "db1")]
    assert environment.standby_hosts() == [standby] and primary.destination_id is None


# -- shared links ---------------------------------------------------------------------------------


def test_shared_links(api_client):
    environment = _env(api_client)
    first = _destinations(api_client, environment["id"])[0]
    second = _add(api_client, environment["id"], name="dr2", transport="SYNC").json()
    url = f"/api/v1/environments/{environment['id']}/shared-links"
    created = api_client.post(
        url,
        json={
            "name": "Primary uplink",
            "destination_ids": [first["id"], second["id"], first["id"]],
            "bandwidth_bits_per_second": "10 Gbit/s",
        },
    )
    assert created.status_code == 201, created.text
    link = created.json()
    assert link["destination_ids"] == [first["id"], second["id"]] and link["bandwidth_bits_per_second"] == 10**10
    assert api_client.get(f"/api/v1/destinations/{second['id']}").json()["shared_link_ids"] == [link["id"]]
    assert api_client.get(url).json()["count"] == 1
    field, message = _problem(
        api_client.post(url, json={"name": "PRIMARY UPLINK", "destination_ids": [first["id"]]}), 409
    )
    assert field == "name" and "already has a shared link named 'Primary uplink'" in message
    field, message = _problem(api_client.post(url, json={"name": "x", "destination_ids": []}), 422)
    assert field == "destination_ids"
    field, message = _problem(api_client.post(url, json={"name": "x"}), 422)
    assert field == "destination_ids"
    other = _env(api_client, name="other")
    foreign = _destinations(api_client, other["id"])[0]["id"]
    field, message = _problem(api_client.post(url, json={"name": "x", "destination_ids": [foreign]}), 422)
    assert field == "destination_ids" and f"Destination {foreign} is not one of 'SALES prod'" in message
    field, message = _problem(
        api_client.post(url, json={"name": "x", "destination_ids": [first["id"]], "bandwidth_bits_per_second": "10"}),
        422,
    )
    assert field == "bandwidth_bits_per_second" and "has no unit" in message
    updated = api_client.put(
        f"/api/v1/shared-links/{link['id']}", json={"name": "WAN 7", "destination_ids": [second["id"]]}
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["destination_ids"] == [second["id"]] and updated.json()["bandwidth_bits_per_second"] == 10**10
    field, message = _problem(api_client.put(f"/api/v1/shared-links/{link['id']}", json={"destination_ids": []}), 422)
    assert field == "destination_ids"
    assert api_client.delete(f"/api/v1/shared-links/{link['id']}").status_code == 204
    assert api_client.get(f"/api/v1/shared-links/{link['id']}").status_code == 404
    assert api_client.get(url).json()["count"] == 0


def test_deleting_an_environment_removes_its_destinations_and_shared_links(api_client, session):
    environment = _env(api_client, protection_mode="max_performance", transport_mode="ASYNC")
    first = _destinations(api_client, environment["id"])[0]
    far = _add(api_client, environment["id"], name="far", kind="far_sync").json()
    remote = _add(api_client, environment["id"], name="remote", feeds_from=far["id"]).json()
    casc = _add(api_client, environment["id"], name="casc", kind="cascaded", feeds_from=remote["id"]).json()
    hosts_url = f"/api/v1/environments/{environment['id']}/hosts"
    assert api_client.post(hosts_url, json={**HOST, "name": "sb1"}).status_code == 201
    assert api_client.post(hosts_url, json={**HOST, "name": "c1", "destination_id": casc["id"]}).status_code == 201
    link = api_client.post(
        f"/api/v1/environments/{environment['id']}/shared-links",
        json={"name": "wan", "destination_ids": [first["id"], far["id"], remote["id"], casc["id"]]},
    )
    assert link.status_code == 201
    assert api_client.delete(f"/api/v1/environments/{environment['id']}").status_code == 204
    for table in (Destination, SharedLink, Host):
        assert session.scalar(select(func.count()).select_from(table)) == 0
    assert session.scalar(select(func.count()).select_from(shared_link_hops)) == 0
    assert api_client.get(f"/api/v1/destinations/{casc['id']}").status_code == 404


def test_reading_needs_a_login_and_writing_the_admin_role(app, api_client, anonymous, session):
    environment = _env(api_client)
    first = _destinations(api_client, environment["id"])[0]
    link = api_client.post(
        f"/api/v1/environments/{environment['id']}/shared-links", json={"name": "wan", "destination_ids": [first["id"]]}
    ).json()
    assert anonymous.get(f"/api/v1/environments/{environment['id']}/destinations").status_code == 401
    assert anonymous.get(f"/api/v1/destinations/{first['id']}").status_code == 401
    for role in (Role.viewer, Role.operator):
        make_user(session, role.value, role=role)
        token = api_client.post("/api/v1/auth/token", data={"username": role.value, "password": PASSWORD})
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
        assert api_client.get(f"/api/v1/destinations/{first['id']}", headers=headers).status_code == 200
        assert api_client.get(f"/api/v1/shared-links/{link['id']}", headers=headers).status_code == 200
        writes = [
            api_client.post(f"/api/v1/environments/{environment['id']}/destinations", json={"name": "x"},
                            headers=headers),
            api_client.put(f"/api/v1/destinations/{first['id']}", json={"notes": "x"}, headers=headers),
            api_client.delete(f"/api/v1/destinations/{first['id']}", headers=headers),
            api_client.post(f"/api/v1/environments/{environment['id']}/shared-links",
                            json={"name": "y", "destination_ids": [first["id"]]}, headers=headers),
            api_client.put(f"/api/v1/shared-links/{link['id']}", json={"notes": "x"}, headers=headers),
            api_client.delete(f"/api/v1/shared-links/{link['id']}", headers=headers),
        ]  # fmt: skip
        assert [w.status_code for w in writes] == [403] * 6, [w.text for w in writes]
        assert "needs the admin role" in writes[0].text


def test_missing_rows_are_404(api_client):
    assert api_client.get("/api/v1/environments/999/destinations").status_code == 404
    assert api_client.post("/api/v1/environments/999/destinations", json={"name": "x"}).status_code == 404
    assert "Destination 999 does not exist" in api_client.get("/api/v1/destinations/999").text
    assert api_client.put("/api/v1/destinations/999", json={}).status_code == 404
    assert api_client.delete("/api/v1/shared-links/999").status_code == 404
    assert api_client.get(f"/api/v1/destinations/{2**40}").status_code == 404


# -- a property: whatever the requests, no cycle and the environment mirrors its first --------------

# Mostly requests that can work (a valid mode for the platform, a source that fits the kind: a far sync
# for a standby now and then, a standby or a cascaded standby for a cascade; ASYNC for what is fed by
# another destination), so that sequences reach many destinations; every other choice comes up as well.
_OFTEN_VALID = {
    "dataguard": {"kind": ["standby"] * 2 + ["far_sync"] + ["cascaded"] * 2, "role": [None] * 5 + ["auxiliary"],
                  "mode": ["ASYNC", "SYNC", "FASTSYNC"] * 2 + ["NEARSYNC", "SUPERASYNC"]},
    "hadr": {"kind": ["standby"] * 5 + ["far_sync", "cascaded"], "role": ["auxiliary"] * 3 + ["principal", None],
             "mode": ["SUPERASYNC"] * 4 + ["SYNC", "NEARSYNC", "ASYNC", "FASTSYNC"]},
}  # fmt: skip
_FITTING_SOURCE = {"standby": ("far_sync",), "cascaded": ("standby", "cascaded"), "far_sync": ()}
_BANDWIDTH = st.one_of(st.none(), st.integers(1, 10**11))
_RTT = st.one_of(st.none(), st.floats(0.0001, 0.5))


def _draw_source(data, kind: str, target: int | None, rows: list[Destination]) -> int | None:
    """A source that fits `kind` (always for a cascade, half the time for a standby, never for a far sync);
    one time in ten any destination or none (itself, or a kind that does not fit: refused)."""
    if data.draw(st.integers(0, 9)) == 0:
        return data.draw(st.sampled_from([None, *(d.id for d in rows)]))
    fitting = [d.id for d in rows if d.kind.value in _FITTING_SOURCE[kind] and d.id != target]
    fed = kind == "cascaded" or (kind == "standby" and data.draw(st.booleans()))
    return data.draw(st.sampled_from(fitting)) if fed and fitting else None


def _draw_op(data, platform: str, rows: list[Destination]) -> tuple:
    """One request: create, update or delete a destination, or change the environment's transport and link."""
    often = _OFTEN_VALID[platform]
    what = data.draw(st.sampled_from(["create"] * 4 + ["update"] * 3 + ["delete"] * 2 + ["environment"]))
    mode = data.draw(st.sampled_from(often["mode"]))
    bandwidth, rtt = data.draw(_BANDWIDTH), data.draw(_RTT)
    if what == "environment":
        return what, mode, bandwidth, rtt
    target = data.draw(st.sampled_from([d.id for d in rows]))
    if what == "delete":
        return what, target
    kind = data.draw(st.sampled_from(often["kind"]))
    source = _draw_source(data, kind, target, rows)
    if source is not None and data.draw(st.integers(0, 3)):
        mode = "ASYNC"  # what another destination forwards is ASYNC (the other modes are refused)
    role = data.draw(st.sampled_from(often["role"]))
    if what == "create":
        name = data.draw(st.sampled_from([f"d{len(rows)}"] * 6 + [f"D{len(rows) - 1}", "STANDBY"]))
        return what, name, kind, source, mode, role, bandwidth, rtt
    return what, target, kind, source, mode, role, bandwidth, rtt


def _check_invariants(session, environment) -> None:
    session.expire_all()
    rows = environment.destinations
    assert [d.position for d in rows] == list(range(1, len(rows) + 1))
    first = rows[0]
    assert first.feeds_from_id is None
    assert (environment.transport_mode, environment.link_bandwidth_bits_per_second, environment.link_rtt_seconds) == (
        first.transport,
        first.link_bandwidth_bits_per_second,
        first.link_rtt_seconds,
    )
    by_id = {d.id: d for d in rows}
    for destination in rows:
        source = by_id[destination.feeds_from_id].kind.value if destination.feeds_from_id is not None else None
        assert (
            source
            in {"standby": (None, "far_sync"), "far_sync": (None,), "cascaded": ("standby", "cascaded")}[
                destination.kind.value
            ]
        ), (destination.name, destination.kind, source)
        assert source is None or destination.transport.value == "ASYNC"  # forwarded redo is ASYNC
        seen, node = set(), destination
        while node.feeds_from_id is not None:
            assert node.id not in seen, "a cycle"
            seen.add(node.id)
            node = by_id[node.feeds_from_id]  # never a dangling source
    if environment.platform.value == "hadr":
        assert len(rows) <= 3 and [d.hadr_role.value for d in rows].count("principal") == 1
        assert all(d.kind.value == "standby" for d in rows)
        assert all(d.transport.value == "SUPERASYNC" for d in rows if d.hadr_role.value == "auxiliary")
    else:
        assert all(d.hadr_role is None for d in rows)


def _request(session, environment, op) -> None:
    if op[0] == "create":
        _, name, kind, source, mode, role, bandwidth, rtt = op
        destination_in = DestinationCreate(
            name=name,
            kind=kind,
            feeds_from=source,
            transport=mode,
            hadr_role=role,
            link_bandwidth_bits_per_second=bandwidth,
            link_rtt_seconds=rtt,
        )
        destinations.create_destination(session=session, environment=environment, destination_in=destination_in)
    elif op[0] == "update":
        _, target, kind, source, mode, role, bandwidth, rtt = op
        changes = {"kind": kind, "feeds_from": source, "transport": mode, "link_rtt_seconds": rtt,
                   "link_bandwidth_bits_per_second": bandwidth, **({"hadr_role": role} if role else {})}  # fmt: skip
        destination = session.get(Destination, target)
        destinations.update_destination(
            session=session, destination=destination, destination_in=DestinationUpdate(**changes)
        )
    elif op[0] == "delete":
        destinations.delete_destination(session=session, destination=session.get(Destination, op[1]))
    else:
        _, mode, bandwidth, rtt = op
        env_in = EnvironmentUpdate(transport_mode=mode, link_bandwidth_bits_per_second=bandwidth, link_rtt_seconds=rtt)
        service.update_environment(session=session, environment=environment, env_in=env_in)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    platform=st.sampled_from(["dataguard", "hadr"]),
    protection=st.sampled_from(["max_performance", "max_availability"]),
    steps=st.integers(1, 12),
)
def test_any_sequence_of_requests_keeps_the_rules(session, data, platform, protection, steps):
    """Whatever is asked, in any order: positions run 1.., the first is fed by the primary and the
    environment's transport and link are its; each kind fed by what feeds it, forwarded redo ASYNC; no
    cycle, no dangling source; HADR's roles hold."""
    fields = {"protection_mode": protection} if platform == "dataguard" else {"protection_mode": None}
    environment = make_environment(session, platform=platform, transport_mode="SYNC", **fields)
    for _ in range(steps):
        op = _draw_op(data, platform, list(environment.destinations))
        try:
            _request(session, environment, op)
        except FieldError as error:
            assert error.status_code in (409, 422) and error.message
            session.rollback()
        except ValueError:  # pydantic: the merged environment refused (a mode of the other platform)
            session.rollback()
        _check_invariants(session, environment)


def _valid_shape(data, rows: list[Destination], target: int | None) -> tuple[str, int | None, str]:
    """A kind, source and transport the rules accept for a destination nothing is fed from (target: the
    one updated, never its own source): a standby or far sync fed by the primary in any mode, a standby
    behind a far sync or a cascade behind a standby or cascaded standby, ASYNC."""
    far_syncs = [d.id for d in rows if d.kind.value == "far_sync" and d.id != target]
    standbys = [d.id for d in rows if d.kind.value in ("standby", "cascaded") and d.id != target]
    shapes = ["standby", "far_sync"] + ["behind a far sync"] * bool(far_syncs) + ["cascaded"] * bool(standbys)
    shape = data.draw(st.sampled_from(shapes))
    if shape == "behind a far sync":
        return "standby", data.draw(st.sampled_from(far_syncs)), "ASYNC"
    if shape == "cascaded":
        return "cascaded", data.draw(st.sampled_from(standbys)), "ASYNC"
    return shape, None, data.draw(st.sampled_from(["ASYNC", "SYNC", "FASTSYNC"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), protection=st.sampled_from(["max_performance", "max_availability"]), steps=st.integers(1, 10))
def test_every_valid_data_guard_shape_is_accepted(session, data, protection, steps):
    """Creates, updates and deletes that keep the rules all succeed: far syncs the primary feeds, standbys
    behind them, cascades behind standbys (the first destination and what others are fed from left alone)."""
    environment = make_environment(session, transport_mode="SYNC", protection_mode=protection)
    for step in range(steps):
        rows = list(environment.destinations)
        leaves = [d.id for d in rows[1:] if not any(other.feeds_from_id == d.id for other in rows)]
        what = data.draw(st.sampled_from(["create"] * 3 + ["update", "delete"] if leaves else ["create"]))
        if what == "delete":
            op = ("delete", data.draw(st.sampled_from(leaves)))
        else:
            target = data.draw(st.sampled_from(leaves)) if what == "update" else None
            kind, source, mode = _valid_shape(data, rows, target)
            op = (what, target if target is not None else f"d{step}", kind, source, mode, None, None, None)
        _request(session, environment, op)  # never refused
        _check_invariants(session, environment)


@pytest.mark.parametrize(
    "body",
    ['[]', '"dr"', "null", "{", '{"name": "dr", "notes": "a\\u0000b"}', '{"name": "dr", "kind": 7}',
     '{"name": "dr", "link_rtt_seconds": {"ms": 5}}', '{"name": "' + "x" * 101 + '"}', '{"name": 5}'],
)  # fmt: skip
def test_malformed_bodies_are_4xx_never_500(api_client, body):
    environment = _env(api_client)
    first = _destinations(api_client, environment["id"])[0]
    headers = {"Content-Type": "application/json"}
    for method, url in [
        ("POST", f"/api/v1/environments/{environment['id']}/destinations"),
        ("PUT", f"/api/v1/destinations/{first['id']}"),
        ("POST", f"/api/v1/environments/{environment['id']}/shared-links"),
    ]:
        response = api_client.request(method, url, content=body.encode(), headers=headers)
        assert 400 <= response.status_code < 500, (method, url, response.text)
    assert len(_destinations(api_client, environment["id"])) == 1


def test_null_keeps_what_cannot_be_empty(api_client):
    environment = _env(api_client)
    first = _destinations(api_client, environment["id"])[0]
    kept = api_client.put(f"/api/v1/destinations/{first['id']}", json={"name": None, "notes": None, "kind": None})
    assert kept.status_code == 200, kept.text
    assert (kept.json()["name"], kept.json()["notes"], kept.json()["kind"]) == ("standby", "", "standby")
    cleared = api_client.put(f"/api/v1/destinations/{first['id']}", json={"link_rtt_seconds": None})
    assert cleared.status_code == 200 and cleared.json()["link_rtt_seconds"] is None
    assert api_client.get(f"/api/v1/environments/{environment['id']}").json()["link_rtt_seconds"] is None
    url = f"/api/v1/environments/{environment['id']}/shared-links"
    for hops in ("1", [0], [first["id"]] * 65, [None]):
        field, _ = _problem(api_client.post(url, json={"name": "x", "destination_ids": hops}), 422)
        assert field in ("destination_ids", 0)


@pytest.mark.parametrize("what", ["the last HADR auxiliary", "look-alike names"])
def test_simultaneous_creates_meet_one_after_the_other(engine, session, monkeypatch, what):
    """Two creates at once, each holding on after its checks passed (up to 2 s): the environment's
    lock makes the second check again after the first committed, so the rules hold."""
    import threading

    from redolab.core.db import make_sessionmaker

    hadr = what.startswith("the last")
    fields = {"platform": "hadr", "protection_mode": None} if hadr else {}
    environment = make_environment(session, transport_mode="SYNC", **fields)
    if hadr:
        destinations.create_destination(
            session=session, environment=environment, destination_in=DestinationCreate(name="aux1")
        )
    names = ["aux2", "aux3"] if hadr else ["London", "\uff2c\uff4f\uff4e\uff44\uff4f\uff4e"]
    barrier, original = threading.Barrier(2, timeout=2), destinations.check_destination

    def checked_then_wait(*args):
        original(*args)
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()

    monkeypatch.setattr(destinations, "check_destination", checked_then_wait)
    sessions, outcomes = make_sessionmaker(engine), [None, None]

    def attempt(index: int) -> None:
        with sessions() as own:
            mine = own.get(type(environment), environment.id)
            try:
                outcomes[index] = destinations.create_destination(
                    session=own, environment=mine, destination_in=DestinationCreate(name=names[index])
                ).id
            except FieldError as error:
                outcomes[index] = error

    threads = [threading.Thread(target=attempt, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    refused = [o for o in outcomes if isinstance(o, FieldError)]
    assert len(refused) == 1 and refused[0].status_code == 409, outcomes
    assert refused[0].field == ("hadr_role" if hadr else "name")
    session.expire_all()
    assert len(environment.destinations) == (3 if hadr else 2)


def test_a_host_added_while_its_destination_is_deleted_is_never_orphaned(engine, session, monkeypatch):
    """A standby host created into a destination at the moment that destination is deleted: the host's
    checks hold the environment's lock to its commit, so the delete sees the host and refuses, instead of
    leaving a standby in no destination (or failing the host's insert on the deleted row)."""
    import threading
    import time

    from redolab.core.db import make_sessionmaker
    from redolab.environments.schemas import HostCreate

    environment = make_environment(session)
    remote = destinations.create_destination(
        session=session, environment=environment, destination_in=DestinationCreate(name="remote")
    )
    barrier, original = threading.Barrier(2, timeout=5), service._check_credential

    def checked_then_wait(*args):
        original(*args)
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()  # the host's checks passed; the delete starts now
        time.sleep(0.5)  # and has time to finish before this host is written, unless the lock holds it

    monkeypatch.setattr(service, "_check_credential", checked_then_wait)
    sessions, outcomes = make_sessionmaker(engine), {}

    def add_host() -> None:
        with sessions() as own:
            mine = own.get(type(environment), environment.id)
            host_in = HostCreate(**HOST, name="dr1", destination_id=remote.id)
            outcomes["host"] = service.create_host(session=own, environment=mine, host_in=host_in).id

    def delete() -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()
        with sessions() as own:
            try:
                destinations.delete_destination(session=own, destination=own.get(Destination, remote.id))
                outcomes["delete"] = "deleted"
            except FieldError as error:
                outcomes["delete"] = error

    threads = [threading.Thread(target=add_host), threading.Thread(target=delete)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert isinstance(outcomes.get("delete"), FieldError) and outcomes["delete"].field == "hosts", outcomes
    session.expire_all()
    host = session.get(Host, outcomes["host"])
    assert host.destination_id == remote.id and session.get(Destination, remote.id) is not None
