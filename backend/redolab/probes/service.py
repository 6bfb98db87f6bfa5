"""Runs: request, list, cancel. The worker executes them (jobs/worker.py)."""

from __future__ import annotations

import json

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.db import utcnow
from redolab.core.errors import FieldError, NotFound
from redolab.environments.models import Environment, Host
from redolab.jobs.models import Job, JobStatus
from redolab.probes.models import Run, RunEvent, RunStatus
from redolab.probes.schemas import RunCreate


def _host_in(environment: Environment, host_id: int, field: str) -> Host:
    for host in environment.hosts:
        if host.id == host_id:
            return host
    raise FieldError(field, f"Host {host_id} is not a host of environment '{environment.name}'.")


def create_run(*, session: Session, environment: Environment, run_in: RunCreate, requested_by: str) -> Run:
    """Store the run and queue its job; the worker picks it up when both hosts are free."""
    client = _host_in(environment, run_in.client_host_id, "client_host_id")
    server = _host_in(environment, run_in.server_host_id, "server_host_id")
    run = Run(
        environment_id=environment.id,
        client_host_name=client.name,
        server_host_name=server.name,
        requested_by=requested_by,
        **run_in.model_dump(),
    )
    session.add(run)
    session.flush()
    session.add(Job(run_id=run.id, client_host_id=client.id, server_host_id=server.id))
    session.commit()
    return run


def list_runs(*, session: Session, environment: Environment, limit: int = 200) -> list[Run]:
    query = select(Run).where(Run.environment_id == environment.id).order_by(Run.id.desc()).limit(limit)
    return list(session.scalars(query))


def get_run(*, session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise NotFound(f"Run {run_id} does not exist.")
    return run


def run_lines(*, session: Session, run: Run, role: str | None = None) -> list[str]:
    query = select(RunEvent.line).where(RunEvent.run_id == run.id).order_by(RunEvent.seq)
    if role:
        query = query.where(RunEvent.role == role)
    return list(session.scalars(query))


def run_events(*, session: Session, run: Run) -> list[dict]:
    query = select(RunEvent).where(RunEvent.run_id == run.id).order_by(RunEvent.seq)
    return [
        {"seq": e.seq, "role": e.role, "event": e.event, "data": json.loads(e.line).get("data", {})}
        for e in session.scalars(query)
    ]


def cancel_run(*, session: Session, run: Run) -> Run:
    """A queued run is cancelled at once; a running one is stopped by its worker within a second."""
    if run.status is RunStatus.queued:
        run.status = RunStatus.cancelled
        run.failure_reason = "cancelled by the user before it started"
        run.finished_at = utcnow()
        for job in session.scalars(select(Job).where(Job.run_id == run.id, Job.status == JobStatus.queued)):
            job.status = JobStatus.failed
            job.finished_at = utcnow()
    elif run.status is RunStatus.running:
        run.cancel_requested = True
    session.commit()
    return run


def queue_position(*, session: Session, run: Run) -> int | None:
    """How many queued jobs are ahead of this run (None when it is not queued)."""
    if run.status is not RunStatus.queued:
        return None
    job_id = session.scalar(select(Job.id).where(Job.run_id == run.id))
    ahead = session.scalars(select(Job.id).where(Job.status == JobStatus.queued, Job.id < job_id))
    return len(list(ahead))
