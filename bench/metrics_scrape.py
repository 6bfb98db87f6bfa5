#!/usr/bin/env python3
"""The cost of a Prometheus scrape of /metrics (issue 37): 100 environments, 10,000 runs.

Seeds a database as redolab stores it:
  - 100 environments, each a primary and a standby host, a stored redo analysis and a redo import;
  - 10,000 measured runs (100 per environment, one every 7 hours over a month; every fifth in SYNC mode
    with its acknowledgement p99) with their summaries, plus a rehearsal's and failed runs that a scrape
    must leave out;
  - a watch per environment on its host pair (checking every 15 min), each run one of its judged checks,
    and in every tenth environment a second watch of all node pairs with its own checks.
Then times, `--repeat` times each after a warm-up, the exposition (watches.metrics.render_metrics, a
fresh session per scrape) and GET /metrics through the app with FastAPI's TestClient (token, route,
exposition, response), and prints the median and the p95 in milliseconds. Target: under 100 ms.
Prints figures; asserts nothing.

    python3 -m uv run python bench/metrics_scrape.py
    python3 -m uv run python bench/metrics_scrape.py --database-url postgresql+psycopg://.../empty_db
    python3 -m uv run python bench/metrics_scrape.py --environments 100 --runs 10000 --repeat 50
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT / "bench"))

from load import percentile  # noqa: E402  (the benches' one percentile)

TOKEN = "bench-metrics-token"  # a throwaway token for a throwaway database
MB = 1_000_000


def seed(database_url: str, environments: int, runs: int) -> None:
    """Fill the (empty) database in bulk inserts; prints how long it took."""
    from sqlalchemy import insert, select

    import redolab.models  # noqa: F401  (every table known)
    from redolab.core.db import make_engine, make_sessionmaker, utcnow
    from redolab.core.migrate import upgrade
    from redolab.environments.models import Environment, Host
    from redolab.redo.models import RedoImport, StoredAnalysis
    from redolab.rehearsals.models import Rehearsal
    from redolab.runs.models import Run, RunStatus, RunSummary
    from redolab.watches.models import CheckStatus, Verdict, Watch, WatchCheck, WatchState

    rng = random.Random(37)  # noqa: S311  (repeatable bench data, not a secret)
    engine = make_engine(database_url)
    upgrade(engine)
    started, now = time.perf_counter(), utcnow()
    per = runs // environments
    with make_sessionmaker(engine)() as session:
        envs = [
            Environment(name=f"bench {n + 1}", platform="dataguard", transport_mode="ASYNC")
            for n in range(environments)
        ]
        session.add_all(envs)
        session.flush()
        hosts = []
        for n, environment in enumerate(envs):
            hosts.append(
                [
                    Host(
                        environment_id=environment.id,
                        role=role,
                        node_number=1,
                        name=f"{role}-{n + 1}",
                        ssh_address=f"10.1.{n // 250}.{n % 250}",
                        ssh_user="oracle",
                    )
                    for role in ("primary", "standby")
                ]
            )
        session.add_all([h for pair in hosts for h in pair])
        session.flush()
        watches = [
            Watch(
                environment_id=e.id,
                name="pair",
                client_host_id=p.id,
                server_host_id=s.id,
                path_label=f"{p.name} -> {s.name}",
                every_seconds=900,
                state=WatchState.ok,
                requested_by="bench",
            )
            for e, (p, s) in zip(envs, hosts, strict=True)
        ]
        clusters = [
            Watch(
                environment_id=e.id,
                name="cluster",
                all_node_pairs=True,
                path_label="all node pairs (1)",
                every_seconds=3600,
                state=WatchState.at_risk,
                requested_by="bench",
            )
            for e in envs[::10]
        ]
        session.add_all(watches + clusters)
        rehearsal = Rehearsal(
            environment_id=envs[0].id,
            window_kind="worst-60m",
            window_start=now,
            window_end=now,
            message_bytes=MB,
            slot_seconds=0.1,
            schedule_sha256="0" * 64,
            schedule_bytes=MB,
            schedule_seconds=60,
            schedule_text="",
            requested_by="bench",
        )
        session.add(rehearsal)
        session.flush()
        for e in envs:
            peak = rng.uniform(20, 200) * MB
            # the size of the stored summary of a year of archived logs, 4 KiB (the scrape reads three keys)
            profile = [
                {
                    "hour": h,
                    "p50_bytes_per_second": rng.uniform(1, 9) * MB,
                    "p95_bytes_per_second": rng.uniform(9, 20) * MB,
                    "peak_bytes_per_second": rng.uniform(20, 40) * MB,
                }
                for h in range(24)
            ]
            session.add(
                StoredAnalysis(
                    environment_id=e.id,
                    signature="bench",
                    summary={
                        "format": "csv",
                        "rows_read": 196_000,
                        "profile": profile,
                        "peak_bytes_per_second": peak,
                        "required_bytes_per_second": peak * 1.3,
                        "threads": [
                            {"thread": 1, "peak_bytes_per_second": peak, "required_bytes_per_second": peak * 1.3}
                        ],
                    },
                )
            )
            session.add(
                RedoImport(
                    environment_id=e.id,
                    filename="archived_logs.csv",
                    sha256="1" * 64,
                    format="csv",
                    kind="logs",
                    mapping={},
                    rows_read=1,
                    rows_kept=1,
                    dropped={},
                    warnings=[],
                    threads=[1],
                    imported_by="bench",
                    created_at=now - timedelta(days=3),
                )
            )
        checks, run_rows = [], []
        for e, (p, s), watch in zip(envs, hosts, watches, strict=True):
            for i in range(per):
                at = now - timedelta(hours=7 * i, minutes=rng.uniform(0, 60))
                rate = rng.uniform(50, 400) * MB
                checks.append(
                    {
                        "watch_id": watch.id,
                        "at": at,
                        "status": CheckStatus.judged,
                        "verdict": Verdict.ok,
                        "measured_bytes_per_second": rate,
                        "required_bytes_per_second": 100 * MB,
                    }
                )
                run_rows.append(
                    {
                        "environment_id": e.id,
                        "client_host_id": p.id,
                        "server_host_id": s.id,
                        "client_host_name": p.name,
                        "server_host_name": s.name,
                        "mode": "sync" if i % 5 == 0 else "async",
                        "conns": 1,
                        "message_bytes": MB,
                        "duration_seconds": 10,
                        "interval_seconds": 1,
                        "requested_by": "bench",
                        "status": RunStatus.succeeded,
                        "bytes_per_second": rate,
                        "label": "",
                        "tags": [],
                        "created_at": at,
                        "started_at": at,
                        "finished_at": at + timedelta(seconds=10),
                    }
                )
        for cluster in clusters:
            checks += [
                {
                    "watch_id": cluster.id,
                    "at": now - timedelta(hours=h),
                    "status": CheckStatus.judged,
                    "verdict": Verdict.at_risk,
                    "measured_bytes_per_second": 105 * MB,
                    "required_bytes_per_second": 100 * MB,
                }
                for h in range(per)
            ]
        # not measurements: a rehearsal's paced replay and failed runs (the scrape must leave them out)
        extra = [{**run_rows[0], "rehearsal_id": rehearsal.id, "bytes_per_second": MB},
                 {**run_rows[1], "status": RunStatus.failed}]  # fmt: skip
        session.execute(insert(WatchCheck), checks)
        session.execute(insert(Run), run_rows + extra)
        ids = session.scalars(select(Run.id).where(Run.mode == "sync")).all()
        session.execute(
            insert(RunSummary),
            [
                {"run_id": i, "interval_count": 10, "ack_count": 1000, "ack_p99_seconds": rng.uniform(0.001, 0.01)}
                for i in ids
            ],
        )
        others = session.scalars(select(Run.id).where(Run.mode == "async")).all()
        session.execute(insert(RunSummary), [{"run_id": i, "interval_count": 10} for i in others])
        session.commit()
    engine.dispose()
    print(
        f"seeded {environments} environments, {len(run_rows):,} runs, {len(checks):,} watch checks in "
        f"{time.perf_counter() - started:.1f} s"
    )


def timed(call, repeat: int) -> list[float]:
    for _ in range(3):  # warm-up: imports, compiled statements, the database's caches
        call()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return times


def line(label: str, times: list[float]) -> str:
    return (
        f"  {label:<46} median {statistics.median(times) * 1000:7.1f} ms   "
        f"p95 {percentile(times, 95) * 1000:7.1f} ms   ({len(times)} scrapes)"
    )


def measure(database_url: str, data_dir: Path, repeat: int) -> None:
    from fastapi.testclient import TestClient
    from pydantic import SecretStr

    from redolab.core.config import Settings
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.main import create_app
    from redolab.watches.metrics import render_metrics

    engine = make_engine(database_url)
    sessions = make_sessionmaker(engine)

    def exposition() -> bytes:
        with sessions() as session:
            return render_metrics(session=session)

    body = exposition()
    series = sum(1 for text in body.decode().splitlines() if text and not text.startswith("#"))
    exposition_times = timed(exposition, repeat)
    engine.dispose()

    settings = Settings(
        database_url=database_url,
        data_dir=data_dir / "var",
        secret_key="b" * 64,
        worker_enabled=False,
        metrics_token=SecretStr(TOKEN),
        _env_file=None,
    )
    with TestClient(create_app(settings)) as client:
        headers = {"Authorization": f"Bearer {TOKEN}"}

        def scrape() -> None:
            response = client.get("/metrics", headers=headers)
            if response.status_code != 200:
                raise RuntimeError(f"/metrics answered {response.status_code}: {response.text[:200]}")

        route_times = timed(scrape, repeat)
    backend = "PostgreSQL" if database_url.startswith("postgresql") else "SQLite"
    print(f"\n{backend}: {series:,} series, {len(body) / 1024:,.0f} KiB per scrape ({os.cpu_count()} CPUs)")
    print(line("exposition (render_metrics)", exposition_times))
    print(line("GET /metrics (TestClient: token, route, body)", route_times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="also an empty PostgreSQL database (migrated and seeded here)")
    parser.add_argument("--environments", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10_000, help="measured runs in all")
    parser.add_argument("--repeat", type=int, default=50, help="scrapes timed per figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redolab-metrics-") as scratch:
        data_dir = Path(scratch)
        urls = [f"sqlite:///{data_dir}/redolab.db", *([args.database_url] if args.database_url else [])]
        for url in urls:
            seed(url, args.environments, args.runs)
            measure(url, data_dir, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
