"""One command of a collection on the host: its standard input sent, its output written to a file as it
comes (bytes, never decoded here) up to caps on bytes, lines and bytes per line, stopped on the host at
its time limit, at a cancel (checked every WATCH_SECONDS) or at a cap.

The output is hostile input: a login script, or a host that is not what it claims, may print anything.
So the web process never holds it: it is counted and written to the collection's spool file, and read
(decoded, parsed) in a child process under limits (collect.reading)."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from redolab.collect.errors import CollectionError
from redolab.remote.transport import RemoteProcess, Transport

WATCH_SECONDS = 0.25
STEP_SECONDS = 300.0  # one SQL*Plus session or CLP call; a hang is stopped after this
MIB = 1024 * 1024
# The host ends the command itself (coreutils timeout: TERM, then KILL 5 s later) this long after
# redolab stops waiting: closing an SSH channel does not signal the command (OpenSSH ignores signal
# requests), and a sqlplus blocked inside the database would outlive the collection.
HOST_GRACE_SECONDS = 1
# A cancel (or the time limit, or the output cap) ends it at once: the shell prints its PID first and
# becomes `timeout`, which passes a TERM on to the command and its process group (KILL 5 s later).
PID_SHELL = 'echo "redolab-pid $$"; exec "$@"'
PID_PREFIX = "redolab-pid "
_PID_PREFIX = PID_PREFIX.encode()
_PID_LINE_BYTES = 64  # "redolab-pid 4194304" and room: a longer first line is the command's own


@dataclass(frozen=True)
class OutputCaps:
    """Bounds on one command's output, in bytes (never characters: one can be four bytes) and lines."""

    total_bytes: int
    lines: int
    line_bytes: int

    def refusal(self, which: str) -> str:
        return {
            "bytes": f"the output passed {self.total_bytes // MIB:,} MiB ({self.total_bytes:,} bytes), the cap on "
            "one command's output",
            "lines": f"the output passed {self.lines:,} lines, the cap on one command's output",
            "line_bytes": f"a line of the output passed {self.line_bytes:,} bytes, the cap on one line",
        }[which]


# One SQL*Plus session or CLP call. Sized from a year of 32 RAC threads, one log switch every 15 minutes
# each: 32 x 35,040 = 1,121,280 V$ARCHIVED_LOG rows, about 90 bytes each as CSV (96 MiB), one line each.
# A line: LINESIZE 32767 characters of up to 4 bytes. The manual's "Collect from the database" says them.
OUTPUT_CAPS = OutputCaps(total_bytes=160 * MIB, lines=2_000_000, line_bytes=128 * 1024)
# What a small command prints (cat /etc/oratab, sqlplus -V): read in the web process, so kept small.
SMALL_OUTPUT_CAPS = OutputCaps(total_bytes=1 * MIB, lines=20_000, line_bytes=64 * 1024)


class Cancelled(Exception):
    """The user cancelled the collection while a command ran (it was stopped)."""


@dataclass
class StepOutput:
    """A command's output: its stdout in the file `path` (bytes as the host wrote them, `size_bytes` of
    them), the end of its stderr, its exit code, and whether it was stopped at its time limit."""

    path: Path
    size_bytes: int
    stderr: str
    exit_code: int
    was_stopped: bool

    def text(self) -> str:
        """The output decoded (errors replaced): only for a command run under SMALL_OUTPUT_CAPS."""
        return self.path.read_bytes().decode(errors="replace")


class _Reader:
    """Writes a command's output to `path` until its end or a cap (then `refused` names the cap)."""

    def __init__(self, process: RemoteProcess, caps: OutputCaps, path: Path) -> None:
        self.process, self.caps, self.path = process, caps, path
        self.size = self.lines = self.line_run = 0  # bytes, newlines, bytes of the line under way
        self.refused: str | None = None
        self.pid: int | None = None  # of `timeout` on the host, from PID_SHELL's first line
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        head: bytes | None = b""  # the first line until it is known whether it is the PID line
        with open(self.path, "wb") as sink:
            async for chunk in self.process.chunks():
                if head is not None:
                    head += chunk
                    if b"\n" not in head and len(head) < _PID_LINE_BYTES:
                        continue
                    chunk, head = self._without_pid_line(head), None
                if not self._counted(chunk):
                    return
                sink.write(chunk)
            if head and self._counted(head):
                sink.write(head)

    def _without_pid_line(self, head: bytes) -> bytes:
        line, newline, rest = head.partition(b"\n")
        pid = line[len(_PID_PREFIX) :].strip() if newline and line.startswith(_PID_PREFIX) else b""
        if not pid.isdigit():
            return head
        self.pid = int(pid) if 1 < int(pid) < 2**22 else None
        return rest

    def _counted(self, chunk: bytes) -> bool:
        """Count `chunk` against the caps: False (and `refused` set) when it passes one."""
        self.size += len(chunk)
        newlines = chunk.count(b"\n")
        self.lines += newlines
        if newlines:
            first, last = chunk.index(b"\n"), chunk.rindex(b"\n")
            longest = max(self.line_run + first, max(map(len, chunk[first + 1 : last].split(b"\n"))))
            self.line_run = len(chunk) - last - 1
        else:
            longest = self.line_run = self.line_run + len(chunk)
        if self.size > self.caps.total_bytes:
            self.refused = "bytes"
        elif self.lines > self.caps.lines:
            self.refused = "lines"
        elif max(longest, self.line_run) > self.caps.line_bytes:
            self.refused = "line_bytes"
        return self.refused is None

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
    spool: Path,
    input: str | None = None,
    timeout: float = STEP_SECONDS,
    caps: OutputCaps = OUTPUT_CAPS,
    should_stop: Callable[[], bool] = lambda: False,
    heartbeat: Callable[[], None] = lambda: None,
) -> StepOutput:
    """Run `argv` with `input` on its standard input; its output written to `spool` (the caller removes
    it). The host ends the command by itself shortly after the time limit (see HOST_GRACE_SECONDS)."""
    limit = str(math.ceil(timeout) + HOST_GRACE_SECONDS)
    bounded = ["sh", "-c", PID_SHELL, "redolab-collect", "timeout", "--kill-after=5", limit, *argv]
    reader = _Reader(await transport.start(bounded, input=input), caps, spool)
    deadline = asyncio.get_running_loop().time() + timeout
    try:
        ended = await _watch(reader, deadline=deadline, should_stop=should_stop, heartbeat=heartbeat)
        error = reader.task.exception() if reader.task.done() and not reader.task.cancelled() else None
    finally:
        if not reader.task.done() or reader.refused:
            await reader.stop(transport)
    if error is not None:
        raise error
    if ended == "cancelled":
        raise Cancelled
    if reader.refused:
        raise CollectionError(
            "too_large",
            step,
            f"{caps.refusal(reader.refused)}: the command was stopped and nothing was stored",
            "The scripts print one line per row, and a year of 32 threads' archived logs fits the caps: is a "
            "login script (.profile, .bashrc, glogin.sql) printing, or another tool first on the PATH?",
        )
    if ended == "stopped":
        return StepOutput(spool, reader.size, "", -1, True)
    try:
        exit_code = await asyncio.wait_for(reader.process.wait(), 10)
    except TimeoutError:
        await reader.stop(transport)
        exit_code = -1
    return StepOutput(spool, reader.size, await reader.process.stderr_text(), exit_code, False)
