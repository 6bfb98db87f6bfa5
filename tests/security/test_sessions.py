"""Server-side sessions and the user lifecycle: logout, password change, disable, delete, ending a
user's sessions, idle and absolute expiry, the last admin, the password rule."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from redolab.auth.models import Role, User, UserSession
from redolab.core.db import utcnow
from redolab.core.security import password_problem
from tests.conftest import log_in
from tests.factories import PASSWORD, make_user

HTMX = {"HX-Request": "true"}
NEW_PASSWORD = "violet tractor sonnet"


def _browser(app, username: str) -> TestClient:
    client = TestClient(app, follow_redirects=False)
    assert log_in(client, username).status_code == 303
    return client


def _bearer(app, username: str, password: str = PASSWORD) -> dict:
    with TestClient(app) as client:
        token = client.post("/api/v1/auth/token", data={"username": username, "password": password})
        assert token.status_code == 200, token.text
        return {"Authorization": f"Bearer {token.json()['access_token']}"}


def _works(client: TestClient, headers: dict | None = None) -> bool:
    return client.get("/api/v1/users/me", headers=headers or {}).status_code == 200


def test_logout_ends_the_session_on_the_server(app, user):
    with _browser(app, user.username) as client:
        stolen = dict(client.cookies)  # a copy of the cookie, as an attacker would keep it
        assert _works(client)
        assert client.post("/logout").status_code == 303
        with TestClient(app, cookies=stolen) as thief:
            assert thief.get("/api/v1/users/me").status_code == 401
            assert thief.get("/environments", follow_redirects=False).status_code == 303


def test_password_change_ends_the_other_sessions_and_bearer_tokens(app, user, session):
    bearer = _bearer(app, user.username)
    with _browser(app, user.username) as here, _browser(app, user.username) as elsewhere, TestClient(app) as api:
        assert _works(api, bearer) and _works(elsewhere)
        wrong = here.post(
            "/account/password",
            headers=HTMX,
            data={
                "current_password": "not it at all",
                "new_password": NEW_PASSWORD,
                "new_password_again": NEW_PASSWORD,
            },
        )
        assert wrong.status_code == 422 and "current password is wrong" in wrong.text
        changed = here.post(
            "/account/password",
            headers=HTMX,
            data={
                "current_password": PASSWORD,
                "new_password": NEW_PASSWORD,
                "new_password_again": NEW_PASSWORD,
            },
        )
        assert changed.status_code == 200 and "1 other session ended" in changed.text
        assert _works(here)  # the session that changed it stays
        assert not _works(elsewhere)
        assert not _works(api, bearer)
        assert _works(api, _bearer(app, user.username, NEW_PASSWORD))


def test_password_change_through_the_api(app, user):
    bearer = _bearer(app, user.username)
    with TestClient(app) as api:
        weak = api.put(
            "/api/v1/users/me/password",
            headers=bearer,
            json={"current_password": PASSWORD, "new_password": "aaaaaaaaaaaaaaa"},
        )
        assert weak.status_code == 422 and "too easy to guess" in weak.text
        assert "aaaaaaaaaaaaaaa" not in weak.text  # the value is never echoed
        done = api.put(
            "/api/v1/users/me/password",
            headers=bearer,
            json={"current_password": PASSWORD, "new_password": NEW_PASSWORD},
        )
        assert done.status_code == 200, done.text
        assert not _works(api, bearer)  # its own bearer token was issued before the change


def test_admin_disables_enables_and_deletes_a_user(app, user, session):
    make_user(session, "bob", role=Role.operator)
    bob_bearer = _bearer(app, "bob")
    admin = _bearer(app, user.username)
    bob_id = session.scalar(select(User.id).where(User.username == "bob"))
    with _browser(app, "bob") as bob, TestClient(app) as api:
        assert api.post(f"/api/v1/users/{bob_id}/disable", headers=admin).json()["active"] is False
        assert not _works(bob) and not _works(api, bob_bearer)
        refused = api.post("/api/v1/auth/token", data={"username": "bob", "password": PASSWORD})
        assert refused.status_code == 401
        assert api.post(f"/api/v1/users/{bob_id}/enable", headers=admin).json()["active"] is True
        assert _works(api, _bearer(app, "bob"))
        assert api.delete(f"/api/v1/users/{bob_id}", headers=admin).status_code == 204
        assert api.post("/api/v1/auth/token", data={"username": "bob", "password": PASSWORD}).status_code == 401
        session.expire_all()
        assert session.scalar(select(UserSession).where(UserSession.user_id == bob_id)) is None


def test_admin_ends_all_sessions_and_tokens_of_a_user(app, user, session):
    make_user(session, "carol", role=Role.viewer)
    carol_id = session.scalar(select(User.id).where(User.username == "carol"))
    with _browser(app, "carol") as carol, _browser(app, user.username) as admin, TestClient(app) as api:
        created = carol.post("/api/v1/tokens", json={"name": "cron"})
        assert created.status_code == 201, created.text
        token = {"Authorization": f"Bearer {created.json()['token']}"}
        assert _works(api, token)
        page = admin.post(f"/users/{carol_id}/sessions/end", headers=HTMX)
        assert page.status_code == 200
        assert not _works(carol) and not _works(api, token)


def test_the_last_admin_stays_an_admin(app, user, session):
    admin = _bearer(app, user.username)
    with TestClient(app) as api:
        demote = api.put(f"/api/v1/users/{user.id}/role", headers=admin, json={"role": "viewer"})
        assert demote.status_code == 409 and "last active admin" in demote.text
        assert api.delete(f"/api/v1/users/{user.id}", headers=admin).status_code == 409
        assert api.post(f"/api/v1/users/{user.id}/disable", headers=admin).status_code == 409
        make_user(session, "dora", role=Role.admin)
        assert api.put(f"/api/v1/users/{user.id}/role", headers=admin, json={"role": "operator"}).status_code == 200


@pytest.mark.parametrize("field", ["last_seen_at", "created_at"])
def test_idle_and_absolute_expiry(app, user, engine, field):
    settings = app.state.settings
    age = settings.session_idle_seconds if field == "last_seen_at" else settings.session_max_age_seconds
    with _browser(app, user.username) as client:
        assert _works(client)
        with engine.begin() as connection:
            connection.execute(update(UserSession).values({field: utcnow() - timedelta(seconds=age + 5)}))
        assert not _works(client)


@pytest.mark.parametrize(
    ("password", "problem"),
    [
        ("short one", "at least 12 characters"),
        ("aaaaaaaaaaaa", "too easy to guess"),
        ("password1234", "common passwords"),
        ("zxcvbnmasdfg", "too easy to guess"),  # a keyboard walk
        ("abcdefghijklm", "too easy to guess"),  # a sequence
        ("alicealice12", "too easy to guess"),  # the user name
    ],
)
def test_password_rule(password, problem):
    assert problem in (password_problem(password, username="alice") or "")


def test_a_good_password_passes():
    assert password_problem(NEW_PASSWORD, username="alice") is None
