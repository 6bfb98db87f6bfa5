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

With --watches (issue 37: a watch every few minutes makes 10,000 runs a month), another database:
  - two environments (a primary and a standby host each), each with a watch on its host pair and
    12 weeks of archived logs (two RAC threads, ending yesterday) imported through redolab's importer;
  - in one, 10,000 checks one every 4.3 min (a month), each judged on one 10-second run (its events and
    summary, as above) against the stored requirement: mostly OK, some stretches AT RISK or FAILING;
    in the other the last 300 of the same;
then one client loops over the environment page, the watch page and the plan report page of one
environment for --seconds (default 20), then of the other, and prints p50/p95/p99 per page beside the
runs, and whether p95 is under 50 ms.

    python3 bench/load.py --watches                         # about 3 minutes on 2 CPUs
    python3 bench/load.py --watches --watch-runs 10000,1000,300 --seconds 30
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
        [
            str(probe),
            "client",
            "127.0.0.1",
            "--json",
            "--port",
            str(port),
            "--mode",
            "sync",
            "--conns",
            "2",
            "--message-size",
            "64K",
            "--duration",
            "2",
            "--interval",
            "1",
            "--rate",
            "400M",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    server.wait(timeout=10)
    return [json.loads(line) for line in client.stdout.splitlines() if line.strip()]


def _line(event: str, data: dict) -> str:
    return json.dumps({"event": event, "data": data}, separators=(",", ":"))


def run_events(templates: list[dict], intervals: int, rng: random.Random, scale: float = 1.0) -> list[tuple[str, str]]:
    """(event, line) for one run: the start, `intervals` intervals varied around the template (its bytes
    times `scale`), the end."""
    start = next(e["data"] for e in templates if e["event"] == "start")
    interval = next(e["data"] for e in templates if e["event"] == "interval")
    end = next(e["data"] for e in templates if e["event"] == "end")
    out = [("start", _line("start", start))]
    total = 0
    for i in range(intervals):
        factor = scale * rng.uniform(0.6, 1.2)
        streams = [
            {**s, "bytes": int(s["bytes"] * factor), "rtt_us": max(1, int(s["rtt_us"] * rng.uniform(0.7, 1.5)))}
            for s in interval["streams"]
        ]
        got = sum(s["bytes"] for s in streams)
        total += got
        data = {**interval, "start_seconds": float(i), "end_seconds": float(i + 1), "streams": streams,
                "bytes": got, "bytes_per_second": float(got)}  # fmt: skip
        out.append(("interval", _line("interval", data)))
    out.append(
        (
            "end",
            _line(
                "end",
                {
                    **end,
                    "seconds": float(intervals),
                    "bytes_sent": total,
                    "bytes_received": total,
                    "bytes_per_second": total / intervals,
                },
            ),
        )
    )
    return out


def store_run(session, run, events: list[tuple[str, str]]):
    """Add the run, its client events and its stored summary (as the worker leaves a run that ended)."""
    from sqlalchemy import insert

    from redolab.runs.models import RunEvent, RunSummary
    from redolab.runs.service import summary_values

    session.add(run)
    session.flush()
    session.execute(
        insert(RunEvent),
        [
            {"run_id": run.id, "seq": seq, "role": "client", "event": event, "line": line}
            for seq, (event, line) in enumerate(events)
        ],
    )
    summary = RunSummary(**summary_values(run, [line for event, line in events if event in ("interval", "end")]))
    session.add(summary)
    return summary


def seed(database_url: str, data_dir: Path) -> dict:
    """Fill the database; returns what the clients need (ids)."""
    import redolab.models  # noqa: F401  (every table known)
    from redolab.auth.service import create_user
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.core.migrate import upgrade
    from redolab.environments.models import Environment, HostRole
    from redolab.environments.schemas import EnvironmentCreate, HostCreate
    from redolab.environments.service import create_environment, create_host
    from redolab.redo.imports import import_now
    from redolab.runs.models import Run, RunStatus

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
                create_host(
                    session=session,
                    environment=environment,
                    host_in=HostCreate(
                        role=role,
                        name=f"{role.value}-{number + 1}",
                        ssh_address=f"10.0.{number}.{i + 1}",
                        ssh_user="oracle",
                    ),
                )
                for i, role in enumerate((HostRole.primary, HostRole.standby))
            ]
            ids["environments"].append(environment.id)
            for index in range(RUNS // ENVIRONMENTS):
                long = number == 0 and index == 0
                count = LONG_INTERVALS if long else INTERVALS
                events = run_events(templates, count, rng)
                end = json.loads(events[-1][1])["data"]
                moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=index * 17 + number)
                run = Run(
                    environment_id=environment.id,
                    client_host_id=hosts[0].id,
                    server_host_id=hosts[1].id,
                    client_host_name=hosts[0].name,
                    server_host_name=hosts[1].name,
                    mode="sync",
                    conns=rng.choice((1, 2, 4, 8)),
                    message_bytes=65536,
                    sockbuf_bytes=rng.choice((None, 4 << 20)),
                    duration_seconds=float(count),
                    interval_seconds=1.0,
                    status=RunStatus.succeeded,
                    requested_by="bench",
                    created_at=moment,
                    started_at=moment,
                    finished_at=moment + timedelta(seconds=count),
                    seconds=end["seconds"],
                    bytes_sent=end["bytes_sent"],
                    bytes_received=end["bytes_received"],
                    bytes_per_second=end["bytes_per_second"],
                    retransmits=0,
                    label=f"bench {index}",
                    tags=["bench"] if index % 7 else ["bench", "mtu9000"],
                    client_settings={"mtu_bytes": 9000 if index % 7 == 0 else 1500},
                )
                store_run(session, run, events)
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
                session=session,
                environment=environment,
                path=path,
                filename="year_of_archived_logs.csv",
                imported_by="bench",
            )
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
    database_url: str, data_dir: Path, workers: int = 1, threads: int | None = None, log: Path | None = None
) -> tuple[subprocess.Popen, str]:
    """`redolab serve` without its worker on a free port (threads: REDOLAB_WEB_THREADS, None for the
    default), once /healthz answers: (the process, its URL). Shared by the benches that need a server.
    log: where its output goes (uvicorn's access lines and the traceback of every server error)."""
    from tests.services import REDOLAB, free_port, redolab_env

    port = free_port()
    extra = {"REDOLAB_WEB_THREADS": str(threads)} if threads is not None else {}
    env = redolab_env(data_dir, REDOLAB_DATABASE_URL=database_url, REDOLAB_WORKER_ENABLED="false", **extra)
    output = log.open("ab") if log is not None else subprocess.DEVNULL
    process = subprocess.Popen(
        [str(REDOLAB), "serve", "--port", str(port), "--workers", str(workers)],
        env=env,
        cwd=data_dir,
        stdout=output,
        stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
    )
    if log is not None:
        output.close()  # the server holds its own copy
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
        "/login",
        data={"username": "bench", "password": PASSWORD},
        headers={"X-CSRFToken": client.cookies["csrftoken"], "Origin": url},
    )
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


