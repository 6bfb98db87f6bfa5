"""The local transport: "This machine" runs the probe here, with no SSH and no shell."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from redolab.remote.transport import (
    Completed,
    KeptStderr,
    TransportError,
    command_name,
    discard,
    read_chunks,
    read_lines,
)


class LocalProcess:
    def __init__(self, process: asyncio.subprocess.Process, *, where: str) -> None:
        assert process.stdout is not None and process.stderr is not None
        self._process = process
        self._where = where  # "redoprobe on this machine", for messages
        self._stderr = KeptStderr(process.stderr.read)

    async def _read(self, size: int) -> bytes:
        assert self._process.stdout is not None
        try:
            return await self._process.stdout.read(size)
        except OSError as error:
            raise TransportError(f"reading the output of {self._where} failed: {error}") from None

    def lines(self) -> AsyncIterator[str]:
        return read_lines(self._read, where=self._where)

    def chunks(self) -> AsyncIterator[bytes]:
        return read_chunks(self._read)

    async def drain(self) -> None:
        await discard(self._read)

    async def wait(self) -> int:
        return await self._process.wait()

    async def stderr_text(self) -> str:
        return await self._stderr.text()

    def terminate(self) -> None:
        if self._process.returncode is None:
            self._process.terminate()


class LocalTransport:
    def __init__(self, name: str = "this machine") -> None:
        self.name = name

    @property
    def connected(self) -> bool:
        return True

    async def run(self, argv: Sequence[str], *, timeout: float = 60, input: str | None = None) -> Completed:
        process = await asyncio.create_subprocess_exec(
            *map(str, argv),
            stdin=None if input is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            data = None if input is None else input.encode()
            out, err = await asyncio.wait_for(process.communicate(data), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise TransportError(f"{self.name}: '{argv[0]}' did not finish within {timeout:.0f} s") from None
        return Completed(process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace"))

    async def start(self, argv: Sequence[str], *, input: str | None = None) -> LocalProcess:
        process = await asyncio.create_subprocess_exec(
            *map(str, argv),
            stdin=None if input is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C to redolab does not hit the probe first
        )
        if input is not None:
            assert process.stdin is not None
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it may exit before reading it all
                process.stdin.write(input.encode())
                await process.stdin.drain()
            process.stdin.close()
        return LocalProcess(process, where=f"{command_name(argv)} on {self.name}")

    async def upload(self, local: Path, remote: str) -> None:
        target = Path(remote)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local, target)

    async def home(self) -> str:
        return os.path.expanduser("~")

    async def close(self) -> None:
        return None
