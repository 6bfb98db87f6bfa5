"""Auth under races and reuse (issue 32, item 8): simultaneous requests against one app and one
database (each sent from a thread of its own, released together by a barrier; the app answers
them at once in its thread pool); the setup link shared by the two processes of a real `redolab
serve --workers 2` is raced in tests/test_serve_workers.py, beside what else they share. One
TestClient per test: each client runs its own event loop, and two loops in one process would share
the audit log's writer limiter, which belongs to one loop.

- the one-time setup link makes one admin however many posts arrive at once;
- admins demoting, disabling or deleting each other at once always leave an active admin;
- a token made while its user is being disabled does not come back when they are enabled;
- a bearer token of a deleted user never works for a new user of the same name (or id).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, func, select

from redolab.auth.models import ApiToken, Role, User
from redolab.auth.service import count_users, start_session
from redolab.core.security import create_access_token
from tests.factories import PASSWORD, make_user

T = TypeVar("T")
ROUNDS = 4  # each race is run this often: a lost race shows within a few (it did before the fix)
SETUP_TOKEN = "one-time-setup-token-for-the-race"


def _at_once(calls: list[Callable[[], T]]) -> list[T]:
    """Each call in a thread of its own, all released together."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], T]) -> T:
        barrier.wait(timeout=30)
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def _bearer(client: TestClient, username: str) -> dict[str, str]:
    answer = client.post("/api/v1/auth/token", data={"username": username, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


def _setup_form(number: int) -> dict[str, str]:
    return {"token": SETUP_TOKEN, "username": f"first{number}", "password": PASSWORD, "password_again": PASSWORD}


def test_simultaneous_setup_posts_make_one_admin(app, session):
    for _ in range(ROUNDS):
        app.state.setup_token = SETUP_TOKEN
        with TestClient(app, follow_redirects=False) as client:
            assert client.get(f"/setup?token={SETUP_TOKEN}").status_code == 200
            client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
            answers = _at_once([partial(client.post, "/setup", data=_setup_form(i)) for i in range(4)])
        assert sorted(a.status_code for a in answers) == [303, 404, 404, 404], [a.text[:200] for a in answers]
        session.expire_all()
        assert count_users(session=session) == 1
        session.execute(delete(User))
        session.commit()


# The setup link shared by the two web processes of a real `redolab serve --workers 2`, posted at once
# from six clients, makes one admin: tests/test_serve_workers.py, on the server it starts anyway.


ACTIONS = {
    "demote": lambda c, victim, h: c.put(f"/api/v1/users/{victim}/role", headers=h, json={"role": "viewer"}),
    "disable": lambda c, victim, h: c.post(f"/api/v1/users/{victim}/disable", headers=h),
    "delete": lambda c, victim, h: c.delete(f"/api/v1/users/{victim}", headers=h),
}


@pytest.mark.parametrize(
    ("first", "second"),
    [("demote", "demote"), ("disable", "disable"), ("delete", "delete"), ("demote", "disable"), ("disable", "delete")],
)
def test_admins_acting_on_each_other_at_once_leave_an_active_admin(app, session, first, second):
    for round_number in range(ROUNDS):
        ann = make_user(session, f"ann{round_number}", role=Role.admin)
        ben = make_user(session, f"ben{round_number}", role=Role.admin)
        with TestClient(app) as client:
            ann_headers, ben_headers = _bearer(client, ann.username), _bearer(client, ben.username)
            answers = _at_once(
                [
                    partial(ACTIONS[first], client, ben.id, ann_headers),
                    partial(ACTIONS[second], client, ann.id, ben_headers),
                ]
            )
        codes = sorted(a.status_code for a in answers)
        assert codes[0] in (200, 204) and codes[1] in (401, 403, 404, 409), [(a.status_code, a.text) for a in answers]
        session.expire_all()
        active_admins = select(func.count()).where(User.role == Role.admin, User.disabled_at.is_(None))
        assert session.scalar(active_admins) == 1
        session.execute(delete(User))
        session.commit()


def test_a_token_made_while_its_user_is_disabled_does_not_come_back(app, session):
    make_user(session, "root", role=Role.admin)
    carol = make_user(session, "carol", role=Role.operator)
    for round_number in range(ROUNDS):
        with TestClient(app) as client:
            carol_headers, admin_headers = _bearer(client, "carol"), _bearer(client, "root")
            make = partial(client.post, "/api/v1/tokens", headers=carol_headers, json={"name": f"cron {round_number}"})
            disable = partial(client.post, f"/api/v1/users/{carol.id}/disable", headers=admin_headers)
            *made, disabled = _at_once([make, make, make, disable])
            assert disabled.status_code == 200, disabled.text
            enabled = client.post(f"/api/v1/users/{carol.id}/enable", headers=admin_headers)
            assert enabled.status_code == 200, enabled.text
            for answer in made:
                assert answer.status_code in (201, 401, 403), answer.text
                if answer.status_code == 201:
                    token = {"Authorization": f"Bearer {answer.json()['token']}"}
                    assert client.get("/api/v1/users/me", headers=token).status_code == 401
            assert client.get("/api/v1/users/me", headers=carol_headers).status_code == 401
    session.expire_all()
    live = select(func.count()).select_from(ApiToken).where(ApiToken.revoked_at.is_(None))
    assert session.scalar(live) == 0


def test_disabling_revokes_api_tokens_for_good(app, session):
    make_user(session, "root", role=Role.admin)
    dave = make_user(session, "dave", role=Role.operator)
    with TestClient(app) as client:
        admin, bearer = _bearer(client, "root"), _bearer(client, "dave")
        made = client.post("/api/v1/tokens", headers=bearer, json={"name": "nightly export"})
        assert made.status_code == 201, made.text
        api_token = {"Authorization": f"Bearer {made.json()['token']}"}
        assert client.get("/api/v1/users/me", headers=api_token).status_code == 200
        assert client.post(f"/api/v1/users/{dave.id}/disable", headers=admin).status_code == 200
        assert client.post(f"/api/v1/users/{dave.id}/enable", headers=admin).status_code == 200
        assert client.get("/api/v1/users/me", headers=api_token).status_code == 401
        assert client.get("/api/v1/users/me", headers=bearer).status_code == 401
        listed = client.get("/api/v1/tokens", headers=_bearer(client, "dave")).json()
        assert [(t["name"], t["revoked_at"] is not None) for t in listed] == [("nightly export", True)]


def test_no_session_starts_for_a_user_disabled_after_the_password_check(session):
    erin = make_user(session, "erin", role=Role.viewer)
    erin.disabled_at = erin.created_at
    session.commit()
    assert start_session(session=session, user=erin, client_address="192.0.2.1") is None


def test_a_deleted_users_bearer_token_never_works_for_a_new_user_of_that_name(app, session, engine):
    make_user(session, "root", role=Role.admin)
    with TestClient(app) as client:
        admin = _bearer(client, "root")
        first = client.post("/api/v1/users", headers=admin, json={"username": "frank", "password": PASSWORD})
        assert first.status_code == 201, first.text
        old_token = _bearer(client, "frank")
        assert client.get("/api/v1/users/me", headers=old_token).json()["username"] == "frank"
        assert client.delete(f"/api/v1/users/{first.json()['id']}", headers=admin).status_code == 204
        again = client.post("/api/v1/users", headers=admin, json={"username": "frank", "password": PASSWORD})
        assert again.status_code == 201, again.text
        if engine.dialect.name == "sqlite":  # SQLite hands the deleted last row's id out again
            assert again.json()["id"] == first.json()["id"]
        assert client.get("/api/v1/users/me", headers=old_token).status_code == 401
        assert client.get("/api/v1/users/me", headers=_bearer(client, "frank")).json()["username"] == "frank"


@pytest.mark.parametrize(
    "subject",
    ["frank", "1", "1.", ".abc", "١.abc", "99999999999999999999999.abc", "1.ключ", "-1.abc", " 1.abc"],
)
def test_a_bearer_subject_that_names_no_identity_is_refused(app, session, subject):
    user = make_user(session, "frank", role=Role.admin)
    forged = create_access_token(subject=subject, secret_key=app.state.secret_key, max_age_seconds=60)
    right = create_access_token(subject=user.bearer_subject, secret_key=app.state.secret_key, max_age_seconds=60)
    with TestClient(app) as client:
        assert client.get("/api/v1/users/me", headers={"Authorization": f"Bearer {forged}"}).status_code == 401
        assert client.get("/api/v1/users/me", headers={"Authorization": f"Bearer {right}"}).status_code == 200
