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
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

IS_ROOT = os.geteuid() == 0


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-site-isolation-trials",
    "--disable-features=IsolateOrigins,site-per-process,PaintHolding,Translate,OptimizationHints,MediaRouter",
    "--renderer-process-limit=2",
    "--disable-renderer-backgrounding",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str | None:
    return os.environ.get("REDOLAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


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
    for attempt in range(3):  # a free port can be taken before the server binds it (parallel workers)
        port = free_port()
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        try:
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
            break
        except subprocess.CalledProcessError:
            if attempt == 2:
                raise
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


_MANUAL_BUILT: dict[Path, bool] = {}


def manual_site(tmp_path_factory) -> Path:
    """Where this test process's manual is built (once, by `built_manual`): the shared server serves it."""
    return tmp_path_factory.getbasetemp() / "manual-site"


def built_manual(tmp_path_factory) -> Path:
    """The manual, built from docs/ with `mkdocs build --strict` once per test process (in it: the hook that
    writes the API and CLI references imports redolab, which this process has imported already)."""
    site = manual_site(tmp_path_factory)
    if not _MANUAL_BUILT.get(site):
        os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # Material's banner about its successor
        from mkdocs.commands.build import build
        from mkdocs.config import load_config

        from redolab.core.config import PROJECT_ROOT

        build(load_config(str(PROJECT_ROOT / "mkdocs.yml"), site_dir=str(site), strict=True))
        _MANUAL_BUILT[site] = True
    return site


def redolab_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDOLAB_")}
    env.update(REDOLAB_DATA_DIR=str(data_dir), **extra)
    return env


def start_redolab(data_dir: Path, *options: str, timeout: float = 30.0, **env: str) -> RedolabServer:
    """`redolab serve` as a user would run it, on a free port; waits until it answers."""
    port = free_port()
    process = subprocess.Popen(
        [str(REDOLAB), "serve", "--port", str(port), *options],
        env=redolab_env(data_dir, **env),
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
        ready.set()  # the output ended: the process did, and waiting on would wait out the timeout

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(timeout) or not any("Uvicorn running" in line for line in output):
        process.kill()
        raise RuntimeError("redolab serve did not start:\n" + "".join(output))
    setup = next((line.strip() for line in output if "/setup?token=" in line), None)
    return RedolabServer(f"http://127.0.0.1:{port}", process, output, setup)


SSHD = Path("/usr/sbin/sshd")


@dataclass
class SshServer:
    port: int
    root: Path
    user: str
    host_key_line: str
    host_key_fingerprint: str
    client_key_path: Path
    process: subprocess.Popen

    @property
    def client_key(self) -> str:
        return self.client_key_path.read_text()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.root, ignore_errors=True)


def _fingerprint(public_key: Path) -> str:
    out = subprocess.run(["ssh-keygen", "-lf", str(public_key)], check=True, capture_output=True, text=True)
    return out.stdout.split()[1]


def _wait_for_port(port: int, process: subprocess.Popen, timeout: float = 10) -> bool:
    """True once something listens on the port; False when the process exited first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        if process.poll() is not None:
            return False
        time.sleep(0.05)
    return True  # as before: the caller's first connection tells


def start_sshd() -> SshServer | None:
    """A real OpenSSH sshd on 127.0.0.1 with its own host key and one authorized client key."""
    if not SSHD.exists() or shutil.which("ssh-keygen") is None:
        return None
    import getpass

    from redolab.lab.control import keygen, sshd_config

    root = Path(tempfile.mkdtemp(prefix="redolab-sshd-"))
    keygen(root / "host_ed25519", "redolab-test-host")
    keygen(root / "client_ed25519", "redolab-test-client")
    (root / "authorized_keys").write_text((root / "client_ed25519.pub").read_text())
    if IS_ROOT:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
    for attempt in range(3):  # a free port can be taken before sshd binds it (parallel workers)
        port = free_port()
        config = root / "sshd_config"
        config.write_text(
            sshd_config(
                address="127.0.0.1",
                port=port,
                host_key=root / "host_ed25519",
                pid_file=root / "sshd.pid",
                authorized_keys=root / "authorized_keys",
            )
            # the probes its sessions start carry the owner mark of this test process (leftover_probes)
            + (f"SetEnv {OWNER_VARIABLE}={owner}\n" if (owner := os.environ.get(OWNER_VARIABLE)) else "")
        )
        with open(root / "log", "w") as log:  # the child keeps its own copy of the descriptor
            process = subprocess.Popen(
                [str(SSHD), "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=log
            )
        if _wait_for_port(port, process):
            break
        if attempt == 2:
            raise RuntimeError("sshd exited: " + (root / "log").read_text())
    host_pub = root / "host_ed25519.pub"
    return SshServer(
        port=port,
        root=root,
        user=getpass.getuser(),
        host_key_line=" ".join(host_pub.read_text().split()[:2]),
        host_key_fingerprint=_fingerprint(host_pub),
        client_key_path=root / "client_ed25519",
        process=process,
    )


# Every test process marks itself with a token of its own in this variable (tests/conftest.py), which
# the probes it starts inherit (locally, and through the test sshd's SetEnv). Not REDOLAB_: redolab_env
# keeps it for `redolab serve` and the CLI.
OWNER_VARIABLE = "PYTEST_REDOLAB_OWNER"


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def started_here(pid: int) -> bool:
    """Whether a process belongs to this test process: it carries our owner mark (orphans too), or
    it runs below us (e.g. in a session of the lab's sshd)."""
    owner = os.environ.get(OWNER_VARIABLE)
    if owner is None:
        return True  # outside the test suite's processes: everything counts
    try:
        if f"{OWNER_VARIABLE}={owner}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            return True
    except OSError:
        pass
    me, seen = os.getpid(), 0
    while pid > 1 and seen < 64:
        pid, seen = _parent(pid), seen + 1
        if pid == me:
            return True
    return False


def leftover_probes(pattern: str = r"redoprobe[^ ]* (server|client|disk)") -> list[str]:
    """redoprobe processes still running that this test process started (pgrep), excluding zombies.
    Another test process's probes (a parallel xdist worker, another checkout's suite on the same
    machine) are not ours to judge."""
    out = subprocess.run(["pgrep", "-a", "-f", pattern], capture_output=True, text=True).stdout
    alive = []
    for line in out.splitlines():
        pid = line.split()[0]
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and started_here(int(pid)):
            alive.append(line)
    return alive


def kill_probes(pattern: str, sig: int = 9) -> int:
    """`pkill -f pattern` for this test process's probes only (see leftover_probes); how many it hit."""
    hit = 0
    for line in leftover_probes(pattern):
        try:
            os.kill(int(line.split()[0]), sig)
            hit += 1
        except ProcessLookupError:
            pass
    return hit
