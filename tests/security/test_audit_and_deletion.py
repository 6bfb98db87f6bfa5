"""The audit log (who did what, from where; never a secret) and admin-only destruction of an
environment that holds credentials or measured runs."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import select

from redolab.auth.models import AuditEvent, Role
from tests.conftest import log_in
from tests.factories import PASSWORD, make_environment, make_host, make_user

DATA = Path(__file__).parents[1] / "runs" / "data"
HTMX = {"HX-Request": "true"}
KEY = """-----BEGIN OPENSSH PRIVATE KEY-----"""


def _events(session) -> list[AuditEvent]:
    session.expire_all()
    return list(session.scalars(select(AuditEvent).order_by(AuditEvent.id)))


def test_logins_and_changes_are_recorded_without_secrets(app, anonymous, session, user, sshd):
    anonymous.post("/login", data={"username": "alice", "password": "wrong password"})
    log_in(anonymous, "alice")
    created = anonymous.post("/api/v1/environments", json={"name": "audited"})
    assert created.status_code == 201
    environment_id = created.json()["id"]
    key = anonymous.post(
        f"/api/v1/environments/{environment_id}/credentials",
        json={"name": "k", "kind": "uploaded_key", "private_key": sshd.client_key},
    )
    assert key.status_code == 201
    new = "violet tractor sonnet"
    anonymous.post(
        "/account/password",
        headers=HTMX,
        data={"current_password": PASSWORD, "new_password": new, "new_password_again": new},
    )
    events = _events(session)
    summary = [(e.username, e.action, e.outcome) for e in events]
    assert ("alice", "login", "failed") in summary and ("alice", "login", "ok") in summary
    assert ("alice", "create_environment", "ok") in summary
    assert ("alice", "create_credential", "ok") in summary
    assert ("alice", "change_password", "ok") in summary
    assert all(e.client_address == "testclient" for e in events)
    assert any(e.target == f"/api/v1/environments/{environment_id}/credentials" for e in events)
    stored = " ".join(f"{e.target} {e.detail} {e.username} {e.action}" for e in events)
    for secret in (PASSWORD, "violet tractor sonnet", "wrong password", sshd.client_key[40:80]):
        assert secret not in stored


def test_refused_changes_are_recorded_and_the_log_is_admin_only(app, session, user):
    make_user(session, "vic", role=Role.viewer)
    environment = make_environment(session, name="e")
    with TestClient(app, follow_redirects=False) as viewer:
        log_in(viewer, "vic")
        assert viewer.delete(f"/api/v1/environments/{environment.id}").status_code == 403
        assert viewer.get("/api/v1/audit").status_code == 403
        assert viewer.get("/audit").status_code == 403
    refused = [e for e in _events(session) if e.username == "vic" and e.action == "delete_environment"]
    assert refused and refused[0].outcome == "refused" and refused[0].status_code == 403


def test_admin_reads_and_filters_the_log(browser_client, session, user):
    browser_client.post("/api/v1/environments", json={"name": "one"})
    browser_client.post("/api/v1/environments", json={"name": "one"})  # 409: a name taken
    everything = browser_client.get("/api/v1/audit").json()
    assert everything[0]["id"] > everything[-1]["id"]  # newest first
    failed = browser_client.get("/api/v1/audit", params={"outcome": "failed", "action": "environment"}).json()
    assert [e["status_code"] for e in failed] == [409]
    assert browser_client.get("/api/v1/audit", params={"username": "nobody"}).json() == []
    page = browser_client.get("/audit", params={"action": "create_environment"})
    assert page.status_code == 200 and "create_environment" in page.text and "/api/v1/environments" in page.text


def test_the_audit_page_names_what_a_change_acted_on_not_its_route(browser_client, session):
    """Issue 58.5: the Detail column said "POST /api/v1/environments/{environment_id}/hosts/{host_id}/test"."""
    environment = make_environment(session, name="detailed")
    assert browser_client.post(f"/api/v1/environments/{environment.id}/hosts/987/test").status_code == 404
    page = browser_client.get("/audit", params={"action": "test_connection"}).text
    assert "{environment_id}" not in page and "{host_id}" not in page
    assert f"<td>POST: environment #{environment.id}, host #987</td>" in page


def _held_environment(session, api_client) -> int:
    environment = make_environment(session, name="held")
    primary = make_host(session, environment, role="primary", name="p", transport="local")
    standby = make_host(session, environment, role="standby", name="s", transport="local")
    response = api_client.post(
        f"/api/v1/environments/{environment.id}/runs/import",
        data={"client_host_id": primary.id, "server_host_id": standby.id, "test_date": "2026-03-04"},
        files=[("files", ("o.txt", (DATA / "oratcptest_async.txt").read_bytes(), "text/plain"))],
    )
    assert response.status_code == 201, response.text
    return environment.id


def test_an_operator_cannot_delete_an_environment_with_runs(app, session, api_client):
    environment_id = _held_environment(session, api_client)
    make_user(session, "otto", role=Role.operator)
    with TestClient(app, follow_redirects=False) as operator:
        log_in(operator, "otto")
        api = operator.delete(f"/api/v1/environments/{environment_id}")
        assert api.status_code == 403
        assert "needs the admin role: it holds 1 destination, 2 hosts and 1 run" in api.json()["detail"]
        page = operator.get(f"/environments/{environment_id}/delete")
        assert "1 destination, 2 hosts and 1 run" in page.text and "needs the admin role" in page.text
        form = operator.post(f"/environments/{environment_id}/delete", data={"confirm": "held"}, headers=HTMX)
        assert form.status_code == 403
        assert operator.get(f"/api/v1/environments/{environment_id}").status_code == 200  # still there
        bare = make_environment(session, name="bare")
        assert operator.delete(f"/api/v1/environments/{bare.id}").status_code == 204  # nothing held: fine
    assert api_client.delete(f"/api/v1/environments/{environment_id}").status_code == 204  # the admin may
