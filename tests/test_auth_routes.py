"""Every route needs a logged-in user, except the few that must not.

Walks the routes registered on the app, so a route added later cannot slip through.
"""

import re

import pytest
from fastapi.routing import iter_route_contexts

from redolab.main import PUBLIC_PATHS, create_app
from redolab.web.metrics import METRICS_PATH


def _routes(app):
    """(method, path) of every route, also those of included routers; mounts have no methods."""
    for route in iter_route_contexts(app.routes):
        for method in sorted((route.methods or set()) - {"HEAD", "OPTIONS"}):
            yield method, route.path


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "1", path)


def test_the_walk_sees_the_routes(settings):
    paths = {path for _, path in _routes(create_app(settings))}
    assert "/environments/{environment_id}" in paths
    assert "/api/v1/environments/{environment_id}/hosts/{host_id}" in paths
    assert len(paths) > 15


def test_every_private_route_refuses_anonymous(app, anonymous):
    checked = 0
    for method, path in _routes(app):
        if path in PUBLIC_PATHS or path == METRICS_PATH:  # its own bearer token: tests/watches/test_metrics.py
            continue
        response = anonymous.request(method, _concrete(path))
        if path.startswith("/api/v1/"):
            assert response.status_code == 401, (method, path, response.status_code)
            assert response.headers["www-authenticate"] == "Bearer"
        else:
            assert response.status_code == 303, (method, path, response.status_code)
            assert response.headers["location"].startswith("/login?next=")
        checked += 1
    assert checked > 15


def test_htmx_requests_are_sent_to_login(anonymous):
    response = anonymous.get("/environments", headers={"HX-Request": "true"})
    assert response.status_code == 401
    assert response.headers["HX-Redirect"] == "/login?next=/environments"


@pytest.mark.parametrize("path", ["/login", "/healthz", "/static/app.css"])
def test_public_pages_answer_anonymous(anonymous, path):
    assert anonymous.get(path).status_code == 200


def test_invalid_bearer_token_is_refused(anonymous):
    response = anonymous.get("/api/v1/environments", headers={"Authorization": "Bearer nonsense"})
    assert response.status_code == 401


def test_public_paths_are_the_documented_few():
    assert {"/login", "/setup", "/healthz", "/api/v1/auth/token"} == PUBLIC_PATHS


def test_docs_need_login(app, anonymous, browser_client):
    assert anonymous.get("/api/docs").status_code == 303
    assert anonymous.get("/api/v1/openapi.json").status_code == 401
    page = browser_client.get("/api/docs")
    assert page.status_code == 200
    assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in page.text
    assert "cdn" not in page.text.lower()
    schema = browser_client.get("/api/v1/openapi.json").json()
    assert "/api/v1/environments" in schema["paths"]
    # The API docs list the JSON API only: the HTML pages and fragments are left out.
    assert [path for path in schema["paths"] if not path.startswith("/api/")] == []


# Changes every user may make to their own account.
PERSONAL = frozenset(
    {
        "/logout",
        "/account/password",
        "/account/sessions/end",
        "/account/tokens",
        "/account/tokens/{token_id}",
        "/api/v1/tokens",
        "/api/v1/tokens/{token_id}",
        "/api/v1/users/me/password",
    }
)


def _changes(app):
    for method, path in _routes(app):
        if method != "GET" and path not in PUBLIC_PATHS and path not in PERSONAL:
            yield method, path


def _client_as(app, session, role):
    from fastapi.testclient import TestClient

    from redolab.auth.models import Role
    from tests.conftest import log_in
    from tests.factories import make_user

    make_user(session, role, role=Role(role))
    client = TestClient(app, follow_redirects=False)
    log_in(client, role)
    return client


def test_a_viewer_changes_nothing_on_any_route(app, session):
    with _client_as(app, session, "viewer") as viewer:
        answers = {(m, path): viewer.request(m, _concrete(path)).status_code for m, path in _changes(app)}
    assert len(answers) > 30
    assert {key: code for key, code in answers.items() if code != 403} == {}


ADMIN_ONLY = re.compile(r"/users|/credentials|/hosts|/host-key|/audit")


def test_an_operator_is_refused_every_admin_route(app, session):
    with _client_as(app, session, "operator") as operator:
        answers = {
            (method, path): operator.request(method, _concrete(path)).status_code
            for method, path in _changes(app)
            # operators may test a connection and measure a host's encryption ceiling
            if ADMIN_ONLY.search(path) and not path.endswith(("/test", "/crypto-speed"))
        }
    assert len(answers) > 8
    assert {key: code for key, code in answers.items() if code != 403} == {}
