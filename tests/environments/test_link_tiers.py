"""An environment's own link tiers (issue 55, item 2): the JSON API and the panel on the environment
page create, list and delete them; a bad rate or price is a 4xx naming its field; reading needs a
login, changing needs the operator role; planning reads them before the catalogue's steps."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from redolab.auth.models import Role
from redolab.core.errors import FieldError
from redolab.environments import tiers
from redolab.environments.models import Environment
from redolab.environments.schemas_tiers import LinkTierCreate
from redolab.planning.tiers import MonthlyPrice, catalogue_tiers
from tests.conftest import log_in
from tests.factories import PASSWORD, make_environment, make_user


def _tiers_url(environment_id: int) -> str:
    return f"/api/v1/environments/{environment_id}/link-tiers"


def _problem(response, status: int) -> tuple[str, str]:
    """(field, message) of a refusal, after checking its status."""
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    return detail[0]["loc"][-1], detail[0]["msg"]


# -- the JSON API ----------------------------------------------------------------------------------
def test_create_list_and_delete_tiers(api_client, session):
    environment = make_environment(session)
    made = api_client.post(
        _tiers_url(environment.id),
        json={"name": "MPLS 1G", "bits_per_second": "1 Gbit/s", "monthly_price": 1200.5, "currency": "eur"},
    )
    assert made.status_code == 201, made.text
    body = made.json()
    assert (body["name"], body["bits_per_second"], body["monthly_price"], body["currency"]) == (
        "MPLS 1G",
        10**9,
        1200.5,
        "EUR",
    )
    slower = api_client.post(_tiers_url(environment.id), json={"name": "MPLS 200M", "bits_per_second": 200_000_000})
    assert slower.status_code == 201, slower.text
    assert slower.json()["monthly_price"] is None and slower.json()["currency"] is None

    listed = api_client.get(_tiers_url(environment.id))
    assert listed.status_code == 200
    assert listed.json()["count"] == 2
    assert [tier["name"] for tier in listed.json()["data"]] == ["MPLS 200M", "MPLS 1G"]  # slowest first
    assert api_client.get(f"/api/v1/link-tiers/{body['id']}").json()["name"] == "MPLS 1G"

    assert api_client.delete(f"/api/v1/link-tiers/{body['id']}").status_code == 204
    assert [tier["name"] for tier in api_client.get(_tiers_url(environment.id)).json()["data"]] == ["MPLS 200M"]
    assert api_client.get(f"/api/v1/link-tiers/{body['id']}").status_code == 404


def test_planning_reads_the_environments_own_tiers(api_client, session):
    environment = make_environment(session)
    api_client.post(
        _tiers_url(environment.id),
        json={"name": "WAN", "bits_per_second": "500 Mbit/s", "monthly_price": "900", "currency": "USD"},
    )
    session.expire_all()
    offered = catalogue_tiers(session.get(Environment, environment.id))
    assert [(t.name, t.bits_per_second, t.monthly_price) for t in offered] == [
        ("WAN", 500_000_000, MonthlyPrice(900.0, "USD"))
    ]


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"bits_per_second": 0}, "bits_per_second"),
        ({"bits_per_second": -5}, "bits_per_second"),
        ({"bits_per_second": "1.5 Tbit/s"}, "bits_per_second"),
        ({"bits_per_second": 10**12 + 1}, "bits_per_second"),
        ({"bits_per_second": "fast"}, "bits_per_second"),
        ({}, "bits_per_second"),
        ({"bits_per_second": "1 Gbit/s", "monthly_price": -1, "currency": "EUR"}, "monthly_price"),
        ({"bits_per_second": "1 Gbit/s", "monthly_price": "nan", "currency": "EUR"}, "monthly_price"),
        ({"bits_per_second": "1 Gbit/s", "monthly_price": 10, "currency": "euro"}, "currency"),
        ({"bits_per_second": "1 Gbit/s", "monthly_price": 10}, "currency"),
        ({"bits_per_second": "1 Gbit/s", "name": "   "}, "name"),
    ],
)
def test_a_bad_value_is_refused_naming_its_field(api_client, session, fields, field):
    environment = make_environment(session)
    response = api_client.post(_tiers_url(environment.id), json={"name": "t", **fields})
    assert _problem(response, 422)[0] == field
    assert api_client.get(_tiers_url(environment.id)).json()["count"] == 0


def test_one_tbit_is_the_most_a_tier_may_be(api_client, session):
    environment = make_environment(session)
    response = api_client.post(_tiers_url(environment.id), json={"name": "top", "bits_per_second": "1 Tbit/s"})
    assert response.status_code == 201, response.text


def test_a_name_is_unique_in_the_environment_as_people_compare_it(api_client, session):
    environment, other = make_environment(session), make_environment(session)
    first = api_client.post(_tiers_url(environment.id), json={"name": "Gold", "bits_per_second": 10**9})
    assert first.status_code == 201
    field, message = _problem(
        api_client.post(_tiers_url(environment.id), json={"name": "GOLD", "bits_per_second": 10**8}), 409
    )
    assert field == "name" and "already has a link tier named 'Gold'" in message
    assert api_client.post(_tiers_url(other.id), json={"name": "Gold", "bits_per_second": 10**9}).status_code == 201


def test_reading_needs_a_login_and_changing_the_operator_role(api_client, anonymous, session):
    environment = make_environment(session)
    tier = api_client.post(_tiers_url(environment.id), json={"name": "t", "bits_per_second": 10**9}).json()
    assert anonymous.get(_tiers_url(environment.id)).status_code == 401
    assert anonymous.post(_tiers_url(environment.id), json={"name": "x", "bits_per_second": 1}).status_code == 401
    assert anonymous.delete(f"/api/v1/link-tiers/{tier['id']}").status_code == 401
    make_user(session, "vera", role=Role.viewer)
    token = api_client.post("/api/v1/auth/token", data={"username": "vera", "password": PASSWORD}).json()
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    assert api_client.get(_tiers_url(environment.id), headers=headers).status_code == 200
    writes = [
        api_client.post(_tiers_url(environment.id), json={"name": "x", "bits_per_second": 10**9}, headers=headers),
        api_client.delete(f"/api/v1/link-tiers/{tier['id']}", headers=headers),
    ]
    assert [w.status_code for w in writes] == [403, 403]


def test_an_unknown_environment_is_404(api_client):
    assert api_client.get(_tiers_url(987654)).status_code == 404
    assert api_client.post(_tiers_url(987654), json={"name": "x", "bits_per_second": 10**9}).status_code == 404


# -- the panel on the environment page ----------------------------------------------------------------
def test_the_page_shows_a_folded_panel_and_the_form_adds_a_tier(browser_client, session):
    environment = make_environment(session)
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200
    assert 'id="link-tiers"' in page.text and 'id="no-link-tiers"' in page.text
    assert '<details class="form-panel" id="link-tier-panel">' in page.text  # folded
    added = browser_client.post(
        f"/environments/{environment.id}/link-tiers",
        data={"name": "MPLS 1G", "bits_per_second": "1 Gbit/s", "monthly_price": "1200", "currency": "EUR"},
        headers={"HX-Request": "true"},
    )
    assert added.status_code == 200, added.text
    assert 'id="link-tiers-table"' in added.text and "MPLS 1G" in added.text and "1,200.00 EUR" in added.text
    page = browser_client.get(f"/environments/{environment.id}")
    assert "MPLS 1G" in page.text and 'id="no-link-tiers"' not in page.text


def test_the_form_without_htmx_goes_back_to_the_page(browser_client, session):
    environment = make_environment(session)
    added = browser_client.post(
        f"/environments/{environment.id}/link-tiers", data={"name": "t", "bits_per_second": "100 Mbit/s"}
    )
    assert added.status_code == 303
    assert added.headers["location"].endswith(f"/environments/{environment.id}#link-tiers")


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"bits_per_second": "0"}, "bits_per_second"),
        ({"bits_per_second": "2 Tbit/s"}, "bits_per_second"),
        ({"bits_per_second": "1 Gbit/s", "monthly_price": "-3", "currency": "EUR"}, "monthly_price"),
        ({"bits_per_second": "1 Gbit/s", "monthly_price": "30", "currency": ""}, "currency"),
    ],
)
def test_the_form_shows_an_error_beside_its_field(browser_client, session, fields, field):
    environment = make_environment(session)
    response = browser_client.post(
        f"/environments/{environment.id}/link-tiers", data={"name": "t", **fields}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422
    assert f'id="e-lt-{field}"' in response.text
    assert '<details class="form-panel" id="link-tier-panel" open>' in response.text
    assert 'name="name" type="text" value="t"' in response.text  # what was typed is kept


def test_the_panel_deletes_a_tier(browser_client, session):
    environment = make_environment(session)
    browser_client.post(f"/environments/{environment.id}/link-tiers", data={"name": "t", "bits_per_second": "1 Gbit/s"})
    tier_id = browser_client.get(_tiers_url(environment.id)).json()["data"][0]["id"]
    other = make_environment(session)
    wrong = browser_client.delete(f"/environments/{other.id}/link-tiers/{tier_id}", headers={"HX-Request": "true"})
    assert wrong.status_code == 404
    gone = browser_client.delete(f"/environments/{environment.id}/link-tiers/{tier_id}", headers={"HX-Request": "true"})
    assert gone.status_code == 200 and 'id="no-link-tiers"' in gone.text
    assert browser_client.get(_tiers_url(environment.id)).json()["count"] == 0


def test_the_panel_needs_a_login_and_the_operator_role_to_change(anonymous, session):
    environment = make_environment(session)
    refused = anonymous.post(f"/environments/{environment.id}/link-tiers", data={"name": "t", "bits_per_second": "1"})
    assert refused.status_code in (303, 401)
    make_user(session, "vera", role=Role.viewer)
    assert log_in(anonymous, "vera").status_code == 303
    page = anonymous.get(f"/environments/{environment.id}")
    assert 'id="link-tiers"' in page.text and 'id="link-tier-form"' not in page.text
    response = anonymous.post(
        f"/environments/{environment.id}/link-tiers", data={"name": "t", "bits_per_second": "1 Gbit/s"}
    )
    assert response.status_code == 403


def test_the_form_needs_the_csrf_token(app, session):
    make_user(session, "olga", role=Role.operator)
    environment = make_environment(session)
    with TestClient(app, follow_redirects=False) as client:
        assert log_in(client, "olga").status_code == 303
        del client.headers["X-CSRFToken"]
        response = client.post(
            f"/environments/{environment.id}/link-tiers", data={"name": "t", "bits_per_second": "1 Gbit/s"}
        )
        assert response.status_code == 403


def test_an_environment_keeps_at_most_64_tiers(session):
    environment = make_environment(session)
    for number in range(tiers.MAX_TIERS):
        tier_in = LinkTierCreate(name=f"t{number}", bits_per_second=10**6 * (number + 1))
        tiers.create_tier(session=session, environment=environment, tier_in=tier_in)
    with pytest.raises(FieldError) as refused:
        tiers.create_tier(
            session=session, environment=environment, tier_in=LinkTierCreate(name="one more", bits_per_second=10**9)
        )
    assert refused.value.field == "name" and refused.value.status_code == 409
    assert "64 link tiers" in refused.value.message


def test_deleting_the_environment_deletes_its_tiers(api_client, session):
    environment = make_environment(session)
    tier = api_client.post(_tiers_url(environment.id), json={"name": "t", "bits_per_second": 10**9}).json()
    assert api_client.delete(f"/api/v1/environments/{environment.id}").status_code == 204
    assert api_client.get(f"/api/v1/link-tiers/{tier['id']}").status_code == 404


def test_a_null_price_is_no_price_and_a_bad_path_id_a_422(api_client, session):
    """Schemathesis sent monthly_price null: pydantic applied the price's bounds to the null (a
    TypeError, 500), whatever the path said."""
    environment = make_environment(session)
    body = {"name": "t", "bits_per_second": "1 Gbit/s", "monthly_price": None, "currency": None}
    made = api_client.post(_tiers_url(environment.id), json=body)
    assert made.status_code == 201, made.text
    assert made.json()["monthly_price"] is None
    refused = api_client.post("/api/v1/environments/AAA/link-tiers", json=body)
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["path", "environment_id"]
