"""The login throttle's counts live in the database: two web processes (two apps on one database
here, as `serve --workers 2` or two containers behind nginx) count the same attempts, on SQLite
and PostgreSQL."""

from __future__ import annotations

from fastapi.testclient import TestClient

from redolab.auth.guard import FREE_PER_ACCOUNT, WINDOW_SECONDS, DatabaseCounts, LoginGuard
from redolab.auth.models import LoginCount
from redolab.main import create_app
from tests.factories import PASSWORD


def _without_tarpit(app):
    """Refusals answered at once, and a clock that stands still: the back-off after the fifth attempt
    is 1 s, which a slow password check on a loaded machine could otherwise outlast."""
    app.state.login_guard.tarpit_seconds = 0
    app.state.login_guard.clock = lambda: 1_800_000_000.0
    return app


def test_attempts_on_one_process_throttle_the_other(settings, engine, user, session):
    first, second = _without_tarpit(create_app(settings)), _without_tarpit(create_app(settings))
    assert isinstance(first.state.login_guard.counts, DatabaseCounts)
    with TestClient(first) as one, TestClient(second) as other:
        clients = [one, other]
        codes = [
            clients[i % 2].post("/login", data={"username": "alice", "password": f"wrong {i}"}).status_code
            for i in range(FREE_PER_ACCOUNT + 2)
        ]
        assert codes[:FREE_PER_ACCOUNT] == [401] * FREE_PER_ACCOUNT
        assert codes[FREE_PER_ACCOUNT:] == [429, 429]  # each process knows the other's attempts
        right = other.post("/api/v1/auth/token", data={"username": "alice", "password": PASSWORD})
        assert right.status_code == 429
    stored = session.get(LoginCount, "account:alice")
    assert stored is not None and stored.attempts == FREE_PER_ACCOUNT


def test_counts_start_again_after_the_window_and_a_good_login_clears_them(settings, engine, session):
    from redolab.core.db import make_sessionmaker

    now = [1_800_000_000.0]
    counts = DatabaseCounts(make_sessionmaker(engine))
    guard = LoginGuard(clock=lambda: now[0], counts=counts)
    for _ in range(3):
        guard.begin("bob", "10.0.0.9")
    assert counts.read(["account:bob"])["account:bob"].attempts == 3
    now[0] += WINDOW_SECONDS + 1
    guard.begin("bob", "10.0.0.9")  # past the window: counted from one again (an atomic upsert)
    assert counts.read(["account:bob"])["account:bob"].attempts == 1
    assert counts.read(["address:10.0.0.9"])["address:10.0.0.9"].attempts == 1
    guard.succeeded("bob", "10.0.0.9")
    assert set(counts.read(["account:bob", "address:10.0.0.9"])) == {"address:10.0.0.9"}  # the account's is gone
    assert counts.read(["address:10.0.0.9"])["address:10.0.0.9"].attempts == 0
