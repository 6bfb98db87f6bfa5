"""Login throttling and the bounded password-hashing pool.

Attempts are counted per account and per client address. The first few in a window are free; after
that each attempt must wait twice as long as the one before (1 s, 2 s, 4 s ... up to 15 min), and
an attempt that comes too early is answered 429 with Retry-After without checking the password, so
a right password after 40 wrong ones does not log in either. A successful login clears its account.
Refusals are answered after a one-second pause, so a client looping on them slows down to one
request a second instead of keeping the server busy.

argon2 costs about 64 MiB and tens of milliseconds per check. Checks run in at most `workers`
threads of their own (not the pool that serves pages and /healthz), and when more than `queue`
attempts are already waiting the next is answered 503, so a flood cannot fill the server's threads
or memory. The counts live in the database (table login_counts) when the app keeps them there, so
several web processes behind one proxy count together; the hashing pool is each process's own.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
from sqlalchemy import case, delete, select, update

from redolab.auth import audit
from redolab.auth.audit import client_address
from redolab.auth.models import LoginCount
from redolab.auth.service import authenticate
from redolab.core.middleware import refuse
from redolab.core.security import MAX_PASSWORD_LENGTH

T = TypeVar("T")

WINDOW_SECONDS = 15 * 60
MAX_WAIT_SECONDS = 15 * 60
FREE_PER_ACCOUNT = 5
FREE_PER_ADDRESS = 20
RECORD_EVERY_SECONDS = 60


class Throttled(Exception):
    """429: this account or address must wait; 503: the hashing pool is full."""

    def __init__(self, retry_after: int, reason: str, status_code: int = 429) -> None:
        super().__init__(reason)
        self.retry_after = retry_after
        self.reason = reason
        self.status_code = status_code


@dataclass
class _Count:
    attempts: int = 0
    last: float = 0.0


class MemoryCounts:
    """Counts in this process (a guard of its own, as in unit tests)."""

    def __init__(self) -> None:
        self._counts: dict[str, _Count] = {}

    def read(self, keys: list[str]) -> dict[str, _Count]:
        return {key: self._counts[key] for key in keys if key in self._counts}

    def add(self, keys: list[str], now: float) -> None:
        for key in keys:
            count = self._counts.get(key)
            if count is None or now - count.last > WINDOW_SECONDS:
                count = self._counts[key] = _Count()
            count.attempts += 1
            count.last = now
        if len(self._counts) > 100_000:  # a spray of names: forget the oldest entries
            for key in sorted(self._counts, key=lambda k: self._counts[k].last)[:50_000]:
                del self._counts[key]

    def clear(self, key: str) -> None:
        self._counts.pop(key, None)

    def forgive(self, key: str) -> None:
        count = self._counts.get(key)
        if count is not None:
            count.attempts = max(0, count.attempts - 1)


class DatabaseCounts:
    """Counts in the login_counts table, shared by every process: each attempt adds one with an
    atomic upsert (no lost update between processes); rows past the window are removed now and then."""

    def __init__(self, sessionmaker) -> None:
        self.sessionmaker = sessionmaker
        self._writes = 0

    def read(self, keys: list[str]) -> dict[str, _Count]:
        with self.sessionmaker() as session:
            rows = session.execute(select(LoginCount).where(LoginCount.key.in_(keys))).scalars()
            return {row.key: _Count(row.attempts, row.last_seconds) for row in rows}

    def add(self, keys: list[str], now: float) -> None:
        with self.sessionmaker.begin() as session:
            dialect = session.get_bind().dialect.name
            if dialect == "postgresql":
                from sqlalchemy.dialects.postgresql import insert
            else:
                from sqlalchemy.dialects.sqlite import insert
            for key in keys:
                statement = insert(LoginCount).values(key=key, attempts=1, last_seconds=now)
                expired = now - LoginCount.last_seconds > WINDOW_SECONDS
                statement = statement.on_conflict_do_update(
                    index_elements=[LoginCount.key],
                    set_={"attempts": case((expired, 1), else_=LoginCount.attempts + 1), "last_seconds": now},
                )
                session.execute(statement)
            self._writes += 1
            if self._writes % 500 == 0:  # forget what is past the window
                session.execute(delete(LoginCount).where(LoginCount.last_seconds < now - WINDOW_SECONDS))

    def clear(self, key: str) -> None:
        with self.sessionmaker.begin() as session:
            session.execute(delete(LoginCount).where(LoginCount.key == key))

    def forgive(self, key: str) -> None:
        with self.sessionmaker.begin() as session:
            session.execute(
                update(LoginCount)
                .where(LoginCount.key == key, LoginCount.attempts > 0)
                .values(attempts=LoginCount.attempts - 1)
            )


@dataclass
class LoginGuard:
    workers: int = 2
    queue: int = 16
    # a refused attempt is answered after this delay: a client looping on refusals then costs the
    # server one cheap request a second instead of hundreds (the connection waits, not a thread)
    tarpit_seconds: float = 1.0
    # wall-clock seconds: the counts are compared across processes (time.monotonic is per boot and process)
    clock: Callable[[], float] = time.time
    counts: MemoryCounts | DatabaseCounts = field(default_factory=MemoryCounts)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _waiting: int = 0
    _recorded: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._limiter = anyio.CapacityLimiter(self.workers)

    def worth_recording(self, refusal: str) -> bool:
        """A refusal (throttled or busy) goes to the audit log once a minute per account, address
        and kind, so a flood does not become a flood of database writes."""
        with self._lock:
            now = self.clock()
            if now - self._recorded.get(refusal, -RECORD_EVERY_SECONDS) < RECORD_EVERY_SECONDS:
                return False
            if len(self._recorded) > 10_000:
                self._recorded.clear()
            self._recorded[refusal] = now
            return True

    @staticmethod
    def _wait(count: _Count | None, free: int, now: float) -> float:
        if count is None or now - count.last > WINDOW_SECONDS:
            return 0.0
        if count.attempts < free:
            return 0.0
        backoff = min(2.0 ** (count.attempts - free), MAX_WAIT_SECONDS)
        return max(0.0, count.last + backoff - now)

    def address_wait(self, address: str | None) -> int:
        """Seconds the address must still wait (0: it may try), known before the body is read.
        Reads the database when the counts are kept there: call it from a thread."""
        if not address:
            return 0
        key = f"address:{address}"
        return math.ceil(self._wait(self.counts.read([key]).get(key), FREE_PER_ADDRESS, self.clock()))

    def begin(self, username: str, address: str | None) -> None:
        """Count an attempt, or raise Throttled when the account or the address must wait (a
        database call when the counts are kept there: call it from a thread)."""
        keys = [(f"account:{username.lower()[:64]}", FREE_PER_ACCOUNT)]
        if address:
            keys.append((f"address:{address}", FREE_PER_ADDRESS))
        with self._lock:  # within one process, one attempt at a time is counted
            now = self.clock()
            counts = self.counts.read([key for key, _ in keys])
            for key, free in keys:
                wait = self._wait(counts.get(key), free, now)
                if wait > 0:
                    what = "this user name" if key.startswith("account:") else "your address"
                    raise Throttled(
                        math.ceil(wait),
                        f"Too many login attempts for {what}: wait {math.ceil(wait)} s and try again.",
                    )
            self.counts.add([key for key, _ in keys], now)

    def succeeded(self, username: str, address: str | None = None) -> None:
        """A right password: its account starts afresh and the attempt no longer counts against
        its address (a team behind one proxy logs in many times a day)."""
        with self._lock:
            self.counts.clear(f"account:{username.lower()[:64]}")
            if address:
                self.counts.forgive(f"address:{address}")

    async def run(self, check: Callable[[], T]) -> T:
        """Run a password check in the bounded pool; raise Throttled (503) when it is full."""
        with self._lock:
            if self._waiting >= self.workers + self.queue:
                raise Throttled(1, "The server is busy checking other logins: try again in a second.", 503)
            self._waiting += 1
        try:
            return await anyio.to_thread.run_sync(check, limiter=self._limiter)
        finally:
            with self._lock:
                self._waiting -= 1


async def check_login(request, username: str, password: str, *, action: str = "login"):
    """The user for a login attempt (None: wrong name or password), counted by the app's guard and
    written to the audit log; raises Throttled when the attempt must wait or the pool is full."""
    guard: LoginGuard = request.app.state.login_guard
    sessions = request.app.state.sessionmaker
    address = audit.client_address(request.scope)
    username = username.strip()

    def write(outcome: str, status_code: int, detail: str | None = None) -> None:
        with sessions() as session:
            audit.record(
                session,
                action=action,
                username=username,
                client=address,
                outcome=outcome,
                status_code=status_code,
                detail=detail,
            )

    try:
        await anyio.to_thread.run_sync(guard.begin, username, address)  # a database call

        def verify():
            if len(password) > MAX_PASSWORD_LENGTH:
                return None  # no password is that long: not worth an argon2 run
            with sessions() as session:
                user = authenticate(session=session, username=username, password=password)
                if user is not None:
                    session.expunge(user)
                return user

        user = await guard.run(verify)
    except Throttled as refused:
        if guard.worth_recording(f"{refused.status_code} {username.lower()[:64]} {address}"):
            detail = f"{refused.reason} (recorded once a minute while it lasts)"
            await audit.write_later(write, "throttled", refused.status_code, detail)
        await anyio.sleep(guard.tarpit_seconds)
        raise
    if user is None:
        await audit.write_later(write, "failed", 401)
        return None
    await anyio.to_thread.run_sync(guard.succeeded, username, address)
    await audit.write_later(write, "ok", 200)
    return user


LOGIN_PATHS = frozenset({"/login", "/api/v1/auth/token"})


class LoginThrottleMiddleware:
    """An address that must wait is answered 429 here, before the body, the session or the CSRF
    check cost anything: a flood from one address costs little more than its connections."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in LOGIN_PATHS:
            from starlette.exceptions import HTTPException

            guard = scope["app"].state.login_guard
            wait = await anyio.to_thread.run_sync(guard.address_wait, client_address(scope))
            if wait > 0:
                await anyio.sleep(guard.tarpit_seconds)
                message = f"Too many login attempts from your address: wait {wait} s and try again."
                await refuse(scope, send, HTTPException(429, message, headers={"Retry-After": str(wait)}))
                return
        await self.app(scope, receive, send)
