"""The destinations page: the destinations and shared links of an environment, in tables with their units;
admins add and delete both, everyone else reads; the host form puts a standby in the destination chosen."""

from __future__ import annotations

import re

import pytest

from redolab.auth.models import Role
from tests.conftest import log_in
from tests.factories import make_environment, make_user
from tests.web.test_environments import HOST, HTMX

DESTINATION = {
    "name": "",
    "kind": "standby",
    "transport": "ASYNC",
    "feeds_from": "",
    "link_bandwidth_bits_per_second": "",
    "link_rtt_seconds": "",
    "notes": "",
}


def page_of(environment) -> str:
    return f"/environments/{environment.id}/destinations"


def row(page: str, row_id: str) -> str:
    """The text of one table row, tags left out."""
    found = re.search(rf'<tr id="{row_id}">(.*?)</tr>', page, re.S)
    assert found, row_id
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def destination_ids(client, environment) -> dict[str, int]:
    listing = client.get(f"/api/v1/environments/{environment.id}/destinations")
    assert listing.status_code == 200
    return {d["name"]: d["id"] for d in listing.json()["data"]}


def add_destination(client, environment, **fields) -> int:
    response = client.post(f"{page_of(environment)}", data={**DESTINATION, **fields})
    assert response.status_code == 303, response.text
    assert response.headers["location"] == f"{page_of(environment)}#destinations"
    return destination_ids(client, environment)[fields["name"]]


def far_sync_and_remote(client, environment) -> tuple[int, int]:
    """The MAA shape: a far sync fed by the primary (SYNC), a remote standby fed by it (ASYNC)."""
    far_sync = add_destination(
        client,
        environment,
        name="fs1",
        kind="far_sync",
        transport="SYNC",
        link_bandwidth_bits_per_second="1 Gbit/s",
        link_rtt_seconds="2 ms",
    )
    remote = add_destination(
        client, environment, name="remote", transport="ASYNC", feeds_from=str(far_sync), link_rtt_seconds="40 ms"
    )
    return far_sync, remote


@pytest.fixture
def operator_client(anonymous, session):
    make_user(session, "olga", role=Role.operator)
    assert log_in(anonymous, "olga").status_code == 303
    return anonymous


def test_the_page_lists_the_first_destination(browser_client, session):
    environment = make_environment(
        session, name="SALES", link_bandwidth_bits_per_second="10 Gbit/s", link_rtt_seconds="25 ms"
    )
    page = browser_client.get(page_of(environment))
    assert page.status_code == 200
    assert "<title>Destinations: SALES" in page.text
    first = destination_ids(browser_client, environment)["standby"]
    assert row(page.text, f"destination-{first}") == "1 standby Standby ASYNC primary 10,000 Mbit/s 25 ms – Delete"
    assert 'id="destination-form"' in page.text and 'id="shared-link-form"' in page.text
    assert 'id="no-shared-links"' in page.text
    detail = browser_client.get(f"/environments/{environment.id}")
    assert f'href="{page_of(environment)}" id="destinations-link">Destinations and shared links</a>' in detail.text


def test_an_admin_adds_a_far_sync_a_remote_standby_and_a_shared_link(browser_client, session):
    environment = make_environment(session)
    far_sync, remote = far_sync_and_remote(browser_client, environment)
    added = browser_client.post(
        f"/environments/{environment.id}/shared-links",
        data={"name": "wan", "bandwidth_bits_per_second": "10 Gbit/s", "destination_ids": [far_sync, remote]},
    )
    assert added.status_code == 303
    assert added.headers["location"] == f"{page_of(environment)}#destinations"
    page = browser_client.get(page_of(environment)).text
    assert row(page, f"destination-{far_sync}") == "2 fs1 Far sync instance SYNC primary 1,000 Mbit/s 2 ms – Delete"
    assert row(page, f"destination-{remote}") == "3 remote Standby ASYNC fs1 – 40 ms – Delete"
    assert 'id="shared-links-table"' in page
    link_id = browser_client.get(f"/api/v1/environments/{environment.id}/shared-links").json()["data"][0]["id"]
    assert row(page, f"shared-link-{link_id}") == "wan 10,000 Mbit/s fs1, remote Delete"
    assert f'<option value="{far_sync}">fs1</option>' in page  # now a source in "Fed from"
    deleted = browser_client.post(f"/shared-links/{link_id}/delete")
    assert deleted.status_code == 303
    assert 'id="no-shared-links"' in browser_client.get(page_of(environment)).text


def test_on_db2_hadr_an_admin_adds_an_auxiliary(browser_client, session):
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC", protection_mode=None)
    page = browser_client.get(page_of(environment)).text
    assert 'id="d-hadr_role"' in page and 'id="d-feeds_from"' not in page  # HADR standbys are fed by the primary
    assert 'value="SUPERASYNC" selected' in page
    fields = {k: v for k, v in DESTINATION.items() if k != "feeds_from"}
    response = browser_client.post(
        page_of(environment), data={**fields, "name": "aux1", "transport": "SUPERASYNC", "hadr_role": "auxiliary"}
    )
    assert response.status_code == 303, response.text
    page = browser_client.get(page_of(environment)).text
    first, auxiliary = destination_ids(browser_client, environment).values()
    assert row(page, f"destination-{first}").startswith("1 standby Standby NEARSYNC primary Principal")
    assert row(page, f"destination-{auxiliary}").startswith("2 aux1 Standby SUPERASYNC primary Auxiliary")


