"""Helpers to request a run and execute it the way the worker does."""

from __future__ import annotations

import asyncio

from redolab.core.db import make_sessionmaker
from redolab.runs import service
from redolab.runs.models import Run
from redolab.runs.schemas import RunCreate
from redolab.worker import Worker


def request_run(session, environment, client, server, **fields) -> Run:
    values = {
        "client_host_id": client.id,
        "server_host_id": server.id,
        "duration_seconds": 2,
        "interval_seconds": 0.5,
        **fields,
    }
    return service.create_run(
        session=session, environment=environment, run_in=RunCreate(**values), requested_by="alice"
    )


def execute_next(engine, secret_key: str) -> bool:
    """Claim and run the next job with a real Worker; True when a job ran."""
    worker = Worker(make_sessionmaker(engine), secret_key=secret_key)
    return asyncio.run(worker.run_once())


def reload(session, run: Run) -> Run:
    session.expire_all()
    return session.get(Run, run.id)


def execute_in_background(engine, secret_key: str):
    """Run the next job in a thread (the test thread plays the user or the failure)."""
    import threading

    thread = threading.Thread(target=execute_next, args=(engine, secret_key), daemon=True)
    thread.start()
    return thread


def wait_for_intervals(session, run: Run, count: int = 1, timeout: float = 30) -> None:
    import time

    from sqlalchemy import func, select

    from redolab.runs.models import RunEvent

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session.expire_all()
        seen = session.scalar(
            select(func.count()).where(
                RunEvent.run_id == run.id, RunEvent.role == "client", RunEvent.event == "interval"
            )
        )
        if seen >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"run {run.id} produced no interval within {timeout} s: {reload(session, run).failure_reason}")


def descendants(pid: int) -> list[int]:
    """All processes below `pid` (from /proc), e.g. the sshd sessions of the test server."""
    from pathlib import Path

    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
