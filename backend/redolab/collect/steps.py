"""One command of a collection on the host: its standard input sent, its output read up to a cap, stopped
on the host at its time limit or at a cancel (checked every WATCH_SECONDS), decoded with errors replaced."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from redolab.collect.errors import CollectionError
from redolab.remote.transport import OutputLineTooLong, RemoteProcess, Transport

WATCH_SECONDS = 0.25
STEP_SECONDS = 300.0  # one SQL*Plus session or CLP call; a hang is stopped after this
OUTPUT_CAP_BYTES = 64 * 1024 * 1024  # all the output of one command (a year of 32 threads' logs is ~20 MiB)
# The host ends the command itself (coreutils timeout: TERM, then KILL 5 s later) this long after
# redolab stops waiting: closing an SSH channel does not signal the command (OpenSSH ignores signal
# requests), and a sqlplus blocked inside the database would outlive the collection.
HOST_GRACE_SECONDS = 1
# A cancel (or the time limit, or the output cap) ends it at once: the shell prints its PID first and
# becomes `timeout`, which passes a TERM on to the command and its process group (KILL 5 s later).
PID_SHELL = 'echo "redolab-pid $$"; exec "$@"'
PID_PREFIX = "redolab-pid "


class Cancelled(Exception):
    """The user cancelled the collection while a command ran (it was stopped)."""


@dataclass
class StepOutput:
    stdout: str
    stderr: str
    exit_code: int
    was_stopped: bool  # stopped at its time limit


class _Reader:
    """Reads a command's lines into memory until its end or the cap (then `too_much`)."""

    def __init__(self, process: RemoteProcess, cap_bytes: int) -> None:
        self.process, self.cap_bytes = process, cap_bytes
        self.lines: list[str] = []
        self.size, self.too_much = 0, False
        self.pid: int | None = None  # of `timeout` on the host, from PID_SHELL's first line
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for line in self.process.lines():
            if self.pid is None and not self.lines and line.startswith(PID_PREFIX):
                pid = line[len(PID_PREFIX) :].strip()
                self.pid = int(pid) if pid.isdigit() and 1 < int(pid) < 2**22 else None
                continue
            self.size += len(line) + 1
            if self.size > self.cap_bytes:
                self.too_much = True
                return
            self.lines.append(line)

    async def stop(self, transport: Transport) -> None:
        """Stop the command on the host (TERM to its `timeout` by PID, over another channel) and the
        reading; the local process is reaped. Without a PID the host ends it at its time limit."""
        if self.pid is not None:
            with contextlib.suppress(Exception):  # gone already, or the connection dropped: timeout still ends it
                await transport.run(["kill", "-TERM", str(self.pid)], timeout=5)
        self.process.terminate()
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await self.task
        # its output read to the end and its exit seen, so no pipe of it outlives the event loop; at most
        # a second (a closed SSH channel may never say more)
        ends = [
            asyncio.ensure_future(end)
            for end in (self.process.drain(), self.process.wait(), self.process.stderr_text())
        ]
        _, pending = await asyncio.wait(ends, timeout=1)
        for end in pending:
            end.cancel()
        await asyncio.gather(*ends, return_exceptions=True)


async def _watch(reader: _Reader, *, deadline: float, should_stop, heartbeat) -> str | None:
    """Wait for the reading to end: None, or "cancelled" / "stopped" (time limit) when it was cut short."""
    loop = asyncio.get_running_loop()
    while not reader.task.done():
        await asyncio.wait({reader.task}, timeout=WATCH_SECONDS)
        heartbeat()
        if reader.task.done():
            return None
        if should_stop():
            return "cancelled"
        if loop.time() > deadline:
            return "stopped"
    return None


async def run_step(
    transport: Transport,
    argv: Sequence[str],
    *,
    step: str,
    input: str | None = None,
    timeout: float = STEP_SECONDS,
    cap_bytes: int = OUTPUT_CAP_BYTES,
    should_stop: Callable[[], bool] = lambda: False,
    heartbeat: Callable[[], None] = lambda: None,
) -> StepOutput:
    """Run `argv` with `input` on its standard input; its output decoded (errors replaced). The host
    ends the command by itself shortly after the time limit (see HOST_GRACE_SECONDS)."""
    limit = str(math.ceil(timeout) + HOST_GRACE_SECONDS)
    bounded = ["sh", "-c", PID_SHELL, "redolab-collect", "timeout", "--kill-after=5", limit, *argv]
    reader = _Reader(await transport.start(bounded, input=input), cap_bytes)
    deadline = asyncio.get_running_loop().time() + timeout
    try:
        ended = await _watch(reader, deadline=deadline, should_stop=should_stop, heartbeat=heartbeat)
        error = reader.task.exception() if reader.task.done() and not reader.task.cancelled() else None
    finally:
        if not reader.task.done() or reader.too_much:
            await reader.stop(transport)
    if isinstance(error, OutputLineTooLong):
        raise CollectionError("garbage", step, str(error), "The output is not what the tool prints.")
    if error is not None:
        raise error
    if ended == "cancelled":
        raise Cancelled
    if reader.too_much:
        raise CollectionError(
            "truncated",
            step,
            f"the output passed {cap_bytes:,} bytes and was stopped",
            "Collect a shorter period (fewer days of history) or raise the cap.",
        )
    if ended == "stopped":
        return StepOutput("\n".join(reader.lines), "", -1, True)
    try:
        exit_code = await asyncio.wait_for(reader.process.wait(), 10)
    except TimeoutError:
        await reader.stop(transport)
        exit_code = -1
    return StepOutput("\n".join(reader.lines), await reader.process.stderr_text(), exit_code, False)
