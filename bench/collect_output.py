#!/usr/bin/env python3
"""Hostile collection output against a served redolab (issue 57, item 1): the server's memory and
/healthz while a database host (or a login script on it) floods a collection.

Starts a real OpenSSH sshd (tests/services.py) and `redolab serve` with its worker in the web process
(the default) on a fresh SQLite database; one environment whose primary host reaches the sshd, its
ORACLE_HOME a stand-in sqlplus (tests/standins). For each phase it sets the stand-in's scenario, queues
a collection through the JSON API and waits for its end, while two processes poll /healthz every
50 ms and sample the resident memory of the server and every process below it every 100 ms. Prints,
per phase, the collection's outcome and time, the peak RSS and /healthz p50/p95/max. Asserts nothing.

Phases: quiet (/healthz alone), ok (a normal collection), short_lines (63 MiB of two-byte lines
before the output), wide_chars (240 MB of four-byte characters), long_lines (150 MiB of 80-byte lines:
within the caps, so read in the child process and refused there), year (a legitimate first collection
of a year of 32 RAC threads, a log every 15 minutes each: 1,121,280 archived-log rows).

Targets: each hostile collection refused at its cap, naming the host, the step and the cap; the peak
RSS below 600 MiB and /healthz p95 under 200 ms meanwhile.

    python3 -m uv run python bench/collect_output.py [--only short_lines] [--flood-bytes N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT))

from fair_share import MIB, Watch, free_port, health_line, request, tree_rss_bytes  # noqa: E402

PASSWORD = "collect bench password 1"  # a throwaway user in a throwaway database
PHASES = ("ok", "short_lines", "wide_chars", "long_lines", "year")


def redolab(data_dir: Path) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"REDOLAB_DATA_DIR": str(data_dir)}
    found = os.environ.get("UV")
    return [*([found] if found else [sys.executable, "-m", "uv"]), "run", "--project", str(ROOT), "redolab"], env


def prepare(data_dir: Path, sshd, database) -> int:
    """The user, and the environment whose primary reaches the sshd with the stand-in's ORACLE_HOME, made
    through the services (as the tests' factories do); its id."""
    command, env = redolab(data_dir)
    subprocess.run([*command, "user", "create", "bench", "--password-stdin", "--role", "operator"],
                   input=PASSWORD + "\n", text=True, env=env, check=True, capture_output=True)  # fmt: skip
    os.environ["REDOLAB_DATA_DIR"] = str(data_dir)
    from tests.factories import make_ssh_environment

    from redolab.core.config import get_settings
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.environments.schemas import DatabaseAccessUpdate
    from redolab.environments.service import set_database_access

    settings = get_settings()
    secret_key = settings.resolve_secret_key()
    engine = make_engine(settings.resolved_database_url)
    with make_sessionmaker(engine)() as session:
        environment, primary, _ = make_ssh_environment(session, sshd, secret_key=secret_key)
        access = DatabaseAccessUpdate(db_kind="oracle", oracle_home=str(database.oracle_home), oracle_sid="ORCL1")
        set_database_access(session=session, host=primary, secret_key=secret_key, access_in=access)
        environment_id = environment.id
    engine.dispose()
    return environment_id


def serve(data_dir: Path):
    command, env = redolab(data_dir)
    port = free_port()
    log = open(data_dir / "serve.log", "wb")  # noqa: SIM115  (the server's, for as long as it runs)
    server = subprocess.Popen([*command, "serve", "--port", str(port)], env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if request(port, "GET", "/healthz", timeout=5)[0] == 200:
                return server, port
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit(f"redolab serve did not start:\n{(data_dir / 'serve.log').read_text()[-3000:]}")


def log_in(port: int) -> dict[str, str]:
    body = f"username=bench&password={PASSWORD.replace(' ', '+')}".encode()
    status, answer, _ = request(
        port, "POST", "/api/v1/auth/token", body, {"Content-Type": "application/x-www-form-urlencoded"}
    )
    if status != 200:
        raise SystemExit(f"log-in failed: {status} {answer[:200]!r}")
    return {"Authorization": f"Bearer {json.loads(answer)['access_token']}"}


def collect(port: int, auth: dict[str, str], environment_id: int) -> tuple[dict, float]:
    """Queue a collection and wait for its end: (the collection, seconds)."""
    started = time.monotonic()
    status, answer, _ = request(port, "POST", f"/api/v1/environments/{environment_id}/collections", b"{}",
                                {**auth, "Content-Type": "application/json"})  # fmt: skip
    if status != 201:
        raise SystemExit(f"queueing the collection failed: {status} {answer[:300]!r}")
    collection = json.loads(answer)
    while collection["status"] in ("queued", "running") and time.monotonic() - started < 900:
        time.sleep(0.5)
        collection = json.loads(request(port, "GET", f"/api/v1/collections/{collection['id']}", headers=auth)[1])
    return collection, time.monotonic() - started


def web_pid(pid: int) -> int:
    """The web process: `uv run` starts redolab as its child (or execs it: then `pid` itself)."""
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as handle:
                if int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                    return int(entry)
        except (OSError, IndexError, ValueError):
            continue
    return pid


class ServerRss:
    """The peak resident bytes of the web process alone (Watch counts its children too: the reading
    child, the forkserver), sampled every 100 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self.stop = pid, 0, threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.stop.is_set():
            with open(f"/proc/{self.pid}/statm") as handle:
                self.peak = max(self.peak, int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
            time.sleep(0.1)

    def finish(self) -> int:
        self.stop.set()
        self.thread.join(5)
        return self.peak


def year_of_logs(threads: int = 32, minutes: int = 15) -> list[list]:
    """V$ARCHIVED_LOG rows of a year: each thread switching every `minutes`, as the stand-in prints them."""
    start, rows = datetime(2025, 11, 20), []
    for thread in range(1, threads + 1):
        for sequence in range(365 * 24 * 60 // minutes):
            first = start + timedelta(minutes=minutes * sequence, seconds=thread)
            end = first + timedelta(minutes=minutes)
            rows.append([thread, sequence + 1, 1088, 1, f"{first:%Y-%m-%d %H:%M:%S}", f"{end:%Y-%m-%d %H:%M:%S}",
                         2_000_000 + sequence % 1000, 512])  # fmt: skip
    return rows


def phase(name: str, port: int, server_pid: int, auth, environment_id: int, database, flood_bytes) -> None:
    from tests.standins.standin_common import DEFAULT_DATA

    database.scenario, database.flood_bytes = ("ok" if name == "year" else name), flood_bytes
    database.data = dict(DEFAULT_DATA, archived_log=year_of_logs()) if name == "year" else None
    database.write()
    size = flood_bytes or {"short_lines": 63 * MIB, "wide_chars": 240_000_000, "long_lines": 150 * MIB}.get(name)
    watch = Watch(port, server_pid)
    own = ServerRss(web_pid(server_pid))
    collection, seconds = collect(port, auth, environment_id)
    latencies, peak = watch.finish()
    server_peak = own.finish()
    said = collection.get("failure_message") or f"{sum((collection.get('row_counts') or {}).values())} rows"
    print(f"{name:12} {collection['status']} in {seconds:.1f} s" + (f" (flood {int(size):,} bytes)" if size else ""))
    print(f"{'':12} {said[:300]}")
    print(f"{'':12} peak RSS of the server and its processes {peak / MIB:,.0f} MiB (the web process alone "
          f"{server_peak / MIB:,.0f} MiB)")  # fmt: skip
    print(f"{'':12}" + health_line("", latencies).strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=PHASES, action="append", help="run only these phases (repeatable)")
    parser.add_argument("--flood-bytes", type=int, help="STANDIN_FLOOD_BYTES (default: 63 MiB, 240 MB)")
    args = parser.parse_args()
    from tests import services
    from tests.collect.conftest import Database

    sshd = services.start_sshd()
    if sshd is None:
        raise SystemExit("no OpenSSH server here (Debian's openssh-server)")
    try:
        with tempfile.TemporaryDirectory(prefix="redolab-collect-bench-") as data_dir:
            root = Path(data_dir)
            database = Database(root / "db")
            database.root.mkdir()
            database.write()
            environment_id = prepare(root, sshd, database)
            server, port = serve(root)
            try:
                auth = log_in(port)
                print(f"{os.cpu_count()} CPUs; server RSS at rest {tree_rss_bytes(server.pid) / MIB:,.0f} MiB")
                watch = Watch(port, server.pid)
                time.sleep(5)
                latencies, peak = watch.finish()
                print(f"{'quiet':12} peak RSS {peak / MIB:,.0f} MiB; " + health_line("", latencies).strip())
                for name in args.only or PHASES:
                    phase(name, port, server.pid, auth, environment_id, database, args.flood_bytes)
            finally:
                server.terminate()
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    server.kill()
    finally:
        sshd.stop()


if __name__ == "__main__":
    main()
