"""Caps on what one request may take of a shared server, checked before the work starts.

Heavy work (reading an upload) takes a slot without waiting, as the plan report's PDF printing takes
its semaphore: a full pool is answered at once (503 with Retry-After), because a request that waited
would hold one of the few threads that answer every page and /healthz.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from redolab.core.middleware import refuse


class LimitReached(Exception):
    """A cap is reached. 503: the server is busy, try again after `retry_after` seconds; 429: the
    user's own share is used; 507: the disk. The message names the cap and what to do."""

    def __init__(self, message: str, *, status_code: int = 503, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after else {}


class Slots:
    """At most `total` holders at once in this process, and `per_user` of them for one user."""

    def __init__(
        self,
        *,
        total: int,
        per_user: int,
        noun: str,
        settings: tuple[str, str],
        retry_after: int = 5,
        doing: tuple[str, str, str] = ("reading", "reads", "being read"),
    ) -> None:
        """`settings`: the names of the two caps' settings, as the refusals name them; `doing`: what the
        server is doing with a holder, in the refusals' three places ("reading", "reads", "being read")."""
        self.total, self.per_user, self.noun, self.settings = total, per_user, noun, settings
        self.retry_after, self.doing = retry_after, doing
        self._lock = threading.Lock()
        self._held: Counter[Hashable] = Counter()

    @property
    def in_use(self) -> int:
        with self._lock:
            return self._held.total()

    def full(self) -> LimitReached | None:
        """The refusal a new holder would get now because every slot is held (None: one is free)."""
        with self._lock:
            return self._full() if self._held.total() >= self.total else None

    def _full(self) -> LimitReached:
        return LimitReached(
            f"The server is {self.doing[0]} {self.total} {self.noun}s already, the most it {self.doing[1]} at once "
            f"({self.settings[0]}): try again in a few seconds.",
            retry_after=self.retry_after,
        )

    @contextmanager
    def taken(self, user: Hashable) -> Iterator[None]:
        """Hold a slot for `user` while the block runs; LimitReached (503) when none is free."""
        with self._lock:
            if self._held[user] >= self.per_user:
                raise LimitReached(
                    f"You have {self._held[user]} {self.noun}{'s' if self._held[user] != 1 else ''} {self.doing[2]} "
                    f"already, the most one user may have at once ({self.settings[1]}): wait for "
                    f"{'it' if self._held[user] == 1 else 'them'} to finish, then try again.",
                    retry_after=self.retry_after,
                )
            if self._held.total() >= self.total:
                raise self._full()
            self._held[user] += 1
        try:
            yield
        finally:
            with self._lock:
                self._held[user] -= 1
                if self._held[user] <= 0:
                    del self._held[user]


class SlotsFullMiddleware:
    """Refuse a request for `slots` (a POST whose path `applies`) before its body is read while every
    slot is held: a client that sends a 256 MiB upload again after each 503 would otherwise have the
    body parsed (in the event loop and the page threads) only to hear 503. The route takes the slot
    itself (this check is a hint: a slot freed meanwhile is still taken there first come, first served)."""

    def __init__(self, app: ASGIApp, *, applies: Callable[[str], bool], slots: Slots) -> None:
        self.app, self.applies, self.slots = app, applies, slots

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and self.applies(scope["path"]):
            full = self.slots.full()
            if full is not None:
                await refuse(scope, send, HTTPException(full.status_code, full.message, headers=full.headers))
                return
        await self.app(scope, receive, send)