# -- --watches: a month of a watch's checks in one environment, beside 300 in another ----------------
WATCH_RUNS = "10000,300"  # checks (one run each) per environment, comma-separated
WATCH_EVERY = 30 * 86_400 / 10_000  # seconds between checks: 10,000 a month
WATCH_INTERVALS = 10  # a watch's short run: 10 s in 1 s intervals
HISTORY_DAYS = 84  # archived logs per environment: 12 weeks, so the forecast has its 8 whole weeks
TARGET_MS = 50


def recent_history(path: Path, days: int) -> int:
    """redo_import.generate's archived logs (two threads, a log every 4-6 min), about `days` of them,
    moved to end before today (the generator starts in 2022). Returns the rows written."""
    sys.path.insert(0, str(ROOT / "bench"))
    from redo_import import generate

    rows = int(days * 86_400 / 300 * 2 * 1.02)  # two threads, 5 min on average, every 50th log twice
    generate(path, rows)
    text = path.read_text().splitlines()
    form = "%d-%b-%y %H:%M:%S"
    last = max(datetime.strptime(line.split(",")[6], form) for line in text[1:])
    today = datetime.now(UTC).replace(tzinfo=None, hour=0, minute=0, second=0, microsecond=0)
    shift = today - timedelta(hours=1) - last
    out = [text[0]]
    for line in text[1:]:
        cells = line.split(",")
        for i in (5, 6):
            cells[i] = f"{datetime.strptime(cells[i], form) + shift:{form}}"
        out.append(",".join(cells))
    path.write_text("\n".join(out) + "\n")
    return len(out) - 1


