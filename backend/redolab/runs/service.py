"""Runs: request, import, list, cancel. The worker executes them (jobs/worker.py)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import asdict

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from redolab.core.config import Settings
from redolab.core.db import get_or_404, utcnow
from redolab.core.errors import FieldError
from redolab.core.units import format_bytes
from redolab.environments.models import Environment, Host, HostRole, HostTransport
from redolab.jobs.admission import RUN_SETUP_SECONDS, QueueCaps
from redolab.jobs.models import Job, JobStatus
from redolab.runs.measured import MeasuredRun
from redolab.runs.models import Run, RunEvent, RunSource, RunStatus, RunSummary, new_mark
from redolab.runs.parsers import read_results
from redolab.runs.parsers.redoprobe import ProbeOutputError, RunMetrics, run_metrics
from redolab.runs.parsers.results import ImportedRun, ResultFileError
from redolab.runs.queueing import admit, check_local_write_dir, owner_of, place_of
from redolab.runs.schemas import ResultImport, RunCreate


def host_in(environment: Environment, host_id: int, field: str) -> Host:
    for host in environment.hosts:
        if host.id == host_id:
            return host
    raise FieldError(field, f"Host {host_id} is not a host of environment '{environment.name}'.")


def create_run(
    *,
    session: Session,
    environment: Environment,
    run_in: RunCreate,
    requested_by: str,
    caps: QueueCaps | None = None,
    settings: Settings | None = None,
    replay: dict | None = None,
    commit: bool = True,
    together: str | None = None,
) -> Run:
    """Store the run and queue its job; the worker picks it up when both hosts are free. Refused
    before anything is written: a write_dir on "This machine" outside its root or without room
    (422), its owner or host pair at the queue cap (429; checked under the queue lock).
    `replay`: a rehearsal's columns (rehearsal_id, replay_schedule, ..., and its duration cap), set
    before the job can be claimed; `commit=False` leaves the commit to the caller (runs that must
    be queued together); `together`: the group whose jobs may share hosts with each other (a run or
    rehearsal across hops: "cluster:12", "rehearsal:3")."""
    client = host_in(environment, run_in.client_host_id, "client_host_id")
    server = host_in(environment, run_in.server_host_id, "server_host_id")
    check_local_write_dir(server=server, write_dir=run_in.write_dir, conns=run_in.conns, settings=settings)
    admit(session, requested_by=requested_by, client=client, server=server, caps=caps)
    run = Run(
        environment_id=environment.id,
        client_host_name=client.name,
        server_host_name=server.name,
        requested_by=requested_by,
        **{**run_in.model_dump(), **(replay or {})},
    )
    session.add(run)
    session.flush()
    session.add(
        Job(
            run_id=run.id,
            client_host_id=client.id,
            server_host_id=server.id,
            together=together,
            requested_by=owner_of(requested_by),
            planned_seconds=run.duration_seconds + RUN_SETUP_SECONDS,
        )
    )
    if commit:
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
        given = {"test_date": import_in.test_date, "message_bytes": import_in.message_bytes}
        return read_results(text, import_in.format, **given)
    except ResultFileError as error:  # beside the field that would fix it (the date, the message size), else Files
        raise FieldError(error.field or "files", f"{name}: {error}", 422) from None


def read_result_uploads(uploads: list) -> list[tuple[str, bytes]]:
    """Uploaded result files as (name, bytes), each cut one byte past the per-file limit (so the
    import can say it is too large) and all within the per-import total."""
    files, total = [], 0
    for upload in uploads[: MAX_RESULT_FILES + 1]:
        data = upload.file.read(MAX_RESULT_FILE_BYTES + 1)  # spooled to disk by then: called in a thread
        total += len(data)
        if total > MAX_RESULT_IMPORT_BYTES:
            limit = format_bytes(MAX_RESULT_IMPORT_BYTES, 0)
            raise FieldError("files", f"The files come to more than {limit}: import them in parts.", 422)
        files.append((upload.filename or "upload", data))
    return files


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
    client = host_in(environment, import_in.client_host_id, "client_host_id")
    server = host_in(environment, import_in.server_host_id, "server_host_id")
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
        lines = [json.dumps({"event": "interval", "data": data}, separators=(",", ":")) for data in item.intervals]
        if lines:  # one executemany: a day of one-second intervals is 86,400 rows
            session.execute(
                insert(RunEvent),
                [
                    {"run_id": run.id, "seq": seq, "role": "client", "event": "interval", "line": line}
                    for seq, line in enumerate(lines)
                ],
            )
        session.add(RunSummary(**summary_values(run, lines)))
        runs.append(run)
    session.commit()
    return runs


def delete_imported_run(*, session: Session, run: Run) -> None:
    """Remove an imported run and its intervals (a mistaken import); measured runs are kept."""
    if run.source is RunSource.redoprobe:
        raise FieldError("run", f"Run {run.id} was measured by redoprobe: only imported runs can be deleted.", 409)
    session.delete(run)
    session.commit()


def list_runs(*, session: Session, environment: Environment, limit: int = 200, offset: int = 0) -> list[Run]:
    """The environment's runs, newest first, a page at a time."""
    query = select(Run).where(Run.environment_id == environment.id).order_by(Run.id.desc())
    return list(session.scalars(query.limit(limit).offset(offset)))


