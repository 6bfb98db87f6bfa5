"""One transport interface for running the probe: over SSH, or on this machine.

Commands are argv lists. The SSH transport quotes every argument with shlex before it reaches
the remote shell; the local one executes argv directly, with no shell at all.
"""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class TransportError(Exception):
    """A host could not be reached or used; the message names the host and what to check."""


class HostAnswered(TransportError):
    """The host answered over SSH but would not let redolab in (key refused, host key changed)."""


class NotAttempted(TransportError):
    """redolab did not try to connect: something must be set up first (host key, credential)."""


class HostKeyChanged(HostAnswered):
    def __init__(self, host: str, pinned: str, offered: str) -> None:
        super().__init__(
            f"the SSH host key of {host} changed: pinned {pinned}, now offered {offered}. "
            "Nothing was run. If the host was rebuilt, verify the new key with its owner and "
            "accept it again under Hosts; otherwise treat this as a possible attack."
        )
        self.pinned = pinned
        self.offered = offered


@dataclass
class Completed:
    exit_status: int
    stdout: str
    stderr: str


class RemoteProcess(Protocol):
    """A running command whose stdout lines can be read as they come."""

    def lines(self) -> AsyncIterator[str]: ...

    async def wait(self) -> int: ...

    async def stderr_text(self) -> str: ...

    def terminate(self) -> None: ...


class Transport(Protocol):
    name: str  # the host's name, for messages

    @property
    def connected(self) -> bool: ...

    async def run(self, argv: Sequence[str], *, timeout: float = 60) -> Completed: ...

    async def start(self, argv: Sequence[str]) -> RemoteProcess: ...

    async def upload(self, local: Path, remote: str) -> None: ...

    async def home(self) -> str: ...

    async def close(self) -> None: ...


def shell_join(argv: Sequence[str]) -> str:
    """The one place a command becomes shell text: every argument quoted."""
    return shlex.join(str(arg) for arg in argv)