def check_factors(count: int, rng: random.Random) -> list[float]:
    """Measured / required for each check, oldest first: mostly well over (OK); now and then a check
    just over (AT RISK, under the 10 % margin); and stretches of 2 to 6 checks under it (FAILING), so
    the watch changes state now and then as M of N checks agree."""
    factors, failing = [], 0
    for _ in range(count):
        if failing == 0 and rng.random() < 0.01:
            failing = rng.randint(2, 6)
        if failing:
            failing -= 1
            factors.append(rng.uniform(0.5, 0.95))
        elif rng.random() < 0.03:
            factors.append(rng.uniform(1.01, 1.09))
        else:
            factors.append(rng.uniform(1.3, 3.0))
    return factors


def seed_watches(database_url: str, sizes: list[int], history_days: int) -> list[dict]:
    """Fill the database with one environment per size: hosts, a watch, `history_days` of archived logs,
    and `size` judged checks of one run each, the newest a minute ago. Returns, per environment, the
    ids the client needs and the counts."""
    import redolab.models  # noqa: F401  (every table known)
    from redolab.auth.service import create_user
    from redolab.core.db import make_engine, make_sessionmaker, utcnow
    from redolab.core.migrate import upgrade
    from redolab.environments.models import HostRole
    from redolab.environments.schemas import EnvironmentCreate, HostCreate
    from redolab.environments.service import create_environment, create_host
    from redolab.redo.imports import import_now
    from redolab.runs.models import Run, RunStatus
    from redolab.watches.judge import state_history, verdict_of
    from redolab.watches.models import CheckStatus, Watch, WatchCheck, WatchState
    from redolab.watches.service import requirement_now

    rng = random.Random(37)  # noqa: S311  (repeatable bench data, not a secret)
    templates = probe_lines()
    # what one interval of run_events carries at scale 1, on average (its variation averages 0.9)
    template_rate = 0.9 * sum(
        s["bytes"] for s in next(e["data"] for e in templates if e["event"] == "interval")["streams"]
    )
    engine = make_engine(database_url)
    upgrade(engine)
    sessions = make_sessionmaker(engine)
    out = []
    with sessions() as session, tempfile.TemporaryDirectory() as scratch:
        create_user(session=session, username="bench", password=PASSWORD)
        history = Path(scratch) / "archived_logs.csv"
        rows = recent_history(history, history_days)
        for number, size in enumerate(sizes):
            started = time.perf_counter()
            environment = create_environment(session=session, env_in=EnvironmentCreate(name=f"watched {size:,} runs"))
            primary, standby = (
                create_host(
                    session=session,
                    environment=environment,
                    host_in=HostCreate(
                        role=role,
                        name=f"{role.value}-w{number + 1}",
                        ssh_address=f"10.9.{number}.{i + 1}",
                        ssh_user="oracle",
                    ),
                )
                for i, role in enumerate((HostRole.primary, HostRole.standby))
            )
            import_now(
                session=session,
                environment=environment,
                path=history,
                filename=f"{history_days}_days_of_archived_logs.csv",
                imported_by="bench",
            )
            imported = time.perf_counter() - started
            now = utcnow()
            watch = Watch(
                environment_id=environment.id,
                name="primary to standby",
                client_host_id=primary.id,
                server_host_id=standby.id,
                path_label=f"{primary.name} -> {standby.name}",
                every_seconds=WATCH_EVERY,
                duration_seconds=float(WATCH_INTERVALS),
                requested_by="bench",
                created_at=now - timedelta(seconds=WATCH_EVERY * size + 60),
                next_at=now + timedelta(seconds=WATCH_EVERY - 60),
            )
            session.add(watch)
            session.flush()
            required = requirement_now(session, environment, watch)
            if required is None:
                raise RuntimeError("the imported history gave no requirement")
            by = f"bench (watch #{watch.id})"
            verdicts, moments = [], []
            for index, factor in enumerate(check_factors(size, rng)):
                at = now - timedelta(seconds=60 + WATCH_EVERY * (size - 1 - index))
                events = run_events(
                    templates, WATCH_INTERVALS, rng, scale=factor * required.bytes_per_second / template_rate
                )
                end = json.loads(events[-1][1])["data"]
                check = WatchCheck(watch_id=watch.id, at=at, status=CheckStatus.judged, run_ids=[])
                session.add(check)
                session.flush()
                run = Run(
                    environment_id=environment.id,
                    client_host_id=primary.id,
                    server_host_id=standby.id,
                    client_host_name=primary.name,
                    server_host_name=standby.name,
                    mode="async",
                    conns=1,
                    message_bytes=watch.message_bytes,
                    duration_seconds=float(WATCH_INTERVALS),
                    interval_seconds=1.0,
                    status=RunStatus.succeeded,
                    requested_by=by,
                    label=f"watch {watch.name}",
                    tags=[],
                    created_at=at,
                    started_at=at,
                    finished_at=at + timedelta(seconds=WATCH_INTERVALS),
                    seconds=end["seconds"],
                    bytes_sent=end["bytes_sent"],
                    bytes_received=end["bytes_received"],
                    bytes_per_second=end["bytes_per_second"],
                    retransmits=0,
                    watch_check_id=check.id,
                    client_settings={"mtu_bytes": 1500},
                )
                summary = store_run(session, run, events)
                verdict = verdict_of(run.bytes_per_second, required.bytes_per_second, watch.margin_ratio)
                check.run_ids = [run.id]
                check.verdict = verdict
                check.measured_bytes_per_second = run.bytes_per_second
                check.required_bytes_per_second = required.bytes_per_second
                check.required_basis = required.basis[:300]
                check.sync_p99_seconds = summary.ack_p99_seconds
                verdicts.append(verdict)
                moments.append(at)
                if index % 500 == 499:
                    session.commit()
            states = state_history(verdicts, agree_m=watch.agree_m, of_n=watch.of_n)
            changes = [i for i in range(len(states)) if states[i] is not (states[i - 1] if i else WatchState.unknown)]
            watch.state = states[-1] if states else WatchState.unknown
            watch.transitions = len(changes)
            watch.state_since = moments[changes[-1]] if changes else watch.created_at
            session.commit()
            tally = {v.value: verdicts.count(v) for v in dict.fromkeys(verdicts)}
            print(
                f"environment {environment.id}: {rows:,} archived-log rows ({history_days} days) imported in "
                f"{imported:.1f} s; {size:,} checks and runs ({tally}; watch {watch.state.value} after "
                f"{watch.transitions} changes) in {time.perf_counter() - started - imported:.1f} s"
            )
            out.append({"runs": size, "environment": environment.id, "watch": watch.id})
    engine.dispose()
    return out


