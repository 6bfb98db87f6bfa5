"""Login throttling per account and per address (429 with Retry-After), and the bounded pool that
checks passwords (503 when full). Counted, never timed."""

from __future__ import annotations

import threading

import anyio
import pytest

from redolab.auth.guard import FREE_PER_ACCOUNT, FREE_PER_ADDRESS, DatabaseCounts, LoginGuard, Throttled
from tests.conftest import migrated_sqlite
from tests.factories import PASSWORD, make_user


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """HTTP behaviour, the same on either database: these tests run once, on SQLite."""
    return migrated_sqlite(tmp_path_factory)


@pytest.fixture(autouse=True)
def no_tarpit(app):
    """Refusals are answered at once here (the server pauses them 1 s), so 40 attempts take no 40 s;
    the guard's clock stands still, so a slow password check on a loaded machine never outlasts a
    back-off (the sixth attempt would otherwise be free again a second after the fifth)."""
    app.state.login_guard = LoginGuard(
        tarpit_seconds=0, counts=DatabaseCounts(app.state.sessionmaker), clock=lambda: 1_800_000_000.0
    )


def test_forty_wrong_passwords_then_the_right_one_does_not_log_in(anonymous, user):
    codes = [
        anonymous.post("/login", data={"username": "alice", "password": f"wrong {i}"}).status_code for i in range(40)
    ]
    assert codes[:FREE_PER_ACCOUNT] == [401] * FREE_PER_ACCOUNT
    assert set(codes[FREE_PER_ACCOUNT:]) == {429}
    right = anonymous.post("/login", data={"username": "alice", "password": PASSWORD})
    assert right.status_code == 429
    assert int(right.headers["Retry-After"]) >= 1
    assert "Too many login attempts for this user name" in right.text
    assert "redolab_session" not in right.cookies


def test_the_token_endpoint_is_throttled_too(anonymous, user):
    for _ in range(FREE_PER_ACCOUNT):
        assert anonymous.post("/api/v1/auth/token", data={"username": "alice", "password": "nope"}).status_code == 401
    throttled = anonymous.post("/api/v1/auth/token", data={"username": "alice", "password": PASSWORD})
    assert throttled.status_code == 429 and "Retry-After" in throttled.headers


def test_one_address_spraying_many_names_is_throttled(anonymous, session):
    codes = [
        anonymous.post("/login", data={"username": f"u{i}", "password": "x" * 12}).status_code
        for i in range(FREE_PER_ADDRESS + 3)
    ]
    assert codes[:FREE_PER_ADDRESS] == [401] * FREE_PER_ADDRESS
    assert codes[FREE_PER_ADDRESS:] == [429] * 3


def test_a_good_login_clears_its_account(anonymous, user):
    for _ in range(FREE_PER_ACCOUNT - 1):
        anonymous.post("/login", data={"username": "alice", "password": "wrong"})
    assert anonymous.post("/login", data={"username": "alice", "password": PASSWORD}).status_code == 303
    anonymous.cookies.clear()  # a new visitor: the count for alice started again
    assert anonymous.post("/login", data={"username": "alice", "password": "wrong"}).status_code == 401


def test_backoff_doubles_and_forgets_after_the_window():
    now = [1000.0]
    guard = LoginGuard(clock=lambda: now[0])
    for _ in range(FREE_PER_ACCOUNT):
        guard.begin("bob", None)
    waits = []
    for _ in range(4):
        with pytest.raises(Throttled) as refused:
            guard.begin("bob", None)
        waits.append(refused.value.retry_after)
        now[0] += refused.value.retry_after  # wait as told, then try (and fail) again
        guard.begin("bob", None)
    assert waits == [1, 2, 4, 8]
    now[0] += 16 * 60  # past the window: a fresh start
    guard.begin("bob", None)


def test_a_full_pool_answers_503_instead_of_queueing_without_bound():
    guard = LoginGuard(workers=1, queue=2)
    release = threading.Event()
    outcomes: list[str] = []

    async def attempt():
        try:
            await guard.run(lambda: release.wait(10))
            outcomes.append("checked")
        except Throttled as refused:
            outcomes.append(str(refused.status_code))

    async def main():
        async with anyio.create_task_group() as tasks:
            for _ in range(10):
                tasks.start_soon(attempt)
            await anyio.sleep(0.2)
            release.set()

    anyio.run(main)
    assert outcomes.count("checked") == 3  # one checking, two waiting
    assert outcomes.count("503") == 7


def test_the_login_page_answers_503_with_retry_after_when_the_pool_is_full(app, anonymous, session):
    make_user(session, "erin")
    app.state.login_guard = LoginGuard(
        workers=1, queue=0, tarpit_seconds=0, counts=DatabaseCounts(app.state.sessionmaker)
    )
    app.state.login_guard._waiting = 1  # the one worker is busy with someone else's check
    busy = anonymous.post("/login", data={"username": "erin", "password": PASSWORD})
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "1"
    assert "busy checking other logins" in busy.text


def test_successful_logins_do_not_use_up_an_address():
    guard = LoginGuard()
    for _ in range(3 * FREE_PER_ADDRESS):
        guard.begin("carol", "10.0.0.1")
        guard.succeeded("carol", "10.0.0.1")
    guard.begin("dave", "10.0.0.1")  # not throttled
