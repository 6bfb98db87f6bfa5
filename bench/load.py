#!/usr/bin/env python3
"""Load: a team's year of data, then 1 and 20 concurrent clients over the main pages and APIs.

Seeds a database as redolab stores it:
  - 20 environments, each a primary and a standby host;
  - 10,000 runs (500 per environment), each with 30 one-second intervals and its end event, made
    from the lines a real redoprobe run printed at the start of this bench (run here over loopback),
    and one run of 3,600 intervals (a one-hour run);
  - a year of archived logs in environment 1 (196,000 V$ARCHIVED_LOG rows, two RAC threads),
    imported through redolab's importer.
Then starts `redolab serve` (with --workers N) and drives 1 and then 20 clients, each looping over
the endpoints for a fixed time, and prints p50/p95/p99 per endpoint and the HTML size of the
environment page. Prints figures; asserts nothing.

    python3 bench/load.py                                   # SQLite, one web process
    python3 bench/load.py --database-url postgresql+psycopg://... --workers 2
    python3 bench/load.py --seconds 30 --clients 1,20
    python3 bench/load.py --clients 20 --web-threads 4,40   # the threads setting, same data
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT))

import httpx2 as httpx  # noqa: E402  (the maintained httpx fork starlette uses)

PASSWORD = "bench password 123"  # a throwaway user in a throwaway database
ENVIRONMENTS, RUNS, INTERVALS, LONG_INTERVALS, ARCHIVED_LOGS = 20, 10_000, 30, 3_600, 196_000


def probe_lines() -> list[dict]:
    """A real two-connection SYNC run over loopback: its client events, the templates of every run."""
    probe = ROOT / "backend/redolab/redoprobe/redoprobe"
    server = subprocess.Popen(
        [str(probe), "server", "--json", "--once", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    port = json.loads(server.stdout.readline())["data"]["port"]
    client = subprocess.run(
        [str(probe), "client", "127.0.0.1", "--json", "--port", str(port), "--mode", "sync", "--conns", "2",
         "--message-size", "64K", "--duration", "2", "--interval", "1", "--rate", "400M"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    server.wait(timeout=10)
    return [json.loads(line) for line in client.stdout.splitlines() if line.strip()]


def _line(event: str, data: dict) -> str:
    return json.dumps({"event": event, "data": data}, separators=(",", ":"))


def run_events(templates: list[dict], intervals: int, rng: random.Random) -> list[tuple[str, str]]:
    """(event, line) for one run: the start, `intervals` intervals varied around the template, the end."""
    start = next(e["data"] for e in templates if e["event"] == "start")
    interval = next(e["data"] for e in templates if e["event"] == "interval")
    end = next(e["data"] for e in templates if e["event"] == "end")
    out = [("start", _line("start", start))]
    total = 0
    for i in range(intervals):
        scale = rng.uniform(0.6, 1.2)
        streams = [
            {**s, "bytes": int(s["bytes"] * scale), "rtt_us": max(1, int(s["rtt_us"] * rng.uniform(0.7, 1.5)))}
            for s in interval["streams"]
        ]
        got = sum(s["bytes"] for s in streams)
        total += got
        data = {**interval, "start_seconds": float(i), "end_seconds": float(i + 1), "streams": streams,
                "bytes": got, "bytes_per_second": float(got)}  # fmt: skip
        out.append(("interval", _line("interval", data)))
    out.append(("end", _line("end", {**end, "seconds": float(intervals), "bytes_sent": total,
                                     "bytes_received": total, "bytes_per_second": total / intervals})))  # fmt: skip
    return out


def seed(database_url: str, data_dir: Path) -> dict:
    """Fill the database; returns what the clients need (ids)."""
    from sqlalchemy import insert

    import redolab.models  # noqa: F401  (every table known)
    from redolab.auth.service import create_user
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.core.migrate import upgrade
    from redolab.environments.models import Environment, HostRole
    from redolab.environments.schemas import EnvironmentCreate, HostCreate
    from redolab.environments.service import create_environment, create_host
    from redolab.redo.imports import import_now
    from redolab.runs.models import Run, RunEvent, RunStatus, RunSummary
    from redolab.runs.service import summary_values

    sys.path.insert(0, str(ROOT / "bench"))
    from redo_import import generate

    rng = random.Random(20)  # noqa: S311  (repeatable bench data, not a secret)
    templates = probe_lines()
    engine = make_engine(database_url)
    upgrade(engine)
    sessions = make_sessionmaker(engine)
    started = time.perf_counter()
    ids: dict = {"environments": [], "runs": [], "long_run": None}
    with sessions() as session:
        create_user(session=session, username="bench", password=PASSWORD)
        for number in range(ENVIRONMENTS):
            environment = create_environment(session=session, env_in=EnvironmentCreate(name=f"bench {number + 1}"))
            hosts = [
                create_host(session=session, environment=environment, host_in=HostCreate(
                    role=role, name=f"{role.value}-{number + 1}", ssh_address=f"10.0.{number}.{i + 1}",
                    ssh_user="oracle"))
                for i, role in enumerate((HostRole.primary, HostRole.standby))
            ]  # fmt: skip
            ids["environments"].append(environment.id)
            for index in range(RUNS // ENVIRONMENTS):
                long = number == 0 and index == 0
                count = LONG_INTERVALS if long else INTERVALS
                events = run_events(templates, count, rng)
                end = json.loads(events[-1][1])["data"]
                moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=index * 17 + number)
                run = Run(
                    environment_id=environment.id, client_host_id=hosts[0].id, server_host_id=hosts[1].id,
                    client_host_name=hosts[0].name, server_host_name=hosts[1].name, mode="sync",
                    conns=rng.choice((1, 2, 4, 8)), message_bytes=65536, sockbuf_bytes=rng.choice((None, 4 << 20)),
                    duration_seconds=float(count), interval_seconds=1.0, status=RunStatus.succeeded,
                    requested_by="bench", created_at=moment, started_at=moment,
                    finished_at=moment + timedelta(seconds=count), seconds=end["seconds"],
                    bytes_sent=end["bytes_sent"], bytes_received=end["bytes_received"],
                    bytes_per_second=end["bytes_per_second"], retransmits=0, label=f"bench {index}",
                    tags=["bench"] if index % 7 else ["bench", "mtu9000"],
                    client_settings={"mtu_bytes": 9000 if index % 7 == 0 else 1500},
                )  # fmt: skip
                session.add(run)
                session.flush()
                session.execute(
                    insert(RunEvent),
                    [{"run_id": run.id, "seq": seq, "role": "client", "event": event, "line": line}
                     for seq, (event, line) in enumerate(events)],
                )  # fmt: skip
                lines = [line for event, line in events if event in ("interval", "end")]
                session.add(RunSummary(**summary_values(run, lines)))
                if long:
                    ids["long_run"] = run.id
                elif index < 3:
                    ids["runs"].append(run.id)
            session.commit()
        print(f"seeded {RUNS:,} runs in {ENVIRONMENTS} environments in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "archived_logs.csv"
            generate(path, ARCHIVED_LOGS)
            environment = session.get(Environment, ids["environments"][0])
            record = import_now(  # as the import job does: visible with its stored analysis
                session=session, environment=environment, path=path, filename="year_of_archived_logs.csv",
                imported_by="bench",
            )  # fmt: skip
        span = (record.last_time - record.first_time).days
        print(f"imported {record.rows_read:,} archived-log rows ({span} days) in {time.perf_counter() - started:.1f} s")
    engine.dispose()
    return ids


def endpoints(ids: dict) -> list[tuple[str, str]]:
    """(name, path) the clients loop over: the main pages and APIs."""
    year, other = ids["environments"][0], ids["environments"][1]
    return [
        ("environment page (year of logs, 500 runs)", f"/environments/{year}"),
        ("environment page (500 runs)", f"/environments/{other}"),
        ("run page (3,600 intervals)", f"/runs/{ids['long_run']}"),
        ("run page (30 intervals)", f"/runs/{ids['runs'][4]}"),
        ("environments list", "/environments"),
        ("API plan (year of logs)", f"/api/v1/environments/{year}/plan"),
        ("API redo analytics", f"/api/v1/environments/{year}/redo/analytics"),
        ("API runs list", f"/api/v1/environments/{other}/runs"),
    ]


def start_server(
    database_url: str, data_dir: Path, workers: int = 1, threads: int | None = None
) -> tuple[subprocess.Popen, str]:
    """`redolab serve` without its worker on a free port (threads: REDOLAB_WEB_THREADS, None for the
    default), once /healthz answers: (the process, its URL). Shared by the benches that need a server."""
    from tests.services import REDOLAB, free_port, redolab_env

    port = free_port()
    extra = {"REDOLAB_WEB_THREADS": str(threads)} if threads is not None else {}
    env = redolab_env(data_dir, REDOLAB_DATABASE_URL=database_url, REDOLAB_WORKER_ENABLED="false", **extra)
    process = subprocess.Popen(
        [str(REDOLAB), "serve", "--port", str(port), "--workers", str(workers)], env=env, cwd=data_dir,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("redolab serve did not start")


def log_in(url: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=120)
    client.get("/login")
    response = client.post(
        "/login", data={"username": "bench", "password": PASSWORD},
        headers={"X-CSRFToken": client.cookies["csrftoken"], "Origin": url},
    )  # fmt: skip
    if response.status_code != 303:
        raise RuntimeError(f"login failed: {response.status_code} {response.text[:200]}")
    token = client.post("/api/v1/auth/token", data={"username": "bench", "password": PASSWORD}).json()
    client.headers["Authorization"] = f"Bearer {token['access_token']}"
    return client


def drive(url: str, paths: list[tuple[str, str]], clients: int, seconds: float) -> dict:
    """`clients` threads, each looping over the paths (each from its own starting point) for `seconds`."""
    session = log_in(url)
    timings: dict[str, list[float]] = {name: [] for name, _ in paths}
    errors: dict[str, int] = dict.fromkeys(timings, 0)
    sizes: dict[str, int] = {}
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client_loop(number: int) -> None:
        with httpx.Client(base_url=url, timeout=120, cookies=session.cookies, headers=session.headers) as client:
            index = number
            while time.monotonic() < stop:
                name, path = paths[index % len(paths)]
                index += 1
                started = time.perf_counter()
                response = client.get(path)
                elapsed = time.perf_counter() - started
                with lock:
                    if response.status_code == 200:
                        timings[name].append(elapsed)
                        sizes[name] = len(response.content)
                    else:
                        errors[name] += 1

    threads = [threading.Thread(target=client_loop, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    session.close()
    return {"timings": timings, "errors": errors, "sizes": sizes}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def report(label: str, result: dict) -> None:
    print(f"\n{label}")
    print(f"  {'endpoint':<44} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>6} {'body':>9}")
    for name, values in result["timings"].items():
        size = result["sizes"].get(name)
        body = f"{size / 1024:,.0f} KiB" if size is not None else "–"
        if not values:
            print(f"  {name:<44} {0:>8} {'–':>8} {'–':>8} {'–':>8} {result['errors'][name]:>6} {body:>9}")
            continue
        p50, p95, p99 = (percentile(values, p) * 1000 for p in (50, 95, 99))
        print(
            f"  {name:<44} {len(values):>8,} {p50:>8.0f} {p95:>8.0f} {p99:>8.0f} {result['errors'][name]:>6} {body:>9}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="an empty database (default: SQLite in a scratch directory)")
    parser.add_argument("--workers", type=int, default=1, help="web processes (more than one: PostgreSQL)")
    parser.add_argument("--seconds", type=float, default=30, help="per client count")
    parser.add_argument("--clients", default="1,20", help="client counts, comma-separated")
    parser.add_argument(
        "--web-threads", default="4",
        help="REDOLAB_WEB_THREADS, comma-separated to compare several on the same data (e.g. 4,40)",
    )  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redolab-load-") as scratch:
        data_dir = Path(scratch)
        url = args.database_url or f"sqlite:///{data_dir}/redolab.db"
        ids = seed(url, data_dir)
        for threads in (int(t) for t in args.web_threads.split(",")):
            process, base = start_server(url, data_dir, args.workers, threads)
            try:
                paths = endpoints(ids)
                warm = log_in(base)  # first requests of each process: imports, caches
                for _ in range(args.workers * 2):
                    for _, path in paths:
                        warm.get(path)
                warm.close()
                backend = "PostgreSQL" if url.startswith("postgresql") else "SQLite"
                for clients in (int(c) for c in args.clients.split(",")):
                    result = drive(base, paths, clients, args.seconds)
                    report(f"{backend}, {args.workers} web process(es) of {threads} thread(s), {clients} client(s), "
                           f"{args.seconds:.0f} s ({os.cpu_count()} CPUs)", result)  # fmt: skip
            finally:
                process.terminate()
                process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
