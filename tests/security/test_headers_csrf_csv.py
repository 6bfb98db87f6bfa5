"""Security headers on every response, the login form's same-origin check, and CSV cells a
spreadsheet would run as formulas."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.conftest import migrated_sqlite
from tests.factories import PASSWORD, make_environment, make_host


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """HTTP behaviour, the same on either database: these tests run once, on SQLite."""
    return migrated_sqlite(tmp_path_factory)


DATA = Path(__file__).parents[1] / "runs" / "data"


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/login"), ("GET", "/healthz"), ("GET", "/static/app.js"), ("GET", "/environments"),
     ("GET", "/api/v1/environments"), ("GET", "/no/such/page"), ("POST", "/api/v1/environments")],
)  # fmt: skip
def test_every_response_carries_the_security_headers(anonymous, method, path):
    response = anonymous.request(method, path, content=b"x" * (2 * 1024 * 1024) if method == "POST" else None)
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-eval" not in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"


def test_responses_that_carry_a_secret_are_never_stored(app, api_client, browser_client):
    """An API token, a receiver's signing secret (shown once), a hook URL: a shared proxy or the browser's
    cache kept them, as nothing said no-store. Every response says it, save the static assets'."""
    token = api_client.post("/api/v1/auth/token", data={"username": "alice", "password": PASSWORD})
    assert token.status_code == 200 and "access_token" in token.json()
    app.state.settings = app.state.settings.model_copy(update={"webhook_allow": ["https://hooks.example.com/"]})
    body = {"name": "hook", "kind": "webhook", "url": "https://hooks.example.com/redolab/abc"}
    created = api_client.post("/api/v1/notification-receivers", json=body)
    assert created.status_code == 201 and created.json()["signing_secret"]
    page = browser_client.post("/notification-receivers", data={**body, "name": "page hook"})
    assert page.status_code == 201 and 'id="receiver-secret"' in page.text
    refused = api_client.post("/api/v1/notification-receivers", json={"name": "x"})
    for response in (token, created, page, refused, api_client.get("/api/v1/notification-receivers"),
                     browser_client.get("/notification-receivers"), browser_client.get("/environments")):  # fmt: skip
        assert response.headers.get("cache-control") == "no-store", (response.request.url, response.headers)
    static = browser_client.get("/static/app.js")
    assert static.status_code == 200 and "no-store" not in static.headers["cache-control"]  # its own caching


def test_the_api_docs_page_allows_only_its_own_inline_script(browser_client):
    page = browser_client.get("/api/docs")
    csp = page.headers["content-security-policy"]
    assert "'sha256-" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]


def test_a_cross_site_login_post_is_refused(anonymous, user):
    for header in ({"Origin": "https://evil.example"}, {"Referer": "https://evil.example/page"}):
        response = anonymous.post("/login", data={"username": "alice", "password": PASSWORD}, headers=header)
        assert response.status_code == 403 and "Cross-site login refused" in response.text
        assert "redolab_session" not in response.cookies
    same = anonymous.post(
        "/login", data={"username": "alice", "password": PASSWORD}, headers={"Origin": "http://testserver"}
    )
    assert same.status_code == 303


def test_a_trusted_proxy_origin_may_post_the_login(app, user):
    from redolab.main import create_app

    settings = app.state.settings.model_copy(update={"trusted_origins": ["https://redolab.example.com"]})
    with TestClient(create_app(settings), follow_redirects=False) as client:
        response = client.post(
            "/login",
            data={"username": "alice", "password": PASSWORD},
            headers={"Origin": "https://redolab.example.com"},
        )
        assert response.status_code == 303


FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"]


def test_csv_export_neutralises_formula_cells(browser_client, api_client, session):
    environment = make_environment(session)
    primary = make_host(session, environment, name="p", transport="local", role="primary")
    standby = make_host(session, environment, name="s", transport="local", role="standby")
    for label in FORMULAS:
        response = api_client.post(
            f"/api/v1/environments/{environment.id}/runs/import",
            data={
                "client_host_id": primary.id,
                "server_host_id": standby.id,
                "test_date": "2026-03-04",
                "label": label[:1] + "label" if label[0] in "\t\r" else label,
            },
            files=[("files", ("=cmd|' /C calc'!A0.txt", (DATA / "oratcptest_async.txt").read_bytes(), "text/plain"))],
        )
        assert response.status_code == 201, response.text
    export = browser_client.get(f"/environments/{environment.id}/runs/export.csv")
    assert export.status_code == 200
    rows = list(csv.DictReader(io.StringIO(export.text)))
    assert rows
    for row in rows:
        for column, value in row.items():
            assert not value.startswith(("=", "+", "@", "\t", "\r")), (column, value)
            if value.startswith("-"):
                float(value)  # only numbers may start with a minus
    labels = {row["label"] for row in rows}
    assert '\'=HYPERLINK("http://evil.example","x")' in labels and "'+1+1" in labels
    assert all(row["source_name"].startswith("'=cmd") for row in rows)
