#!/usr/bin/env python3
"""Hostile uploads against a real server (issue 32, item 7): can one upload stall the others?

Starts `redolab serve` on a fresh SQLite database (one operator, one environment with a primary and
a standby "This machine" host), logs in as a browser does, then sends one hostile upload of each kind
through the redo preview route (POST /environments/{id}/redo/preview; the result files through
/environments/{id}/runs/import) while a second client polls /healthz every 20 ms. Prints, per upload,
its size, the answer's status and time, and /healthz p50/p95/max meanwhile. Asserts nothing.

Targets: each hostile upload answers within a second; /healthz stays under 100 ms meanwhile.

    python3 -m uv run python bench/hostile_uploads.py [--size 60000] [--only awr]
"""

from __future__ import annotations

import argparse
import gzip
import io
import statistics
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT))

import httpx2 as httpx  # noqa: E402  (the maintained httpx fork starlette uses)
from bench.load import start_server  # noqa: E402

PASSWORD = "hostile bench password 1"  # a throwaway user in a throwaway database
AWR_HEAD = "WORKLOAD REPOSITORY report\nBegin Snap:   100 01-Jan-24 10:00:00\nEnd Snap:   101 01-Jan-24 11:00:00\n"
CSV_HEAD = (
    "THREAD#,SEQUENCE#,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE\n1,10,2024-01-01 10:00:00,2024-01-01 10:10:00,1,512\n"
)
ORATCPTEST_HEAD = "[Requesting a test]\n\tMessage payload        = 1 Mbyte\n(10:00:00) The server is ready.\n"
# a whole oratcptest test: a huge number in its last lines is read only after every other line
ORATCPTEST_ASYNC = (ROOT / "tests" / "runs" / "data" / "oratcptest_async.txt").read_text()


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method, compresslevel=9) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def hostile(size: int) -> list[tuple[str, str, str, bytes]]:
    """(kind, route, file name, bytes): each kind the live review and tests/security/test_linear_readers.py use,
    and the oratcptest field of fuzz seed 3201 (input 2920) that answered 500."""
    blank_awr = (AWR_HEAD + "\n" * size).encode()
    return [
        ("AWR text of blank lines", "redo", "awr.txt", blank_awr),
        ("AWR text, a line of spaces", "redo", "awr.txt", (AWR_HEAD + " " * size + "x\n").encode()),
        (
            "AWR HTML of unclosed tags <a<a<a",
            "redo",
            "awr.html",
            ("<html>WORKLOAD REPOSITORY report" + "<a" * (size // 2)).encode(),
        ),
        ("CSV line of dashes", "redo", "a.csv", (CSV_HEAD + "-" * size + "x\n").encode()),
        ("CSV line of dashes and spaces", "redo", "a.csv", (CSV_HEAD + "- " * (size // 2) + "x\n").encode()),
        ("CSV line of dashes and commas", "redo", "a.csv", (CSV_HEAD + "-," * (size // 2) + "x\n").encode()),
        ("CSV line of separators |", "redo", "a.csv", (CSV_HEAD + "|" * size + "\n").encode()),
        ("CSV line of quotes", "redo", "a.csv", (CSV_HEAD + '"' * size + "\n").encode()),
        ("CSV line of digits", "redo", "a.csv", (CSV_HEAD + "7" * size + "\n").encode()),
        ("SQL*Plus dashes and spaces", "redo", "a.lst", ("A   B\n--- ---\n" + "- " * (size // 2) + "x\n").encode()),
        ("the 264-byte zip (AWR blank lines)", "redo", "a.zip", _zip({"r.txt": blank_awr})),
        (
            "zip, bzip2 member of 16 MiB blank lines",
            "redo",
            "b.zip",
            _zip({"r.txt": (AWR_HEAD + "\n" * (16 << 20)).encode()}, zipfile.ZIP_BZIP2),
        ),
        ("zip of 499 members", "redo", "m.zip", _zip({f"m{i}.csv": b"A,B\n" + b"- " * 64 for i in range(499)})),
        ("gzip of AWR blank lines", "redo", "awr.txt.gz", gzip.compress(blank_awr)),
        ("oratcptest, spaces", "runs", "o.txt", (ORATCPTEST_HEAD + " " * size + "x\n").encode()),
        ("oratcptest, newlines", "runs", "o.txt", (ORATCPTEST_HEAD + "\n" * size + "x\n").encode()),
        ("oratcptest, clocks", "runs", "o.txt", (ORATCPTEST_HEAD + "(10:00:00) " * (size // 11)).encode()),
        ("iperf3 JSON, spaces", "runs", "i.json", ("{" + " " * size + "}").encode()),
        (
            "oratcptest, a number of 133,038 digits",
            "runs",
            "o.txt",
            ORATCPTEST_ASYNC.replace(
                "Socket send buffer = 4194304", "Socket send buffer =" + "9" * 133_038 + " 4194304"
            ).encode(),
        ),
    ]


def seed(database_url: str) -> tuple[int, int, int]:
    """A user, an environment and its two local hosts; (environment, primary, standby) ids."""
    from redolab.auth.service import create_user
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.core.migrate import upgrade
    from redolab.environments.models import HostRole
    from redolab.environments.schemas import EnvironmentCreate, HostCreate
    from redolab.environments.service import create_environment, create_host

    engine = make_engine(database_url)
    upgrade(engine)
    with make_sessionmaker(engine)() as session:
        create_user(session=session, username="bench", password=PASSWORD)
        environment = create_environment(session=session, env_in=EnvironmentCreate(name="hostile"))
        hosts = [
            create_host(
                session=session,
                environment=environment,
                host_in=HostCreate(
                    role=role, name=role.value, transport="local", ssh_address="localhost", ssh_user="oracle"
                ),
            )
            for role in (HostRole.primary, HostRole.standby)
        ]
        ids = environment.id, hosts[0].id, hosts[1].id
    engine.dispose()
    return ids


def log_in(url: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=300)
    client.get("/login")
    response = client.post(
        "/login",
        data={"username": "bench", "password": PASSWORD},
        headers={"X-CSRFToken": client.cookies["csrftoken"], "Origin": url},
    )
    if response.status_code != 303:
        raise RuntimeError(f"login failed: {response.status_code} {response.text[:200]}")
    client.headers.update({"X-CSRFToken": client.cookies["csrftoken"], "Origin": url})
    return client


def while_polling(url: str, action: Callable[[], object]) -> tuple[object, float, list[float]]:
    """(action's result, its wall seconds, /healthz answer times meanwhile), polling every 20 ms."""
    times: list[float] = []
    done = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            while not done.is_set():
                started = time.perf_counter()
                try:
                    client.get("/healthz")
                    times.append(time.perf_counter() - started)
                except httpx.HTTPError:
                    times.append(float("inf"))
                done.wait(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(0.1)  # a few polls before the upload
    started = time.perf_counter()
    result = action()
    elapsed = time.perf_counter() - started
    time.sleep(0.1)
    done.set()
    poller.join()
    return result, elapsed, times


def send(client: httpx.Client, route: str, ids: tuple[int, int, int], name: str, data: bytes) -> httpx.Response:
    environment, primary, standby = ids
    if route == "redo":
        return client.post(
            f"/environments/{environment}/redo/preview", data={"format": "auto"}, files={"file": (name, data)}
        )
    return client.post(
        f"/environments/{environment}/runs/import",
        data={"client_host_id": str(primary), "server_host_id": str(standby), "test_date": "2026-03-04"},
        files=[("files", (name, data, "application/octet-stream"))],
    )


def _ms(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=60_000, help="characters in each hostile run (default 60,000)")
    parser.add_argument("--only", default="", help="only the kinds whose name contains this text")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redolab-hostile-") as scratch:
        data_dir = Path(scratch)
        database_url = f"sqlite:///{data_dir}/redolab.db"
        ids = seed(database_url)
        process, url = start_server(database_url, data_dir)
        try:
            client = log_in(url)
            for route, name, data in (("redo", "warm.csv", CSV_HEAD.encode()), ("runs", "warm.txt", b"x")):
                send(client, route, ids, name, data)  # the first request of each route loads its modules
            print(f"{'upload':42} {'bytes':>10} {'status':>6} {'answer':>9}   /healthz meanwhile: p50 / p95 / max (n)")
            for kind, route, name, data in hostile(args.size):
                if args.only.lower() not in kind.lower():
                    continue
                response, elapsed, polls = while_polling(
                    url, lambda r=route, n=name, d=data: send(client, r, ids, n, d)
                )
                verdict = "" if elapsed < 1 and _ms(polls, 100) < 100 else "  <- over target"
                print(
                    f"{kind:42} {len(data):>10,} {response.status_code:>6} {elapsed * 1000:>7.0f} ms   "
                    f"{_ms(polls, 50):.1f} / {_ms(polls, 95):.1f} / {_ms(polls, 100):.1f} ms ({len(polls)}){verdict}",
                    flush=True,
                )
            print(
                f"median /healthz before any upload: {statistics.median(while_polling(url, lambda: None)[2]) * 1000:.1f} ms"
            )
        finally:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