def count_runs(*, session: Session, environment: Environment) -> int:
    return session.scalar(select(func.count(Run.id)).where(Run.environment_id == environment.id)) or 0


def get_run(*, session: Session, run_id: int) -> Run:
    return get_or_404(session, Run, run_id, what="Run")


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


NOT_BEGUN = "cancelled by the user before it started"


def begin_unless_cancelled(*, session: Session, model: type, item_id: int) -> bool:
    """Mark a queued run or sweep (`model`) running unless a cancel was recorded first, in one
    conditional update: a cancel that lands while a worker claims the job is seen here. Committed."""
    begun = session.execute(
        update(model)
        .where(model.id == item_id, model.status == RunStatus.queued, model.cancel_requested.is_not(True))
        .values(status=RunStatus.running, started_at=utcnow())
    ).rowcount
    session.commit()
    return begun == 1


def end_not_begun(*, session: Session, model: type, item_id: int) -> None:
    """A run or sweep that did not begin (cancelled first) ends as cancelled: nothing ran. Committed."""
    session.execute(
        update(model)
        .where(model.id == item_id, model.status == RunStatus.queued)
        .values(status=RunStatus.cancelled, failure_reason=NOT_BEGUN, finished_at=utcnow())
    )
    session.commit()


def request_cancel(*, session: Session, model: type, item, job) -> bool:
    """The cancel of a run or a sweep (`model`, with its `job` condition), uncommitted: one
    conditional update of its job from queued to cancelled, the item with it; when a worker claimed
    it meanwhile (or it runs), only `cancel_requested` is set, for the worker to see. True when it
    was cancelled before it started."""
    now = utcnow()
    unclaimed = session.execute(
        update(Job).where(job, Job.status == JobStatus.queued).values(status=JobStatus.cancelled, finished_at=now)
    ).rowcount
    if unclaimed:
        session.execute(
            update(model)
            .where(model.id == item.id, model.status == RunStatus.queued)
            .values(
                status=RunStatus.cancelled,
                cancel_requested=True,
                failure_reason=NOT_BEGUN,
                finished_at=now,
            )
        )
    else:
        session.execute(
            update(model)
            .where(model.id == item.id, model.status.in_((RunStatus.queued, RunStatus.running)))
            .values(cancel_requested=True)
        )
    return bool(unclaimed)


def cancel_run(*, session: Session, run: Run) -> Run:
    """Cancel a run. Queued: its job goes from queued to cancelled in one conditional update, and
    the run with it. Claimed by a worker meanwhile, or running: the cancel is recorded, and the
    worker sees it when it marks the run running (which it then never does) or within a second
    after, stopping the probes. The run returned says which: cancelled, or cancel_requested."""
    if run.status.finished:
        return run
    request_cancel(session=session, model=Run, item=run, job=Job.run_id == run.id)
    session.commit()
    session.refresh(run)
    return run


def queue_position(*, session: Session, run: Run) -> int | None:
    """How many queued jobs are ahead of this run on its hosts (None when it is not queued)."""
    place = place_of(session, run_id=run.id) if run.status is RunStatus.queued else None
    return place.jobs_ahead if place else None


MAX_RUNS = 500  # the newest succeeded runs are enough to find the best of each kind

