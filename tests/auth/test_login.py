"""Login through the form and the token endpoint, logout, CSRF, the setup link."""

import pytest

from redolab.auth.service import count_users
from redolab.core.security import read_access_token
from tests.conftest import log_in, migrated_sqlite
from tests.factories import PASSWORD


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """HTTP behaviour, the same on either database: these tests run once, on SQLite (every module that
    logs in through `browser_client` does so on PostgreSQL too, and tests/auth/test_races.py takes the
    setup link on both)."""
    return migrated_sqlite(tmp_path_factory)


def test_login_then_pages_then_logout(anonymous, user):
    response = log_in(anonymous, "alice")
    assert response.status_code == 303
    assert response.headers["location"] == "/environments"
    page = anonymous.get("/environments")
    assert page.status_code == 200
    assert "alice" in page.text
    assert anonymous.post("/logout").status_code == 303
    assert anonymous.get("/environments").status_code == 303


def test_login_goes_to_next_but_never_off_site(anonymous, user):
    anonymous.get("/login")
    ok = anonymous.post("/login", data={"username": "alice", "password": PASSWORD, "next": "/environments/new"})
    assert ok.headers["location"] == "/environments/new"
    anonymous.cookies.clear()
    anonymous.get("/login")
    evil = anonymous.post("/login", data={"username": "alice", "password": PASSWORD, "next": "//evil.example"})
    assert evil.headers["location"] == "/environments"


def test_wrong_password_is_refused_in_the_form(anonymous, user):
    anonymous.get("/login")
    response = anonymous.post("/login", data={"username": "alice", "password": "wrong-password"})
    assert response.status_code == 401
    assert "Wrong user name or password." in response.text
    assert "redolab_session" not in response.cookies
    assert anonymous.get("/environments").status_code == 303


def test_unknown_user_gets_the_same_answer(anonymous, user):
    anonymous.get("/login")
    response = anonymous.post("/login", data={"username": "mallory", "password": PASSWORD})
    assert response.status_code == 401
    assert "Wrong user name or password." in response.text


def test_an_unknown_name_is_checked_against_a_hash_of_the_servers_own(monkeypatch):
    """A name that does not exist costs one argon2 verification too (timing does not tell which names
    exist): against a hash made at the first such login, not at import."""
    from redolab.core import security

    checked = []

    class Recording:
        hash = security._hasher.hash

        def verify(self, hashed, password):
            checked.append(hashed)
            return True

    monkeypatch.setattr(security, "_DUMMY_HASH", None)
    monkeypatch.setattr(security, "_hasher", Recording())
    assert security.verify_password(PASSWORD, None) is False
    assert checked == [security._DUMMY_HASH] and checked[0].startswith("$argon2id$")


def test_htmx_login_redirects_with_header(anonymous, user):
    anonymous.get("/login")
    response = anonymous.post(
        "/login", data={"username": "alice", "password": PASSWORD}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert response.headers["HX-Redirect"] == "/environments"


def test_form_posts_without_csrf_token_are_refused(browser_client):
    del browser_client.headers["X-CSRFToken"]
    response = browser_client.post("/environments", data={"name": "x"})
    assert response.status_code == 403
    assert browser_client.get("/api/v1/environments").json()["count"] == 0


def test_csrf_token_must_match_cookie(browser_client):
    browser_client.headers["X-CSRFToken"] = "forged"
    assert browser_client.post("/environments", data={"name": "x"}).status_code == 403


def test_api_token_flow(app, anonymous, user):
    response = anonymous.post("/api/v1/auth/token", data={"username": "alice", "password": PASSWORD})
    assert response.status_code == 200
    body = response.json()
    assert body["token_type"] == "bearer"
    # the token names the user by id and a random key of theirs, never by name (issue 32)
    assert read_access_token(body["access_token"], secret_key=app.state.secret_key) == (user.bearer_subject, 0)
    me = anonymous.get("/api/v1/users/me", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.status_code == 200
    assert me.json() == {"id": user.id, "username": "alice", "role": "admin", "active": True, "disabled_at": None}


def test_api_token_wrong_password(anonymous, user):
    response = anonymous.post("/api/v1/auth/token", data={"username": "alice", "password": "nope"})
    assert response.status_code == 401
    assert "access_token" not in response.text


def test_token_signed_with_another_key_is_refused(anonymous, user):
    from redolab.core.security import create_access_token

    forged = create_access_token(subject="alice", secret_key="x" * 48, max_age_seconds=60)
    response = anonymous.get("/api/v1/users/me", headers={"Authorization": f"Bearer {forged}"})
    assert response.status_code == 401


def test_password_hash_is_never_in_responses(api_client, user):
    assert user.password_hash not in api_client.get("/api/v1/users/me").text


def test_setup_link_creates_first_user_once(app, anonymous, session):
    app.state.setup_token = "one-time-token-123"
    assert anonymous.get("/setup?token=wrong").status_code == 404
    page = anonymous.get("/setup?token=one-time-token-123")
    assert page.status_code == 200
    anonymous.headers["X-CSRFToken"] = anonymous.cookies["csrftoken"]
    short = anonymous.post(
        "/setup",
        data={
            "token": "one-time-token-123",
            "username": "root",
            "password": "short",
            "password_again": "short",
        },
    )
    assert short.status_code == 422
    assert "at least 12 characters" in short.text
    assert count_users(session=session) == 0
    done = anonymous.post(
        "/setup",
        data={
            "token": "one-time-token-123",
            "username": "admin",
            "password": PASSWORD,
            "password_again": PASSWORD,
        },
    )
    assert done.status_code == 303
    assert count_users(session=session) == 1
    assert anonymous.get("/environments").status_code == 200  # logged in
    again = anonymous.post(
        "/setup",
        data={
            "token": "one-time-token-123",
            "username": "eve",
            "password": PASSWORD,
            "password_again": PASSWORD,
        },
    )
    assert again.status_code == 404
    assert count_users(session=session) == 1


def test_setup_closed_without_token(app, anonymous):
    assert app.state.setup_token is None
    assert anonymous.get("/setup?token=").status_code == 404
