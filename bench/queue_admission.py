#!/usr/bin/env python3
"""What the fair-queue checks cost with a long queue (issue 33, item 5).

On a fresh migrated SQLite database (or --database-url), with --queued jobs already waiting (spread
over --users users and two host pairs, as in the issue's 2,000-run flood), times:

  admit       the queue lock, the per-user and per-host-pair counts and the insert of one run and its
              job (runs.service.create_run), then a rollback: what each run request adds
  place       the queue position and estimated start of the last job (what the run page and
              GET /api/v1/runs/{id} add while it waits)
  bulk        an admin's bulk cancel of one user's queued runs (one transaction)

    python3 -m uv run python bench/queue_admission.py [--queued 2000] [--users 4] [--repeat 50]

Prints p50/p95/max per operation in milliseconds; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import insert, select
from tests.factories import make_environment, make_host

from redolab.core.db import make_engine, make_sessionmaker
from redolab.core.migrate import upgrade
from redolab.jobs.admission import QueueCaps
from redolab.jobs.models import Job
from redolab.runs.models import Run
from redolab.runs.queueing import place_of
from redolab.runs.schemas import RunCreate
from redolab.runs.service import create_run
from redolab.sweeps.bulk import BulkCancel, bulk_cancel


def figures(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    print(
        f"{name:8} p50 {statistics.median(ordered) * 1000:7.2f} ms   p95 {p95 * 1000:7.2f} ms   "
        f"max {ordered[-1] * 1000:7.2f} ms   ({len(ordered)} samples)"
    )


def fill(session, environment, pairs, queued: int, users: int) -> None:
    """`queued` runs with their jobs, inserted in bulk (as the flood left them)."""
    base = {"environment_id": environment.id, "mode": "async", "conns": 1024, "message_bytes": 1 << 20,
            "duration_seconds": 3600.0, "interval_seconds": 5.0, "requested_by": "", "status": "queued",
            "client_host_name": "p", "server_host_name": "s", "label": "", "notes": "", "tags": []}  # fmt: skip
    rows = []
    for number in range(queued):
        client, server = pairs[number % 2]
        rows.append(
            {**base, "requested_by": f"user{number % users}", "client_host_id": client.id, "server_host_id": server.id}
        )
    session.execute(insert(Run), rows)
    runs = session.execute(select(Run.id, Run.requested_by, Run.client_host_id, Run.server_host_id)).all()
    session.execute(
        insert(Job),
        [
            {
                "kind": "run",
                "run_id": r.id,
                "requested_by": r.requested_by,
                "client_host_id": r.client_host_id,
                "server_host_id": r.server_host_id,
                "planned_seconds": 3610.0,
                "status": "queued",
            }
            for r in runs
        ],
    )
    session.commit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queued", type=int, default=2000)
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    url = args.database_url or f"sqlite:///{Path(tempfile.mkdtemp(prefix='redolab-bench-')) / 'redolab.db'}"
    engine = make_engine(url)
    upgrade(engine)
    sessions = make_sessionmaker(engine)
    with sessions() as session:
        environment = make_environment(session)
        hosts = [
            make_host(session, environment, name=f"h{n}", transport="local", role=role, node_number=n // 2 + 1)
            for n, role in enumerate(("primary", "standby", "primary", "standby"))
        ]
        session.refresh(environment)
        pairs = [(hosts[0], hosts[1]), (hosts[2], hosts[3])]
        fill(session, environment, pairs, args.queued, args.users)
        caps = QueueCaps(per_user=10**6, per_host_pair=10**6)
        run_in = RunCreate(client_host_id=hosts[0].id, server_host_id=hosts[1].id, duration_seconds=60)
        admit, place = [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            run = create_run(session=session, environment=environment, run_in=run_in, requested_by="new", caps=caps)
            admit.append(time.perf_counter() - started)
            started = time.perf_counter()
            found = place_of(session, run_id=run.id)
            place.append(time.perf_counter() - started)
        print(
            f"{args.queued} queued jobs before; the last run waits behind {found.jobs_ahead} on its hosts, "
            f"starting in about {found.seconds_ahead / 86400:.1f} days"
        )
        figures("admit", admit)
        figures("place", place)
        started = time.perf_counter()
        done = bulk_cancel(session=session, selector=BulkCancel(user="user0"))
        print(f"bulk     {time.perf_counter() - started:.2f} s to cancel {done.count} queued runs of one user")


if __name__ == "__main__":
    main()