_METRIC_FIELDS = (
    "interval_count",
    "rtt_min_seconds",
    "rtt_median_seconds",
    "ack_count",
    "ack_avg_seconds",
    "ack_p50_seconds",
    "ack_p95_seconds",
    "ack_p99_seconds",
    "server_write_seconds",
)


def summary_values(run: Run, lines: list[str]) -> dict:
    """A run's summary row (RunSummary columns) from its client interval and end lines."""
    values = {"run_id": run.id, "mtu_bytes": (run.client_settings or {}).get("mtu_bytes"), "damaged": None}
    try:
        metrics = run_metrics(lines)
    except ProbeOutputError as error:  # stored lines were parsed when they arrived; say so rather than guess
        return {**values, **dict.fromkeys(_METRIC_FIELDS), "interval_count": 0, "ack_count": 0, "damaged": str(error)}
    return {**values, **{name: getattr(metrics, name) for name in _METRIC_FIELDS}}


def summary_lines(*, session: Session, run_ids: list[int]) -> dict[int, list[str]]:
    """The client interval and end lines of these runs, what a summary is computed from."""
    lines: dict[int, list[str]] = {run_id: [] for run_id in run_ids}
    for start in range(0, len(run_ids), 500):
        query = (
            select(RunEvent.run_id, RunEvent.line)
            .where(
                RunEvent.run_id.in_(run_ids[start : start + 500]),
                RunEvent.role == "client",
                RunEvent.event.in_(("interval", "end")),
            )
            .order_by(RunEvent.run_id, RunEvent.seq)
        )
        for run_id, line in session.execute(query):
            lines[run_id].append(line)
    return lines


def store_summary(*, session: Session, run: Run) -> RunSummary:
    """Compute and keep the run's summary (when it ends, or when an import stores it); commits."""
    values = summary_values(run, summary_lines(session=session, run_ids=[run.id])[run.id])
    summary = session.get(RunSummary, run.id)
    if summary is None:
        summary = RunSummary(**values)
        session.add(summary)
    else:
        for key, value in values.items():
            setattr(summary, key, value)
    run.change_mark = new_mark()  # a new summary is a change to the run: cached plans see it
    session.commit()
    return summary


def _metrics(summary) -> RunMetrics:
    return RunMetrics(**{name: getattr(summary, name) for name in _METRIC_FIELDS})


# What planning reads of a run (columns, not whole runs: 500 runs with their JSON settings and
# commands took most of the environment page's time).
_PLANNED = (
    Run.id, Run.label, Run.client_host_id, Run.server_host_id, Run.reverse, Run.mode, Run.conns, Run.message_bytes,
    Run.bytes_per_second, Run.sync_write, Run.write_dir, Run.started_at, Run.created_at, Run.tags, Run.source,
    Run.cluster_id, Run.duration_seconds, Run.sockbuf_bytes,
)  # fmt: skip
_SUMMARISED = tuple(getattr(RunSummary, name) for name in (*_METRIC_FIELDS, "mtu_bytes", "damaged"))


def _measured(environment: Environment) -> tuple:
    """Succeeded runs that measured what the link carries: a rehearsal's runs are paced by their
    schedule (their throughput is the redo replayed, not the link's capacity), so they are not."""
    return (
        Run.environment_id == environment.id,
        Run.status == RunStatus.succeeded,
        Run.bytes_per_second > 0,
        Run.rehearsal_id.is_(None),
    )


# The measured runs of the environments viewed last, in this process, each with the stamp it was
# read at. Every read compares the stamp with the database's, so a change made by another process
# (a run ending in the worker, a tag edited behind another web process) is seen on the next read.
_CACHE: OrderedDict[int, tuple[tuple, tuple[MeasuredRun, ...]]] = OrderedDict()
_CACHE_LOCK = threading.Lock()
CACHED_ENVIRONMENTS = 64


def measured_stamp(*, session: Session, environment: Environment) -> tuple:
    """What the measured runs are read from, in one small query: how many runs qualify, the newest,
    the sum of their change marks (drawn again by every UPDATE of a run and every stored summary),
    and the hosts' roles, node numbers, transports and destinations (which decide the direction of a run
    and whether it measured the planned path)."""
    count, newest, changes = session.execute(
        select(func.count(Run.id), func.max(Run.id), func.sum(Run.change_mark)).where(*_measured(environment))
    ).one()
    hosts = sorted(
        (h.id, h.role.value, h.node_number, h.transport.value, h.destination_id or 0) for h in environment.hosts
    )
    feeds = tuple((d.id, d.feeds_from_id or 0) for d in environment.destinations)
    return count, newest, changes, tuple(hosts), feeds