def watch_pages(seeded: dict) -> list[tuple[str, str]]:
    environment = seeded["environment"]
    return [
        ("environment page", f"/environments/{environment}"),
        ("watch page", f"/watches/{seeded['watch']}"),
        ("plan report page", f"/environments/{environment}/plan/report"),
    ]


def run_watches(args) -> int:
    """--watches: seed, serve, and one client over each environment's pages in turn."""
    sizes = [int(n) for n in args.watch_runs.split(",")]
    seconds = args.seconds if args.seconds is not None else 20
    threads = int(args.web_threads.split(",")[0])
    with tempfile.TemporaryDirectory(prefix="redolab-load-") as scratch:
        data_dir = Path(scratch)
        url = args.database_url or f"sqlite:///{data_dir}/redolab.db"
        seeded = seed_watches(url, sizes, args.history_days)
        process, base = start_server(url, data_dir, args.workers, threads)
        try:
            warm = log_in(base)  # first requests of each process: imports, caches
            for environment in seeded:
                for _ in range(args.workers * 2):
                    for name, path in watch_pages(environment):
                        response = warm.get(path)
                        if response.status_code != 200:
                            raise RuntimeError(f"{name} {path}: {response.status_code} {response.text[:300]}")
            warm.close()
            results = [drive(base, watch_pages(environment), 1, seconds) for environment in seeded]
        finally:
            process.terminate()
            process.wait(timeout=30)
    backend = "PostgreSQL" if url.startswith("postgresql") else "SQLite"
    print(
        f"\n{backend}, {args.workers} web process(es) of {threads} thread(s), 1 client, {seconds:.0f} s per "
        f"environment's pages ({os.cpu_count()} CPUs)"
    )
    print(
        f"  {'page':<18} {'runs':>7} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>6} "
        f"{'body':>9}  p95 < {TARGET_MS} ms"
    )
    for name, _ in watch_pages(seeded[0]):
        for environment, result in zip(seeded, results, strict=True):
            values, errors = result["timings"][name], result["errors"][name]
            size = result["sizes"].get(name)
            body = f"{size / 1024:,.0f} KiB" if size is not None else "–"
            if not values:
                print(
                    f"  {name:<18} {environment['runs']:>7,} {0:>8} {'–':>8} {'–':>8} {'–':>8} {errors:>6} {body:>9}  –"
                )
                continue
            p50, p95, p99 = (percentile(values, p) * 1000 for p in (50, 95, 99))
            verdict = "yes" if p95 < TARGET_MS and not errors else "NO"
            print(
                f"  {name:<18} {environment['runs']:>7,} {len(values):>8,} {p50:>8.1f} {p95:>8.1f} {p99:>8.1f} "
                f"{errors:>6} {body:>9}  {verdict}"
            )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="an empty database (default: SQLite in a scratch directory)")
    parser.add_argument("--workers", type=int, default=1, help="web processes (more than one: PostgreSQL)")
    parser.add_argument(
        "--seconds",
        type=float,
        help="per client count (default 30); with --watches per environment's pages (default 20)",
    )
    parser.add_argument("--clients", default="1,20", help="client counts, comma-separated")
    parser.add_argument(
        "--web-threads",
        default="4",
        help="REDOLAB_WEB_THREADS, comma-separated to compare several on the same data (e.g. 4,40)",
    )
    parser.add_argument("--watches", action="store_true", help="the watch bench instead (see above)")
    parser.add_argument(
        "--watch-runs",
        default=WATCH_RUNS,
        help=f"with --watches: checks (one run each) per environment, comma-separated (default {WATCH_RUNS})",
    )
    parser.add_argument(
        "--history-days",
        type=int,
        default=HISTORY_DAYS,
        help=f"with --watches: days of archived logs per environment (default {HISTORY_DAYS})",
    )
    args = parser.parse_args()
    if args.watches:
        return run_watches(args)
    args.seconds = 30 if args.seconds is None else args.seconds
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
                    report(
                        f"{backend}, {args.workers} web process(es) of {threads} thread(s), {clients} client(s), "
                        f"{args.seconds:.0f} s ({os.cpu_count()} CPUs)",
                        result,
                    )
            finally:
                process.terminate()
                process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
