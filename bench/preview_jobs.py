#!/usr/bin/env python3
"""A large preview as a job: how long the request holds a page thread, how long the worker takes,
and /healthz meanwhile.

In one process (SQLite, a fresh data directory, the in-process app with a real Worker in a thread):
uploads a generated archived-log CSV of --size-mib through POST /api/v1/.../redo/preview with
REDOLAB_PREVIEW_JOB_BYTES at --threshold-mib, then polls GET .../redo/previews/{job_id} and /healthz
every 50 ms until the preview is done.

    python3 -m uv run python bench/preview_jobs.py [--size-mib 80] [--threshold-mib 64]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402
from redo_import import generate  # noqa: E402
from tests.factories import PASSWORD, make_environment, make_user  # noqa: E402

from redolab.core.config import Settings  # noqa: E402
from redolab.core.db import make_engine, make_sessionmaker  # noqa: E402
from redolab.core.migrate import upgrade  # noqa: E402
from redolab.main import create_app  # noqa: E402
from redolab.worker import Worker  # noqa: E402

MIB = 1024 * 1024
ROW_BYTES = 66


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=float, default=80)
    parser.add_argument("--threshold-mib", type=float, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redolab-bench-") as tmp:
        data = Path(tmp) / "var"
        settings = Settings(
            database_url=f"sqlite:///{data}/redolab.db",
            data_dir=data,
            secret_key=secrets.token_urlsafe(48),
            worker_enabled=False,
            preview_job_bytes=int(args.threshold_mib * MIB),
            _env_file=None,
        )
        data.mkdir(parents=True)
        upgrade(make_engine(settings.database_url))
        app = create_app(settings)
        path = Path(tmp) / "gv_archived_log.csv"
        generate(path, int(args.size_mib * MIB) // ROW_BYTES)
        size = path.stat().st_size
        with TestClient(app) as client:
            with make_sessionmaker(app.state.engine)() as session:
                make_user(session, "alice")
                environment = make_environment(session)
                environment_id = environment.id
            token = client.post("/api/v1/auth/token", data={"username": "alice", "password": PASSWORD}).json()
            client.headers["Authorization"] = f"Bearer {token['access_token']}"
            worker = Worker(make_sessionmaker(app.state.engine), secret_key="bench")
            thread = threading.Thread(target=lambda: asyncio.run(worker.run_forever(0.2)), daemon=True)
            thread.start()
            started = time.monotonic()
            with open(path, "rb") as file:
                answer = client.post(
                    f"/api/v1/environments/{environment_id}/redo/preview", files={"file": (path.name, file, "text/csv")}
                )
            answered = time.monotonic() - started
            health: list[float] = []
            status = answer.json().get("status")
            while answer.status_code == 202 and status in ("queued", "running"):
                probe = time.monotonic()
                client.get("/healthz")
                health.append(time.monotonic() - probe)
                status = client.get(answer.json()["status_url"]).json()["status"]
                time.sleep(0.05)
            done = time.monotonic() - started
            worker.stopping.set()
            thread.join(timeout=5)
    print(f"upload {size / MIB:.1f} MiB, threshold {args.threshold_mib} MiB")
    print(
        f"POST .../redo/preview answered {answer.status_code} in {answered * 1000:.0f} ms (staging the body included)"
    )
    print(f"preview job {status} after {done:.1f} s")
    if health:
        health.sort()
        p95 = health[int(len(health) * 0.95) - 1] if len(health) >= 20 else health[-1]
        print(
            f"/healthz during the job: {len(health)} probes, median {statistics.median(health) * 1000:.1f} ms, "
            f"p95 {p95 * 1000:.1f} ms, max {health[-1] * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