def test_a_bad_bandwidth_is_shown_next_to_its_field_and_kept(browser_client, session):
    environment = make_environment(session)
    response = browser_client.post(
        page_of(environment), data={**DESTINATION, "name": "dr2", "link_bandwidth_bits_per_second": "fast"}
    )
    assert response.status_code == 422
    assert 'id="e-d-link_bandwidth_bits_per_second"' in response.text
    assert 'name="link_bandwidth_bits_per_second" type="text" value="fast"' in response.text
    assert 'name="name" type="text" value="dr2"' in response.text
    assert list(destination_ids(browser_client, environment)) == ["standby"]  # nothing written


def test_a_rule_the_service_enforces_is_shown_next_to_its_field(browser_client, session):
    environment = make_environment(session)
    far_sync = add_destination(browser_client, environment, name="fs1", kind="far_sync", transport="SYNC")
    response = browser_client.post(
        page_of(environment), data={**DESTINATION, "name": "chained", "kind": "far_sync", "feeds_from": far_sync}
    )
    assert response.status_code == 422
    assert 'id="e-d-feeds_from"' in response.text and "never fed by another destination" in response.text
    assert f'<option value="{far_sync}" selected>fs1</option>' in response.text  # the choice kept


def test_a_shared_link_needs_a_hop(browser_client, session):
    environment = make_environment(session)
    response = browser_client.post(
        f"/environments/{environment.id}/shared-links", data={"name": "uplink", "bandwidth_bits_per_second": "1 Gbit/s"}
    )
    assert response.status_code == 422
    assert 'id="e-sl-destination_ids"' in response.text
    assert 'name="name" type="text" value="uplink"' in response.text


def test_a_non_admin_reads_the_page_without_forms_and_cannot_change_it(operator_client, session):
    environment = make_environment(session)
    page = operator_client.get(page_of(environment))
    assert page.status_code == 200 and 'id="destinations-table"' in page.text
    for form in ('id="destination-form"', 'id="shared-link-form"', "/delete"):
        assert form not in page.text, form
    assert "An admin adds and deletes destinations and shared links" in page.text
    assert "you are an operator" in page.text
    refused = operator_client.post(page_of(environment), data={**DESTINATION, "name": "dr2"})
    assert refused.status_code == 403
    link = operator_client.post(f"/environments/{environment.id}/shared-links", data={"name": "x"})
    assert link.status_code == 403


def test_the_host_form_puts_a_standby_in_the_destination_chosen(browser_client, session):
    environment = make_environment(session)
    second = add_destination(browser_client, environment, name="dr2")
    hosts = f"/environments/{environment.id}/hosts"
    primary = browser_client.post(hosts, data={**HOST, "destination_id": ""}, headers=HTMX)  # the default choice
    assert primary.status_code == 200
    assert 'id="f-destination_id"' in primary.text and f'<option value="{second}">dr2</option>' in primary.text
    standby = {**HOST, "role": "standby", "name": "sb2", "ssh_address": "sb2.example.com"}
    added = browser_client.post(hosts, data={**standby, "destination_id": str(second)}, headers=HTMX)
    assert added.status_code == 200
    host_ids = browser_client.get(f"/api/v1/destinations/{second}").json()["host_ids"]
    assert len(host_ids) == 1
    assert row(added.text, f"host-{host_ids[0]}").startswith("Standby dr2 1 sb2")  # several destinations: named
    first = destination_ids(browser_client, environment)["standby"]
    assert browser_client.get(f"/api/v1/destinations/{first}").json()["host_ids"] == []
    editing = browser_client.get(f"{hosts}?edit={host_ids[0]}", headers=HTMX)
    assert f'<option value="{second}" selected>dr2</option>' in editing.text


def test_deleting_a_destination_others_are_fed_from_says_why(browser_client, session):
    environment = make_environment(session)
    far_sync, remote = far_sync_and_remote(browser_client, environment)
    refused = browser_client.post(f"/destinations/{far_sync}/delete")
    assert refused.status_code == 409
    assert 'id="destinations-refusal"' in refused.text
    assert "&#39;remote&#39; is fed from &#39;fs1&#39;" in refused.text
    assert browser_client.post(f"/destinations/{remote}/delete").status_code == 303
    assert browser_client.post(f"/destinations/{far_sync}/delete").status_code == 303
    assert list(destination_ids(browser_client, environment)) == ["standby"]


def test_how_an_ambiguous_unit_was_read_is_said_on_the_page(browser_client, session):
    environment = make_environment(session)
    add_destination(browser_client, environment, name="dr2", link_bandwidth_bits_per_second="1 GB/s")
    page = browser_client.get(page_of(environment)).text
    assert 'id="unit-readings"' in page and "8,589.93 Mbit/s" in page
