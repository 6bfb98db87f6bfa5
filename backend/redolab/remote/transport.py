"""One transport interface for running the probe: over SSH, or on this machine.

Commands are argv lists. The SSH transport quotes every argument with shlex before it reaches
the remote shell; the local one executes argv directly, with no shell at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# How much a read takes from a pipe or channel at a time.
READ_BYTES = 64 * 1024
# The longest output line accepted. An interval line of 1,024 connections is about 104 KB (TCP_INFO
# for each stream); asyncio's default 64 KiB line limit broke runs from about 650 connections.
MAX_LINE_BYTES = 8 * 1024 * 1024
# What is kept of a command's stderr (its end): read all along, so it never fills the pipe.
STDERR_KEPT_BYTES = 64 * 1024


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


class OutputLineTooLong(TransportError):
    """A command printed a line longer than MAX_LINE_BYTES (not redoprobe's output)."""


@dataclass
class Completed:
    exit_status: int
    stdout: str
    stderr: str


class RemoteProcess(Protocol):
    """A running command whose stdout lines can be read as they come. Its stderr is read all along
    (the end kept); whoever stops reading the lines before the end calls drain(), so the command
    never blocks on a full pipe."""

    def lines(self) -> AsyncIterator[str]: ...

    def chunks(self) -> AsyncIterator[bytes]: ...  # stdout as it comes, as bytes (instead of lines())

    async def drain(self) -> None: ...

    async def wait(self) -> int: ...

    async def stderr_text(self) -> str: ...

    def terminate(self) -> None: ...


class Transport(Protocol):
    name: str  # the host's name, for messages

    @property
    def connected(self) -> bool: ...

    # `input`: text for the command's standard input (closed after it); how a script or a password
    # reaches a command without ever being on its command line.
    async def run(self, argv: Sequence[str], *, timeout: float = 60, input: str | None = None) -> Completed: ...

    async def start(self, argv: Sequence[str], *, input: str | None = None) -> RemoteProcess: ...

    async def upload(self, local: Path, remote: str) -> None: ...

    async def home(self) -> str: ...

    async def close(self) -> None: ...


def command_name(argv: Sequence[str]) -> str:
    """What a command runs, for messages: "redoprobe client" (also behind the shell that prints its
    PID, and for a deployed redoprobe-<version>-<hash>), else the program's name."""
    names = [str(arg).rsplit("/", 1)[-1] for arg in argv]
    for at, name in enumerate(names):
        if name == "redoprobe" or name.startswith("redoprobe-"):
            return " ".join(["redoprobe", *names[at + 1 : at + 2]])
    return names[0] if names else "the command"


def shell_join(argv: Sequence[str]) -> str:
    """The one place a command becomes shell text: every argument quoted."""
    return shlex.join(str(arg) for arg in argv)


Read = Callable[[int], Awaitable[bytes]]


async def read_lines(read: Read, *, where: str, max_line_bytes: int = MAX_LINE_BYTES) -> AsyncIterator[str]:
    """The lines `read` returns, without their newline, each up to max_line_bytes long: a longer one
    raises OutputLineTooLong, and the caller drains the rest of the output (discard())."""
    too_long = f"{where} printed a line of more than {max_line_bytes:,} bytes"
    pending: list[bytes] = []
    size = 0
    while chunk := await read(READ_BYTES):
        *complete, rest = chunk.split(b"\n")
        for part in complete:
            line = b"".join((*pending, part)) if pending else part
            pending, size = [], 0
            if len(line) > max_line_bytes:
                raise OutputLineTooLong(too_long)
            yield line.decode(errors="replace")
        if rest:
            pending.append(rest)
            size += len(rest)
        if size > max_line_bytes:  # refused before its end: the caller's drain reads the rest
            raise OutputLineTooLong(too_long)
    if pending:
        yield b"".join(pending).decode(errors="replace")


async def read_chunks(read: Read) -> AsyncIterator[bytes]:
    """What `read` returns, READ_BYTES at most at a time, until the end: bytes, never decoded, so that
    a caller can cap them in bytes (a character can be four)."""
    while chunk := await read(READ_BYTES):
        yield chunk


async def discard(read: Read) -> None:
    """Read until the end and keep nothing: a command whose output nobody wants still never blocks."""
    with contextlib.suppress(TransportError, RuntimeError):  # RuntimeError: another reader is active
        while await read(READ_BYTES):
            pass


class KeptStderr:
    """A command's stderr, read in the background from the start; its last STDERR_KEPT_BYTES kept."""

    def __init__(self, read: Read) -> None:
        self._kept = bytearray()
        self._task = asyncio.create_task(self._read_all(read))

    async def _read_all(self, read: Read) -> None:
        with contextlib.suppress(Exception):  # a dropped connection ends stderr too; lines() says why
            while chunk := await read(READ_BYTES):
                self._kept += chunk
                del self._kept[:-STDERR_KEPT_BYTES]

    async def text(self, wait_seconds: float = 2) -> str:
        """What was written so far, after up to wait_seconds for the command to close stderr."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), wait_seconds)
        return self._kept.decode(errors="replace")

    def stop(self) -> None:
        self._task.cancel()
