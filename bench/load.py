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
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
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

PASSWORD = "bench password 123"  # noqa: S105 (a throwaway user in a throwaway database)
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

    from redolab.auth.service import create_user
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.core.migrate import upgrade
    from redolab.environments.models import HostRole
    from redolab.environments.schemas import EnvironmentCreate, HostCreate
    from redolab.environments.service import create_environment, create_host
    import redolab.models  # noqa: F401  (every table known)
    from redolab.environments.models import Environment
    from redolab.redo import service as redo_service
    from redolab.runs.models import Run, RunEvent, RunStatus, RunSummary
    from redolab.runs.service import summary_values

    sys.path.insert(0, str(ROOT / "bench"))
    from redo_import import generate

    rng = random.Random(20)
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
            record = redo_service.import_file(
                session=session, environment=environment, path=path, filename="year_of_archived_logs.csv",
                imported_by="bench",
            )  # fmt: skip
        span = (record.last_time - record.first_time).days
        print(
            f"imported {record.rows_read:,} archived-log rows ({span} days) in {time.perf_counter() - started:.1f} s"
        )
    engine.dispose()
    return ids


if __name__ == "__main__" and sys.argv[1:2] == ["--seed-only"]:
    directory = Path(sys.argv[2])
    directory.mkdir(parents=True, exist_ok=True)
    print(seed(f"sqlite:///{directory}/redolab.db", directory))
