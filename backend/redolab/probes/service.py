"""Runs: request, list, cancel. The worker executes them (jobs/worker.py)."""

from __future__ import annotations

import json
from dataclasses import asdict

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from redolab.core.db import utcnow
from redolab.core.errors import FieldError, NotFound
from redolab.core.units import format_bytes
from redolab.environments.models import Environment, Host
from redolab.jobs.models import Job, JobStatus
from redolab.probes.imports import ImportedRun, ResultFileError, read_results
from redolab.probes.models import Run, RunEvent, RunSource, RunStatus, Sweep, SweepKind
from redolab.probes.schemas import ResultImport, RunCreate, SweepCreate
from redolab.probes.sweeps import PointValue, find_plateau, manual_kernel_commands, point_value, seed_table


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


MAX_RESULT_FILES = 50
# What an imported test carries that is not a Run column of the same name (stored otherwise).
_NOT_RUN_COLUMNS = frozenset({"text", "first_line", "intervals", "notes", "client_settings", "server_settings"})
MAX_RESULT_FILE_BYTES = 20 * 1024 * 1024
MAX_RESULT_IMPORT_BYTES = 64 * 1024 * 1024  # all files of one import, read into memory together


def _read_result_file(name: str, data: bytes, import_in: ResultImport) -> list[ImportedRun]:
    if len(data) > MAX_RESULT_FILE_BYTES:
        limit = format_bytes(MAX_RESULT_FILE_BYTES, 0)
        raise FieldError("files", f"{name} is larger than {limit}, the most a result file may be.", 422)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise FieldError("files", f"{name}: line {line}: not UTF-8 text (is this a result file?)", 422) from None
    try:
        return read_results(text, import_in.format, test_date=import_in.test_date)
    except ResultFileError as error:
        raise FieldError("files", f"{name}: {error}", 422) from None


def import_results(
    *,
    session: Session,
    environment: Environment,
    import_in: ResultImport,
    files: list[tuple[str, bytes]],
    requested_by: str,
) -> list[Run]:
    """Store each test in the files as a succeeded run with its source marked: every file is read
    before anything is stored, so one bad file stores nothing."""
    client = _host_in(environment, import_in.client_host_id, "client_host_id")
    server = _host_in(environment, import_in.server_host_id, "server_host_id")
    if not files:
        raise FieldError("files", "Choose one or more files: oratcptest client output (text) or iperf3 -J JSON.", 422)
    if len(files) > MAX_RESULT_FILES:
        raise FieldError("files", f"{len(files)} files: import at most {MAX_RESULT_FILES} at once.", 422)
    parsed = [(name, item) for name, data in files for item in _read_result_file(name, data, import_in)]
    now = utcnow()
    runs = []
    for name, item in parsed:
        run = Run(
            **{key: value for key, value in asdict(item).items() if key not in _NOT_RUN_COLUMNS},
            environment_id=environment.id,
            client_host_id=client.id,
            server_host_id=server.id,
            client_host_name=client.name,
            server_host_name=server.name,
            requested_by=requested_by,
            status=RunStatus.succeeded,
            source_name=name[:255],
            source_text=item.text,
            label=import_in.label,
            notes="\n\n".join(text for text in (import_in.notes, item.notes) if text),
            tags=import_in.tags,
            client_settings=item.client_settings or None,
            server_settings=item.server_settings or None,
            created_at=now,
            finished_at=item.finished_at or now,
        )
        session.add(run)
        session.flush()
        if item.intervals:  # one executemany: a day of one-second intervals is 86,400 rows
            session.execute(
                insert(RunEvent),
                [
                    {
                        "run_id": run.id,
                        "seq": seq,
                        "role": "client",
                        "event": "interval",
                        "line": json.dumps({"event": "interval", "data": data}, separators=(",", ":")),
                    }
                    for seq, data in enumerate(item.intervals)
                ],
            )
        runs.append(run)
    session.commit()
    return runs


def delete_imported_run(*, session: Session, run: Run) -> None:
    """Remove an imported run and its intervals (a mistaken import); measured runs are kept."""
    if run.source is RunSource.redoprobe:
        raise FieldError("run", f"Run {run.id} was measured by redoprobe: only imported runs can be deleted.", 409)
    session.delete(run)
    session.commit()


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


def create_sweep(*, session: Session, environment: Environment, sweep_in: SweepCreate, requested_by: str) -> Sweep:
    """Store the sweep and queue its job: the worker runs its grid between the two hosts, one
    run after the other, with nothing else on those hosts in between."""
    client = _host_in(environment, sweep_in.client_host_id, "client_host_id")
    server = _host_in(environment, sweep_in.server_host_id, "server_host_id")
    if sweep_in.kind is SweepKind.kernel_max:
        refused = [host.name for host in dict.fromkeys((client, server)) if not host.allow_kernel_changes]
        if refused:
            raise KernelChangesNotAllowed(refused, manual_kernel_commands(sweep_in.sizes))
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
    session.add(Job(kind="sweep", sweep_id=sweep.id, client_host_id=client.id, server_host_id=server.id))
    session.commit()
    return sweep


def list_sweeps(*, session: Session, environment: Environment, limit: int = 100) -> list[Sweep]:
    query = select(Sweep).where(Sweep.environment_id == environment.id).order_by(Sweep.id.desc()).limit(limit)
    return list(session.scalars(query))


def get_sweep(*, session: Session, sweep_id: int) -> Sweep:
    sweep = session.get(Sweep, sweep_id)
    if sweep is None:
        raise NotFound(f"Sweep {sweep_id} does not exist.")
    return sweep


def cancel_sweep(*, session: Session, sweep: Sweep) -> Sweep:
    """A queued sweep is cancelled at once; a running one stops its current run within a second
    and runs nothing more (kernel values are put back first)."""
    if sweep.status is RunStatus.queued:
        sweep.status = RunStatus.cancelled
        sweep.failure_reason = "cancelled by the user before it started"
        sweep.finished_at = utcnow()
        for job in session.scalars(select(Job).where(Job.sweep_id == sweep.id, Job.status == JobStatus.queued)):
            job.status = JobStatus.failed
            job.finished_at = utcnow()
    elif sweep.status is RunStatus.running:
        sweep.cancel_requested = True
        for run in session.scalars(select(Run).where(Run.sweep_id == sweep.id, Run.status == RunStatus.running)):
            run.cancel_requested = True
    session.commit()
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
