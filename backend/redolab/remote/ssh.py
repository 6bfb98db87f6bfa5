"""The SSH transport (asyncssh). Host keys are always pinned; there is no trust on first use."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from redolab.remote.transport import (
    Completed,
    HostAnswered,
    HostKeyChanged,
    KeptStderr,
    NotAttempted,
    TransportError,
    command_name,
    discard,
    read_chunks,
    read_lines,
    shell_join,
)

CONNECT_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class SshTarget:
    """Where and how to connect. Secrets live here only in memory, never in logs or reprs."""

    name: str
    address: str
    port: int
    username: str
    host_key: str | None  # pinned OpenSSH public key line
    host_key_fingerprint: str | None
    client_keys: tuple = ()  # asyncssh key objects or paths
    passphrase: str | None = None
    use_agent: bool = False

    def __repr__(self) -> str:  # keys and passphrases must never reach a log line
        return f"SshTarget({self.name!r}, {self.username}@{self.address}:{self.port})"


async def fetch_host_key(address: str, port: int) -> tuple[str, str]:
    """The host key a server offers now: (OpenSSH public key line, SHA256 fingerprint)."""
    try:
        key = await asyncio.wait_for(asyncssh.get_server_host_key(address, port, config=None), CONNECT_TIMEOUT_SECONDS)
    except (OSError, TimeoutError, asyncssh.Error) as error:
        raise TransportError(_unreachable(address, port, error)) from None
    if key is None:
        raise TransportError(f"{address}:{port} offered no SSH host key")
    return key.export_public_key("openssh").decode().strip(), key.get_fingerprint("sha256")


def _unreachable(address: str, port: int, error: BaseException) -> str:
    reason = str(error) or type(error).__name__
    if isinstance(error, TimeoutError):
        reason = f"no answer within {CONNECT_TIMEOUT_SECONDS} s"
    return (
        f"cannot reach {address}:{port} over SSH ({reason}): check the address, the port and "
        "any firewall between redolab and the host"
    )


class SshProcess:
    def __init__(self, process: asyncssh.SSHClientProcess, *, host: str, where: str) -> None:
        self._process = process
        self._host = host
        self._where = where  # "redoprobe client on db1", for messages
        self._stderr = KeptStderr(process.stderr.read)

    async def _read(self, size: int) -> bytes:
        try:
            return await self._process.stdout.read(size)
        except (asyncssh.Error, OSError) as error:
            reason = getattr(error, "reason", "") or str(error) or type(error).__name__
            raise TransportError(f"the SSH connection to {self._host} dropped mid-run ({reason})") from None

    def lines(self) -> AsyncIterator[str]:
        return read_lines(self._read, where=self._where)

    def chunks(self) -> AsyncIterator[bytes]:
        return read_chunks(self._read)

    async def drain(self) -> None:
        await discard(self._read)

    async def wait(self) -> int:
        completed = await self._process.wait(check=False)
        return completed.exit_status if completed.exit_status is not None else -1

    async def stderr_text(self) -> str:
        return await self._stderr.text()

    def terminate(self) -> None:
        self._stderr.stop()
        self._process.close()


class SshTransport:
    def __init__(self, target: SshTarget, connection: asyncssh.SSHClientConnection) -> None:
        self.name = target.name
        self.target = target
        self._connection = connection

    @property
    def connected(self) -> bool:
        return not self._connection.is_closed()

    @classmethod
    async def connect(cls, target: SshTarget) -> SshTransport:
        if not target.host_key:
            raise NotAttempted(
                f"the SSH host key of {target.name} is not verified yet: use Verify host on the "
                "environment page and accept its fingerprint before running anything there"
            )
        pinned = asyncssh.import_public_key(target.host_key)
        options = {
            "port": target.port,
            "username": target.username,
            "known_hosts": ([pinned], [], []),
            "config": None,
            "client_keys": list(target.client_keys) if target.client_keys else None,
            "passphrase": target.passphrase,
            "agent_path": () if target.use_agent else None,
            "connect_timeout": CONNECT_TIMEOUT_SECONDS,
            "keepalive_interval": 5,
            "keepalive_count_max": 3,
        }
        if target.use_agent and not target.client_keys:
            options.pop("client_keys")
        try:
            connection = await asyncssh.connect(target.address, **options)
        except asyncssh.HostKeyNotVerifiable:
            _, offered = await fetch_host_key(target.address, target.port)
            raise HostKeyChanged(target.name, target.host_key_fingerprint or "?", offered) from None
        except asyncssh.PermissionDenied:
            raise HostAnswered(
                f"SSH authentication to {target.name} as {target.username} was refused: check the "
                "host's credential and the user's ~/.ssh/authorized_keys"
            ) from None
        except (OSError, TimeoutError) as error:
            raise TransportError(f"{target.name}: " + _unreachable(target.address, target.port, error)) from None
        except asyncssh.Error as error:
            raise TransportError(f"SSH to {target.name} failed: {error.reason}") from None
        return cls(target, connection)

    async def run(self, argv: Sequence[str], *, timeout: float = 60, input: str | None = None) -> Completed:
        try:
            result = await self._connection.run(shell_join(argv), check=False, timeout=timeout, input=input)
        except asyncssh.TimeoutError:
            raise TransportError(f"{self.name}: '{argv[0]}' did not finish within {timeout:.0f} s") from None
        except (asyncssh.Error, OSError) as error:
            raise TransportError(f"the SSH connection to {self.name} failed: {error}") from None
        return Completed(
            result.exit_status if result.exit_status is not None else -1,
            str(result.stdout or ""),
            str(result.stderr or ""),
        )

    async def start(self, argv: Sequence[str], *, input: str | None = None) -> SshProcess:
        try:
            # bytes, read in chunks: a line is as long as the probe writes it (read_lines)
            process = await self._connection.create_process(shell_join(argv), encoding=None)
            if input is not None:  # the whole text, then end of file (a script's reader waits for it)
                process.stdin.write(input.encode())
                process.stdin.write_eof()
        except (asyncssh.Error, OSError) as error:
            raise TransportError(f"the SSH connection to {self.name} failed: {error}") from None
        return SshProcess(process, host=self.name, where=f"{command_name(argv)} on {self.name}")

    async def upload(self, local: Path, remote: str) -> None:
        try:
            async with self._connection.start_sftp_client() as sftp:
                await sftp.put(str(local), remote)
        except (asyncssh.Error, OSError) as error:
            raise TransportError(f"uploading to {self.name}:{remote} failed: {error}") from None

    async def home(self) -> str:
        result = await self.run(["printenv", "HOME"])
        home = result.stdout.strip()
        if result.exit_status != 0 or not home.startswith("/"):
            raise TransportError(f"{self.name}: cannot find the SSH user's home directory")
        return home

    async def close(self) -> None:
        self._connection.close()
        with contextlib.suppress(TimeoutError, asyncssh.Error, OSError):
            await asyncio.wait_for(self._connection.wait_closed(), 5)
