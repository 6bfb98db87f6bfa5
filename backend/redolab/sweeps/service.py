"""Sweeps: request, list, cancel, and the points, plateau and seed table of their runs."""

from __future__ import annotations

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from redolab.core.config import Settings
from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.environments.models import Environment, Host
from redolab.jobs.admission import RUN_SETUP_SECONDS, QueueCaps, check_sweep_time, current_caps
from redolab.jobs.models import Job
from redolab.remote.kernel import manual_kernel_commands
from redolab.runs.exports import run_documents
from redolab.runs.models import Run, RunStatus
from redolab.runs.queueing import admit, check_local_write_dir, owner_of
from redolab.runs.service import host_in, request_cancel
from redolab.sweeps.grid import PointValue, find_plateau, point_value, seed_table
from redolab.sweeps.models import Sweep, SweepKind
from redolab.sweeps.schemas import SweepCreate, SweepPublic


class KernelChangesNotAllowed(FieldError):
    """A kernel-maximum sweep on hosts an admin has not opened to it: here is how to do it by hand."""

    def __init__(self, hosts: list[str], commands: list[str]) -> None:
        self.commands = commands
        super().__init__(
            "kind",
            f"redolab may not change kernel settings on {' and '.join(hosts)} (an admin allows it per host, "
            "under Hosts > Edit). Run these as root on both hosts instead, each before its test, and put "
            "the original values back at the end: " + "; ".join(commands[1:]),
            status_code=422,
        )


def planned_seconds(sweep_in: SweepCreate) -> float:
    """How long the sweep may hold its hosts: every grid point (a connection sweep may stop earlier)
    x repetitions x (duration + a run's set-up), in seconds."""
    points = len(sweep_in.grid_values()) * (1 if sweep_in.kind is SweepKind.connections else len(sweep_in.conns_values))
    return points * sweep_in.repetitions * (sweep_in.duration_seconds + RUN_SETUP_SECONDS)


def check_sweep(
    *, environment: Environment, sweep_in: SweepCreate, caps: QueueCaps, settings: Settings | None = None
) -> tuple[Host, Host]:
    """The sweep's hosts, once what it asks for is allowed: kernel changes where an admin allowed
    them, its planned time within the cap and its write_dir on "This machine" (422 each)."""
    client = host_in(environment, sweep_in.client_host_id, "client_host_id")
    server = host_in(environment, sweep_in.server_host_id, "server_host_id")
    if sweep_in.kind is SweepKind.kernel_max:
        refused = [host.name for host in dict.fromkeys((client, server)) if not host.allow_kernel_changes]
        if refused:
            raise KernelChangesNotAllowed(refused, manual_kernel_commands(sweep_in.sizes))
    too_long = check_sweep_time(planned_seconds(sweep_in), caps)
    if too_long:
        raise FieldError("repetitions", too_long, 422)
    most_conns = max(sweep_in.grid_values()) if sweep_in.kind is SweepKind.connections else max(sweep_in.conns_values)
    check_local_write_dir(server=server, write_dir=sweep_in.write_dir, conns=most_conns, settings=settings)
    return client, server


def create_sweep(
    *,
    session: Session,
    environment: Environment,
    sweep_in: SweepCreate,
    requested_by: str,
    caps: QueueCaps | None = None,
    settings: Settings | None = None,
) -> Sweep:
    """Store the sweep and queue its job: the worker runs its grid between the two hosts, one
    run after the other, with nothing else on those hosts in between. Refused before anything is
    written (check_sweep; the queue caps of its owner and host pair, 429)."""
    caps = caps or current_caps()
    client, server = check_sweep(environment=environment, sweep_in=sweep_in, caps=caps, settings=settings)
    admit(session, requested_by=requested_by, client=client, server=server, caps=caps)
    sweep = Sweep(
        environment_id=environment.id,
        client_host_id=client.id,
        server_host_id=server.id,
        client_host_name=client.name,
        server_host_name=server.name,
        kind=sweep_in.kind,
        parameters=sweep_in.model_dump(mode="json", include=set(sweep_in.shared_parameters())),
        values=sweep_in.grid_values(),
        conns_values=[] if sweep_in.kind is SweepKind.connections else sweep_in.conns_values,
        repetitions=sweep_in.repetitions,
        threshold_percent=sweep_in.threshold_percent,
        patience=sweep_in.patience,
        label=sweep_in.label,
        notes=sweep_in.notes,
        tags=sweep_in.tags,
        requested_by=requested_by,
    )
    session.add(sweep)
    session.flush()
    session.add(
        Job(
            kind="sweep",
            sweep_id=sweep.id,
            client_host_id=client.id,
            server_host_id=server.id,
            requested_by=owner_of(requested_by),
            planned_seconds=planned_seconds(sweep_in),
        )
    )
    session.commit()
    return sweep


