"""Real components the tests start themselves: PostgreSQL (and later sshd).

When the CI variable is set, a missing component fails the test instead of skipping it.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

IS_ROOT = os.geteuid() == 0


def missing(component: str, how: str) -> None:
    """Skip locally, fail in CI: the CI run must exercise every real component."""
    message = f"{component} is not available: {how}"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _postgres_bindir() -> Path | None:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    for directory in reversed(candidates):
        if Path(directory, "initdb").exists():
            return Path(directory)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@dataclass
class PostgresServer:
    url: str
    root: Path
    bindir: Path

    def _as_owner(self, *args: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *args] if IS_ROOT else list(args)

    def stop(self) -> None:
        subprocess.run(
            self._as_owner(
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.root / "data"),
                "-m",
                "fast",
                "-w",
                "stop",
            ),
            check=False,
            capture_output=True,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def start_postgres() -> PostgresServer | None:
    """initdb + pg_ctl start on a free loopback port (as the postgres user when we are root)."""
    bindir = _postgres_bindir()
    if bindir is None:
        return None
    root = Path(tempfile.mkdtemp(prefix="redolab-pg-"))
    server = PostgresServer(url="", root=root, bindir=bindir)
    if IS_ROOT:
        shutil.chown(root, "postgres", "postgres")
    port = free_port()
    run = lambda *args: subprocess.run(server._as_owner(*args), check=True, capture_output=True)  # noqa: E731
    run(
        str(bindir / "initdb"),
        "-D",
        str(root / "data"),
        "-A",
        "trust",
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--no-sync",
    )
    options = (
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    )
    run(
        str(bindir / "pg_ctl"),
        "-D",
        str(root / "data"),
        "-o",
        options,
        "-l",
        str(root / "log"),
        "-w",
        "start",
    )
    server.url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    return server


REDOLAB = Path(sys.executable).parent / "redolab"


@dataclass
class RedolabServer:
    url: str
    process: subprocess.Popen
    output: list[str]
    setup_url: str | None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def redolab_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDOLAB_")}
    env.update(REDOLAB_DATA_DIR=str(data_dir), **extra)
    return env


def start_redolab(data_dir: Path, timeout: float = 30.0) -> RedolabServer:
    """`redolab serve` as a user would run it, on a free port; waits until it answers."""
    port = free_port()
    process = subprocess.Popen(
        [str(REDOLAB), "serve", "--port", str(port)],
        env=redolab_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=data_dir,
    )
    output: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        for line in process.stdout:
            output.append(line)
            if "Uvicorn running" in line:
                ready.set()

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(timeout):
        process.kill()
        raise RuntimeError("redolab serve did not start:\n" + "".join(output))
    setup = next((line.strip() for line in output if "/setup?token=" in line), None)
    return RedolabServer(f"http://127.0.0.1:{port}", process, output, setup)
