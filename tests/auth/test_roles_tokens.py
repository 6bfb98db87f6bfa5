import pytest

from redolab.auth.models import Role
from tests.conftest import log_in
from tests.factories import PASSWORD, make_environment, make_host, make_user


def bearer(client, username):
    response = client.post("/api/v1/auth/token", data={"username": username, "password": PASSWORD})
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


@pytest.fixture
def people(session):
    return {role: make_user(session, f"{role.value}1", role=role) for role in Role}


def test_viewer_reads_but_cannot_run_or_change(anonymous, session, people):
    environment = make_environment(session)
    host = make_host(session, environment)
    headers = bearer(anonymous, "viewer1")
    assert anonymous.get("/api/v1/environments", headers=headers).status_code == 200
    run = {"client_host_id": host.id, "server_host_id": host.id}
    response = anonymous.post(f"/api/v1/environments/{environment.id}/runs", json=run, headers=headers)
    assert response.status_code == 403
    assert "needs the operator role" in response.json()["detail"]
    assert anonymous.post("/api/v1/environments", json={"name": "x"}, headers=headers).status_code == 403


def test_operator_runs_but_cannot_touch_credentials_or_hosts(anonymous, session, people):
    environment = make_environment(session)
    host = make_host(session, environment)
    headers = bearer(anonymous, "operator1")
    run = {"client_host_id": host.id, "server_host_id": host.id, "duration_seconds": "10 s"}
    created = anonymous.post(f"/api/v1/environments/{environment.id}/runs", json=run, headers=headers)
    assert created.status_code == 201, created.text
    assert created.json()["status"] == "queued"
    assert created.json()["requested_by"] == "operator1"
    base = f"/api/v1/environments/{environment.id}"
    assert anonymous.get(f"{base}/credentials", headers=headers).status_code == 403
    assert (
        anonymous.post(f"{base}/credentials", json={"name": "k", "kind": "agent"}, headers=headers).status_code == 403
    )
    host_in = {"role": "standby", "name": "sb", "ssh_address": "sb", "ssh_user": "oracle"}
    assert anonymous.post(f"{base}/hosts", json=host_in, headers=headers).status_code == 403
    assert anonymous.post(f"{base}/runs/../../runs/{created.json()['id']}/cancel", headers=headers).status_code in (
        200,
        404,
    )


def test_admin_manages_users_and_roles(anonymous, session, people):
    headers = bearer(anonymous, "admin1")
    created = anonymous.post(
        "/api/v1/users", json={"username": "dave", "password": PASSWORD, "role": "viewer"}, headers=headers
    )
    assert created.status_code == 201
    assert PASSWORD not in created.text
    changed = anonymous.put(f"/api/v1/users/{created.json()['id']}/role", json={"role": "operator"}, headers=headers)
    assert changed.json()["role"] == "operator"
    viewer = bearer(anonymous, "viewer1")
    assert anonymous.get("/api/v1/users", headers=viewer).status_code == 403


def test_api_token_shown_once_hashed_and_revocable(anonymous, session, people):
    headers = bearer(anonymous, "operator1")
    created = anonymous.post("/api/v1/tokens", json={"name": "nightly sweep"}, headers=headers)
    assert created.status_code == 201
    token = created.json()["token"]
    assert token.startswith("rl_")
    listing = anonymous.get("/api/v1/tokens", headers=headers)
    assert token not in listing.text and listing.json()[0]["prefix"] == token[:10]
    from sqlalchemy import select

    from redolab.auth.models import ApiToken

    stored = session.scalars(select(ApiToken)).one()
    assert token not in (stored.token_hash, stored.prefix) and len(stored.token_hash) == 64
    me = anonymous.get("/api/v1/users/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["username"] == "operator1"
    assert anonymous.delete(f"/api/v1/tokens/{created.json()['id']}", headers=headers).status_code == 204
    assert anonymous.get("/api/v1/users/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_html_viewer_cannot_add_hosts(anonymous, session, people):
    environment = make_environment(session)
    log_in(anonymous, "viewer1")
    response = anonymous.post(
        f"/environments/{environment.id}/hosts",
        data={"role": "primary", "name": "db1", "ssh_address": "db1", "ssh_user": "oracle"},
    )
    assert response.status_code == 403


def test_only_an_admin_edits_a_host_or_allows_kernel_changes(anonymous, session, people):
    """The host form (HTML) is admin-only: it grants kernel-maximum sweeps the right to sysctl."""
    environment = make_environment(session)
    host = make_host(session, environment, name="db1")
    url = f"/environments/{environment.id}/hosts/{host.id}"
    form = {"role": "primary", "node_number": "1", "name": "db1", "ssh_address": "127.0.0.1", "ssh_port": "22",
            "ssh_user": "oracle", "allow_kernel_changes": "on"}  # fmt: skip
    log_in(anonymous, "operator1")
    assert anonymous.put(url, data=form, headers={"HX-Request": "true"}).status_code == 403
    session.refresh(host)
    assert host.allow_kernel_changes is False
    log_in(anonymous, "admin1")
    saved = anonymous.put(url, data=form, headers={"HX-Request": "true"})
    assert saved.status_code == 200 and "kernel changes allowed" in saved.text
    session.refresh(host)
    assert host.allow_kernel_changes is True
    del form["allow_kernel_changes"]  # an unticked box withdraws it
    anonymous.put(url, data=form, headers={"HX-Request": "true"})
    session.refresh(host)
    assert host.allow_kernel_changes is False
