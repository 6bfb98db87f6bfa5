"""Make sure the right redoprobe is on a host: the static binary, checked by SHA-256, or built
from the bundled source where the architecture differs."""

from __future__ import annotations

import platform
import secrets
import tarfile
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from redolab.core.security import file_sha256
from redolab.redoprobe import BINARY, PROBE_DIR, VERSION, build
from redolab.remote.local import LocalTransport
from redolab.remote.transport import Transport, TransportError


@dataclass(frozen=True)
class ProbeInstall:
    path: str
    sha256: str
    version: str
    built_from_source: bool


@lru_cache(maxsize=4)
def _binary_digest(path: Path, mtime_ns: int, size: int) -> str:
    return file_sha256(path)


def probe_digest() -> str:
    """SHA-256 of the local probe binary, hashed once per build (not once per host and run)."""
    binary = local_binary()
    stat = binary.stat()
    return _binary_digest(binary, stat.st_mtime_ns, stat.st_size)


def local_binary() -> Path:
    if not BINARY.exists():
        build()
    return BINARY


async def _remote_sha256(transport: Transport, path: str) -> str | None:
    result = await transport.run(["sha256sum", path])
    if result.exit_status != 0:
        return None
    return result.stdout.split()[0] if result.stdout.split() else None


def probe_file_name() -> str:
    """The cached binary's name on a host: version and hash, so a new build is a new file."""
    return f"redoprobe-{VERSION}-{probe_digest()[:16]}"


async def ensure_probe(transport: Transport, found: dict) -> ProbeInstall:
    """Return where the probe is on the host, uploading or building it when needed.

    `found` is what capture_settings(probe_name=probe_file_name()) reported: home, arch and
    the SHA-256 of the cached binary (empty when absent).
    """
    binary = local_binary()
    digest = probe_digest()
    if isinstance(transport, LocalTransport):
        return ProbeInstall(str(binary), digest, VERSION, built_from_source=False)
    home, arch = found.get("home") or "", found.get("arch") or ""
    if not home.startswith("/"):
        raise TransportError(f"{transport.name}: cannot find the SSH user's home directory")
    cache = f"{home}/.cache/redolab"
    if arch == platform.machine():
        if found.get("probe_sha256") == digest:
            return ProbeInstall(f"{cache}/{probe_file_name()}", digest, VERSION, built_from_source=False)
        return await _install_binary(transport, binary, digest, cache)
    return await _build_from_source(transport, cache, arch)


async def _install_binary(transport: Transport, binary: Path, digest: str, cache: str) -> ProbeInstall:
    path = f"{cache}/redoprobe-{VERSION}-{digest[:16]}"
    await transport.run(["mkdir", "-p", "-m", "700", cache])
    temporary = f"{path}.upload-{secrets.token_hex(4)}"
    await transport.upload(binary, temporary)
    await transport.run(["chmod", "700", temporary])
    if await _remote_sha256(transport, temporary) != digest:
        await transport.run(["rm", "-f", temporary])
        raise TransportError(
            f"the redoprobe uploaded to {transport.name} does not match its SHA-256 {digest[:16]}…: "
            "the upload was corrupted; check free space in the SSH user's home"
        )
    await transport.run(["mv", "-f", temporary, path])
    return ProbeInstall(path, digest, VERSION, built_from_source=False)


def _source_tarball(directory: Path) -> Path:
    target = directory / "redoprobe-src.tar"
    with tarfile.open(target, "w") as tar:
        for source in sorted(PROBE_DIR.iterdir()):
            if source.suffix in (".c", ".h") or source.name == "Makefile":
                tar.add(source, arcname=source.name)
    return target


async def _build_from_source(transport: Transport, cache: str, arch: str) -> ProbeInstall:
    with tempfile.TemporaryDirectory() as scratch:
        tarball = _source_tarball(Path(scratch))
        source_digest = file_sha256(tarball)
        directory = f"{cache}/redoprobe-src-{VERSION}-{source_digest[:16]}"
        path = f"{directory}/redoprobe"
        check = await transport.run([path, "--version"])
        if check.exit_status != 0:
            # Each build has a directory of its own and the binary is renamed into place: the
            # client and the server of a run may be one machine, building at the same moment.
            build = f"{directory}.build-{secrets.token_hex(4)}"
            await transport.run(["mkdir", "-p", "-m", "700", directory, build])
            try:
                await transport.upload(tarball, f"{build}/src.tar")
                await transport.run(["tar", "-xf", f"{build}/src.tar", "-C", build])
                made = await transport.run(["make", "-s", "-C", build, "redoprobe"], timeout=300)
                if made.exit_status != 0:
                    raise TransportError(
                        f"{transport.name} is {arch}, for which redolab has no binary, and building "
                        f"redoprobe there failed (it needs make and a C compiler): {made.stderr.strip()[-300:]}"
                    )
                await transport.run(["mv", "-f", f"{build}/redoprobe", path])
            finally:
                await transport.run(["rm", "-rf", build])
    digest = await _remote_sha256(transport, path) or ""
    return ProbeInstall(path, digest, VERSION, built_from_source=True)
