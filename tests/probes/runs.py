"""Helpers to request a run and execute it the way the worker does."""

from __future__ import annotations

import asyncio

from redolab.core.db import make_sessionmaker
from redolab.jobs.worker import Worker
from redolab.probes import service
from redolab.probes.models import Run
from redolab.probes.schemas import RunCreate


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
