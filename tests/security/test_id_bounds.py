"""Ids beyond what the databases store (issue 33): every route with an id in its path answers 404 or
422, never a 500 (SQLite's driver cannot bind a number beyond 2^63-1, PostgreSQL's INTEGER ids stop at
2^31-1). Walks the app's routes, so a route added later is checked too; ids in query parameters and in
bodies are bounded the same way. The largest id is looked up on both databases."""

from __future__ import annotations

import re

import pytest
from fastapi.routing import iter_route_contexts

from redolab.core.db import MAX_ROW_ID
from redolab.main import ID_QUERY_PARAMETERS
from tests.factories import make_environment
from tests.web.test_runs import local_env

HUGE = [MAX_ROW_ID + 1, 2**63 - 1, 2**63, 2**64, 10**40, -(2**63 + 1)]
OTHER_PARAMETERS = {"fmt": "csv"}  # path parameters that are not ids


def _id_routes(app):
    """(method, path template, its id parameters) of every route with an `{..._id}` parameter."""
    for route in iter_route_contexts(app.routes):
        names = re.findall(r"\{([^}:]+)", route.path)
        ids = [name for name in names if name.endswith("_id")]
        for method in sorted((route.methods or set()) - {"HEAD", "OPTIONS"}):
            if ids:
                yield method, route.path, ids


def _concrete(path: str, value: int, real: dict[str, int]) -> str:
    def fill(match: re.Match) -> str:
        name = match.group(1).split(":")[0]
        return OTHER_PARAMETERS.get(name, str(real.get(name, value)))

    return re.sub(r"\{([^}]+)\}", fill, path)


def _ask(browser_client, api_client, method: str, path: str):
    client = api_client if path.startswith("/api/") else browser_client
    body = {"json": {}} if path.startswith("/api/") else {"data": {}}
    return client.request(method, path, **(body if method in ("POST", "PUT", "PATCH") else {}))


def test_every_route_with_an_id_answers_404_or_422_beyond_the_integers(app, browser_client, api_client, session):
    routes = list(_id_routes(app))
    assert len(routes) > 40  # the walk sees the pages and the API
    failures = []
    for method, template, _ in routes:
        for value in HUGE:
            path = _concrete(template, value, {})
            status = _ask(browser_client, api_client, method, path).status_code
            if status not in (404, 422):
                failures.append((method, path, status))
    assert failures == [], failures


def test_the_largest_id_is_looked_up_without_a_server_error(app, browser_client, api_client, session):
    """MAX_ROW_ID fits both databases: each route looks it up and finds nothing (some redirect or
    answer idempotently), none fails. On SQLite and on PostgreSQL."""
    failures = []
    for method, template, _ in _id_routes(app):
        path = _concrete(template, MAX_ROW_ID, {})
        status = _ask(browser_client, api_client, method, path).status_code
        if status >= 500:
            failures.append((method, path, status))
    assert failures == [], failures


def test_an_id_beyond_the_integers_in_one_place_of_a_real_path(app, browser_client, api_client, session):
    """The environment exists and only the second id is out of range: still 404/422, not 500."""
    environment = make_environment(session)
    failures = []
    for method, template, ids in _id_routes(app):
        if "environment_id" not in ids or len(ids) < 2:
            continue
        path = _concrete(template, MAX_ROW_ID + 1, {"environment_id": environment.id})
        status = _ask(browser_client, api_client, method, path).status_code
        if status not in (404, 422):
            failures.append((method, path, status))
    assert failures == [], failures


def test_the_answers_are_not_found_for_pages_and_the_api(browser_client, api_client):
    page = browser_client.get(f"/environments/{MAX_ROW_ID + 1}")
    assert page.status_code == 404 and str(MAX_ROW_ID) in page.text
    api = api_client.get(f"/api/v1/environments/{2**64}/hosts")
    assert api.status_code == 404 and "ids run from 1 to" in api.json()["detail"]
    assert api_client.get(f"/api/v1/environments/{MAX_ROW_ID}").status_code == 404  # in range: looked up


def _integer_query_parameters(app):
    """(path, name) of every query parameter a route reads as an integer (or a list of them)."""

    def walk(dependant):
        yield from dependant.query_params
        for sub in dependant.dependencies:
            yield from walk(sub)

    for route in iter_route_contexts(app.routes):
        dependant = getattr(route.route, "dependant", None)  # a mount (static files) has none
        for parameter in walk(dependant) if dependant else ():
            if re.search(r"\bint\b", str(parameter.field_info.annotation)):
                yield route.path, parameter.alias


def test_every_integer_query_parameter_holds_beyond_the_integers(app, browser_client, api_client, session):
    """Those that name rows (ID_QUERY_PARAMETERS) answer 422; any other has bounds of its own: none
    answers 500, whatever number it is given."""
    environment = make_environment(session)
    seen, failures = set(), []
    for template, name in _integer_query_parameters(app):
        seen.add(name)
        path = _concrete(template, environment.id, {})
        for value in (MAX_ROW_ID + 1, 2**63, 10**40):
            status = _ask(browser_client, api_client, "GET", f"{path}?{name}={value}").status_code
            if status >= 500 or (name in ID_QUERY_PARAMETERS and status != 422):
                failures.append((path, name, value, status))
    assert failures == [], failures
    assert seen >= ID_QUERY_PARAMETERS  # every listed one is still read by some route


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/environments/{e}/plan?import={n}",
        "/api/v1/environments/{e}/plan?run=1&run={n}",
        "/compare?run={n}",
        "/compare?sweep={n}",
        "/environments/{e}/hosts?edit={n}",
    ],
)
def test_ids_in_query_parameters_beyond_the_integers_are_422(browser_client, api_client, session, path):
    environment = make_environment(session)
    response = _ask(browser_client, api_client, "GET", path.format(e=environment.id, n=MAX_ROW_ID + 1))
    assert response.status_code == 422, response.text
    if path.startswith("/api/"):
        (error,) = response.json()["detail"]
        assert error["loc"][0] == "query" and str(MAX_ROW_ID) in error["msg"]


def test_other_query_parameters_may_be_large_numbers(api_client, session):
    environment = make_environment(session)
    plan = api_client.get(f"/api/v1/environments/{environment.id}/plan", params={"exclude_tag": "4000000001"})
    assert plan.status_code == 200, plan.text


def test_ids_in_bodies_beyond_the_integers_are_422(api_client, session):
    environment, primary, _ = local_env(session)
    base = f"/api/v1/environments/{environment.id}"
    run = api_client.post(f"{base}/runs", json={"client_host_id": primary.id, "server_host_id": MAX_ROW_ID + 1})
    assert run.status_code == 422 and run.json()["detail"][0]["loc"] == ["body", "server_host_id"]
    host = api_client.patch(f"{base}/hosts/{primary.id}", json={"credential_id": 2**70})
    assert host.status_code == 422 and host.json()["detail"][0]["loc"] == ["body", "credential_id"]
    missing = api_client.post(f"{base}/runs", json={"client_host_id": primary.id, "server_host_id": MAX_ROW_ID})
    assert missing.status_code in (404, 409, 422), missing.text  # in range: looked up, not found
