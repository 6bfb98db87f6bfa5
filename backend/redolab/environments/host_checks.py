"""What an SSH check of a host may take of a shared server: Test connection, the host-key scan (and
the check of a pasted fingerprint) and Measure encryption each hold an SSH session while the page or
the API client waits. At most REDOLAB_MAX_CONCURRENT_HOST_CHECKS run at once in a web process and
REDOLAB_MAX_HOST_CHECKS_PER_USER for one user (beyond: 503 with Retry-After, at once, before any
connection is made), and one at a time on a host (409): two `openssl speed` runs on one host would
each measure half of its core."""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager

from redolab.core.config import Settings
from redolab.core.limits import LimitReached, Slots
from redolab.environments.models import Host


class HostChecks:
    def __init__(self, settings: Settings) -> None:
        self.slots = Slots(
            total=settings.max_concurrent_host_checks,
            per_user=settings.max_host_checks_per_user,
            noun="host check",
            settings=("REDOLAB_MAX_CONCURRENT_HOST_CHECKS", "REDOLAB_MAX_HOST_CHECKS_PER_USER"),
            doing=("running", "runs", "running"),
        )
        self._lock = threading.Lock()
        self._hosts: set[int] = set()

    @contextmanager
    def taken(self, user: Hashable, host: Host) -> Iterator[None]:
        """Hold the host and a slot for `user` while the block runs; LimitReached when either is taken."""
        with self._lock:
            if host.id in self._hosts:
                raise LimitReached(
                    f"Host '{host.name}' is being checked already (Test connection, its host key or Measure "
                    "encryption): wait for that to finish, then try again.",
                    status_code=409,
                )
            self._hosts.add(host.id)
        try:
            with self.slots.taken(user):
                yield
        finally:
            with self._lock:
                self._hosts.discard(host.id)