EVERY_HOP = "every hop"


def measured_runs(*, session: Session, environment: Environment, hop=None) -> list[MeasuredRun]:
    """Succeeded runs over a destination's hop (primary node -> standby node of the first
    destination by default; `hop`: another destination's id, or EVERY_HOP), with the numbers
    planning needs: read from their stored summaries, never from their intervals (a run without one,
    from before the summaries, is summarised here, and not stored: a page does not write). Kept per
    process while measured_stamp() is unchanged: reading 500 runs was most of the environment page's time."""
    stamp = measured_stamp(session=session, environment=environment)
    with _CACHE_LOCK:
        cached = _CACHE.get(environment.id)
        if cached is not None and cached[0] == stamp:
            _CACHE.move_to_end(environment.id)
            measured = list(cached[1])
        else:
            cached = None
    if cached is None:
        measured = read_measured_runs(session=session, environment=environment)
        with _CACHE_LOCK:
            _CACHE[environment.id] = (stamp, tuple(measured))
            _CACHE.move_to_end(environment.id)
            while len(_CACHE) > CACHED_ENVIRONMENTS:
                _CACHE.popitem(last=False)
    if hop == EVERY_HOP:
        return measured
    if hop is None:
        first = environment.first_destination
        hop = first.id if first is not None else None
    return [run for run in measured if run.hop == hop]


def read_measured_runs(*, session: Session, environment: Environment) -> list[MeasuredRun]:
    """measured_runs() from the database, without the cache."""
    rows = session.execute(
        select(*_PLANNED, RunSummary.run_id.label("summarised"), *_SUMMARISED)
        .outerjoin(RunSummary, RunSummary.run_id == Run.id)
        .where(*_measured(environment))
        .order_by(Run.id.desc())
        .limit(MAX_RUNS)
    ).all()
    missing = [row.id for row in rows if row.summarised is None]
    made = {}
    if missing:
        lines = summary_lines(session=session, run_ids=missing)
        made = {
            run.id: RunSummary(**summary_values(run, lines[run.id]))
            for run in session.scalars(select(Run).where(Run.id.in_(missing)))
        }
    hosts = {host.id: host for host in environment.hosts}
    feeds = {d.id: d.feeds_from_id for d in environment.destinations}
    measured = []
    for row in rows:
        summary = made.get(row.id, row)
        client, server = hosts.get(row.client_host_id), hosts.get(row.server_host_id)
        if row.reverse:  # the server host sent: the redo direction is server -> client
            client, server = server, client
        if client is None or server is None or not _over_a_hop(client, server, feeds) or summary.damaged:
            continue  # a run whose stored lines are damaged is left out, not guessed
        measured.append(
            MeasuredRun(
                id=row.id,
                label=row.label,
                client_node=client.node_number,
                server_node=server.node_number,
                mode=row.mode.value,
                conns=row.conns,
                message_bytes=row.message_bytes,
                bytes_per_second=row.bytes_per_second,
                sync_write=row.sync_write and bool(row.write_dir),
                loopback=client.transport is HostTransport.local and server.transport is HostTransport.local,
                mtu_bytes=summary.mtu_bytes,
                metrics=_metrics(summary),
                created_at=row.started_at or row.created_at,
                tags=tuple(row.tags or ()),
                origin="measured" if row.source is RunSource.redoprobe else f"imported: {row.source.value}",
                hop=server.destination_id,
                cluster=row.cluster_id,
                duration_seconds=row.duration_seconds,
                sockbuf_bytes=row.sockbuf_bytes,
            )
        )
    return measured


def _over_a_hop(client, server, feeds: dict[int, int | None]) -> bool:
    """Whether the run sent the way redo goes into the server's destination: from a primary node for a
    destination the primary feeds, from a node of the destination that forwards to it otherwise."""
    if server.role is not HostRole.standby:
        return False
    source = feeds.get(server.destination_id)
    if source is None:
        return client.role is HostRole.primary
    return client.role is HostRole.standby and client.destination_id == source
