"""Caps on what one request may take of a shared server, checked before the work starts.

Heavy work (reading an upload) takes a slot without waiting, as the plan report's PDF printing takes
its semaphore: a full pool is answered at once (503 with Retry-After), because a request that waited
would hold one of the few threads that answer every page and /healthz.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Hashable, Iterator
from contextlib import contextmanager


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
        self, *, total: int, per_user: int, noun: str, settings: tuple[str, str], retry_after: int = 5
    ) -> None:
        """`settings`: the names of the two caps' settings, as the refusals name them."""
        self.total, self.per_user, self.noun, self.settings = total, per_user, noun, settings
        self.retry_after = retry_after
        self._lock = threading.Lock()
        self._held: Counter[Hashable] = Counter()

    @property
    def in_use(self) -> int:
        with self._lock:
            return self._held.total()

    @contextmanager
    def taken(self, user: Hashable) -> Iterator[None]:
        """Hold a slot for `user` while the block runs; LimitReached (503) when none is free."""
        with self._lock:
            if self._held[user] >= self.per_user:
                raise LimitReached(
                    f"You have {self._held[user]} {self.noun}{'s' if self._held[user] != 1 else ''} being read "
                    f"already, the most one user may have at once ({self.settings[1]}): wait for "
                    f"{'it' if self._held[user] == 1 else 'them'} to finish, then try again.",
                    retry_after=self.retry_after,
                )
            if self._held.total() >= self.total:
                raise LimitReached(
                    f"The server is reading {self.total} {self.noun}s already, the most it reads at once "
                    f"({self.settings[0]}): try again in a few seconds.",
                    retry_after=self.retry_after,
                )
            self._held[user] += 1
        try:
            yield
        finally:
            with self._lock:
                self._held[user] -= 1
                if self._held[user] <= 0:
                    del self._held[user]