def list_sweeps(*, session: Session, environment: Environment, limit: int = 100, offset: int = 0) -> list[Sweep]:
    """The environment's sweeps, newest first, a page at a time."""
    query = select(Sweep).where(Sweep.environment_id == environment.id).order_by(Sweep.id.desc())
    return list(session.scalars(query.limit(limit).offset(offset)))


def count_sweeps(*, session: Session, environment: Environment) -> int:
    return session.scalar(select(func.count(Sweep.id)).where(Sweep.environment_id == environment.id)) or 0


def get_sweep(*, session: Session, sweep_id: int) -> Sweep:
    return get_or_404(session, Sweep, sweep_id, what="Sweep")


def cancel_sweep(*, session: Session, sweep: Sweep) -> Sweep:
    """Cancel a sweep. Queued: its job goes from queued to cancelled in one conditional update,
    and the sweep with it. Claimed by a worker meanwhile, or running: the cancel is recorded (on
    the sweep and its unfinished runs); the worker sees it when it marks the sweep running (which it
    then never does), or stops the current run within a second and changes no host setting after
    it (kernel values it changed are put back)."""
    if sweep.status.finished:
        return sweep
    if not request_cancel(session=session, model=Sweep, item=sweep, job=Job.sweep_id == sweep.id):
        session.execute(
            update(Run)
            .where(Run.sweep_id == sweep.id, Run.status.in_((RunStatus.queued, RunStatus.running)))
            .values(cancel_requested=True)
        )
    session.commit()
    session.refresh(sweep)
    return sweep


def sweep_grid(sweep: Sweep) -> list[tuple[int, int]]:
    """Every grid point as (swept value, connections), in the order they run. A connection sweep
    may stop before its last point."""
    if sweep.kind is SweepKind.connections:
        return [(conns, conns) for conns in sweep.values]
    return [(size, conns) for size in sweep.values for conns in sweep.conns_values]


def sweep_points(sweep: Sweep) -> list[dict]:
    """Each grid point that has runs: its runs, the rates of the succeeded ones, and its value
    (their median, with their range)."""
    by_point: dict[int, list[Run]] = {}
    for run in sweep.runs:
        by_point.setdefault(run.sweep_point, []).append(run)
    grid = sweep_grid(sweep)
    points = []
    for index, runs in sorted(by_point.items()):
        value, conns = grid[index]
        rates = [run.bytes_per_second for run in runs if run.status is RunStatus.succeeded]
        points.append(
            {"index": index, "value": value, "conns": conns, "runs": runs, "rates": rates, "result": point_value(rates)}
        )
    return points


def connection_plateau(sweep: Sweep, points: list[dict]):
    """The plateau rule over the points measured so far (connection sweeps)."""
    measured = [(p["conns"], p["result"].median) for p in points if p["result"] is not None]
    return find_plateau(measured, threshold_percent=sweep.threshold_percent, patience=sweep.patience)


def buffer_points(points: list[dict]) -> dict[tuple[int, int], PointValue]:
    """(size, connections) -> value, for the seed table and the buffer charts."""
    return {(p["value"], p["conns"]): p["result"] for p in points if p["result"] is not None}


def seed_rows(sweep: Sweep) -> list:
    """Seed 000's table (buffer, single-process, multi-process aggregate, parallelism) from a
    buffer sweep's measured points; empty for connection sweeps."""
    if sweep.kind is SweepKind.connections:
        return []
    return seed_table(buffer_points(sweep_points(sweep)))


def sweep_document(sweep: Sweep, sync: dict[int, dict] | None = None) -> dict:
    """A sweep with its points (median and spread) and every run, in base units."""
    return {
        "sweep": SweepPublic.model_validate(sweep).model_dump(mode="json"),
        "points": [
            {
                "index": p["index"],
                "value": p["value"],
                "conns": p["conns"],
                "median_bytes_per_second": p["result"].median if p["result"] else None,
                "low_bytes_per_second": p["result"].low if p["result"] else None,
                "high_bytes_per_second": p["result"].high if p["result"] else None,
                "repetitions_succeeded": p["result"].count if p["result"] else 0,
                "run_ids": [run.id for run in p["runs"]],
            }
            for p in sweep_points(sweep)
        ],
        "seed_table": [row.__dict__ for row in seed_rows(sweep)],
        "runs": run_documents(sweep.runs, sync or {}),
    }
