"""Rehearsals: choose the window, build its schedule, queue its runs together, read what they
measured. Refused before anything is written: no timed history or a window without data (422), a
schedule over the probe's limits (422), a host of the rehearsal busy (409: its threads must replay
at the same moment), the owner or a host pair at the queue cap (429)."""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import partial

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from redolab.core.config import Settings
from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.core.limits import LimitReached
from redolab.core.units import format_bytes
from redolab.environments.models import Environment
from redolab.jobs.admission import QueueCaps
from redolab.redo.analysis import stored_analysis
from redolab.rehearsals import storage
from redolab.rehearsals.carriers import Carrier, admit_pairs, carrier_notes, carriers
from redolab.rehearsals.models import Rehearsal
from redolab.rehearsals.pacing import check_cap, pacing_notes, per_connection
from redolab.rehearsals.results import RunReplay, RunSeries, copy_series, measured, stored
from redolab.rehearsals.schedule import Schedule, build_schedule
from redolab.rehearsals.schemas import RehearsalCreate
from redolab.rehearsals.window import RehearsalRefused, Window, choose_window, parse_window_spec
from redolab.runs import service as runs
from redolab.runs.models import ProbeMode, Run, RunEvent, RunStatus
from redolab.runs.schemas import MAX_MESSAGE_BYTES, RunCreate

DEFAULT_MESSAGE_BYTES = 1024 * 1024  # ASYNC: as oratcptest; SYNC: the history's average redo write
MIN_SYNC_MESSAGE_BYTES = 512  # a redo block
DRAIN_CAP_FACTOR, DRAIN_CAP_SECONDS = 2.0, 60.0  # a replay may take twice its schedule, plus a minute


@dataclass(frozen=True)
class RehearsalRequest:
    window: str = "worst-60m"
    scale: float = 1.0
    speedup: float = 1.0
    mode: ProbeMode = ProbeMode.async_
    message_bytes: int | None = None
    sockbuf_bytes: int | None = None
    client_host_id: int | None = None  # one pair for every thread; none: node pairs, else node 1
    server_host_id: int | None = None
    across_hops: bool = False
    label: str = ""
    cap_bits_per_second: int | None = None  # capped at a link tier: its line rate, shared by the connections
    cap_label: str = ""


def request_of(body: RehearsalCreate) -> RehearsalRequest:
    """The request from its validated form, JSON body or CLI options."""
    return RehearsalRequest(**body.model_dump())


def _pairs(environment: Environment, request: RehearsalRequest, threads: list[int]) -> list[Carrier]:
    """The host pairs that carry the threads, and which threads each carries (carriers.carriers)."""
    return carriers(
        environment,
        threads,
        client_host_id=request.client_host_id,
        server_host_id=request.server_host_id,
        across_hops=request.across_hops,
    )


def _message_bytes(request: RehearsalRequest, requirement) -> int:
    """As given; SYNC: one commit-sized write, the history's average redo write (422 when that is over
    what a message can be: a history whose write count is wrong, not a commit); else 1 MiB."""
    if request.message_bytes:
        return request.message_bytes
    if request.mode is ProbeMode.sync and requirement.avg_redo_write_bytes:
        size = max(MIN_SYNC_MESSAGE_BYTES, round(requirement.avg_redo_write_bytes))
        if size > MAX_MESSAGE_BYTES:
            raise FieldError(
                "message_bytes",
                f"The redo history's average redo write is {format_bytes(size)} (its redo over its 'redo "
                f"writes'), over the {format_bytes(MAX_MESSAGE_BYTES)} a message can be: a commit writes far less, "
                "so check the imports' write counts, or give a message size (the size of one commit's write).",
                422,
            )
        return size
    return DEFAULT_MESSAGE_BYTES


# A schedule of 2,000,000 lines takes some 3 s and 600 MB to build: one at a time in this process, so that
# requests sent at once (each passing the busy-host check before any is written) cannot fill its memory. A
# request finding it taken is answered at once (503, Retry-After): waiting, it would hold one of the few
# threads that answer every page and /healthz.
_BUILDING = threading.BoundedSemaphore(1)
BUILD_RETRY_SECONDS = 5


def _build_one_at_a_time(requirement, window, request: RehearsalRequest) -> Schedule:
    if not _BUILDING.acquire(blocking=False):
        raise LimitReached(
            "Another rehearsal's schedule is being built on this server (schedules are built one at a time, "
            f"some seconds each); start this one again in {BUILD_RETRY_SECONDS} s.",
            status_code=503,
            retry_after=BUILD_RETRY_SECONDS,
        )
    try:
        return build_schedule(requirement, window, scale=request.scale, speedup=request.speedup)
    finally:
        _BUILDING.release()


def replay_cap(schedule_seconds: float, speedup: float) -> float:
    """How long a rehearsal's runs may take: twice the replay (its drain included) plus a minute."""
    return schedule_seconds / speedup * DRAIN_CAP_FACTOR + DRAIN_CAP_SECONDS


def create_rehearsal(
    *,
    session: Session,
    environment: Environment,
    request: RehearsalRequest,
    requested_by: str,
    caps: QueueCaps | None = None,
    settings: Settings | None = None,
    queue_behind: Rehearsal | None = None,  # just queued on the same hosts: waited for, not refused as busy
) -> Rehearsal:
    admit = partial(admit_pairs, session, requested_by=requested_by, caps=caps, behind=run_ids(queue_behind))
    analysis = stored_analysis(session=session, environment=environment)
    requirement = analysis.requirement if analysis is not None else None
    if requirement is None:
        raise FieldError("window", "No redo history yet: import archived-log or AWR history first.", 422)
    message_bytes = _message_bytes(request, requirement)
    zone = environment.time_zone or "UTC"
    try:
        window = choose_window(requirement, parse_window_spec(request.window, zone=zone), zone=zone)
        # the caps, busy hosts and stored schedules before the schedule is built (up to 2,000,000 lines): a
        # refusal costs nothing
        check_cap(request.cap_bits_per_second, len(window.threads), across_hops=request.across_hops)
        admit(_pairs(environment, request, list(window.threads)))
        storage.check_room(session, requested_by=requested_by, settings=settings)
        session.rollback()  # releases the queue lock while the schedule is built
        schedule = _build_one_at_a_time(requirement, window, request)
    except RehearsalRefused as refused:
        raise FieldError(refused.field, str(refused), 422) from None
    pairs = _pairs(environment, request, list(schedule.threads))
    admit(pairs)  # again, now under the lock until the commit
    storage.check_room(session, requested_by=requested_by, settings=settings, adding=storage.text_bytes(schedule))
    kept = storage.keep_schedule(session, environment_id=environment.id, schedule=schedule, requested_by=requested_by)
    carried = [] if request.client_host_id else carrier_notes(environment, pairs, list(schedule.threads))
    rehearsal = _rehearsal_row(
        environment,
        request,
        window,
        schedule,
        requirement=requirement,
        message_bytes=message_bytes,
        schedule_id=kept.id,
        notes=[*schedule.notes, *carried],
        requested_by=requested_by,
    )
    session.add(rehearsal)
    session.flush()
    for client, server, threads in pairs:
        carrier = (client, server, connections_of(schedule, threads))
        _queue_run(
            session,
            environment,
            rehearsal,
            carrier,
            requested_by=requested_by,
            caps=caps,
            settings=settings,
            sockbuf_bytes=request.sockbuf_bytes,
        )
    session.commit()
    return rehearsal


def run_ids(rehearsal: Rehearsal | None) -> set[int]:
    return {run.id for run in rehearsal.runs} if rehearsal is not None else set()


def _rehearsal_row(
    environment: Environment,
    request: RehearsalRequest,
    window: Window,
    schedule: Schedule,
    *,
    requirement,
    message_bytes: int,
    schedule_id: int,
    notes: list[str],
    requested_by: str,
) -> Rehearsal:
    """The rehearsal as recorded: its window, the imports its threads replay, the schedule as stored, and
    how its runs replay it."""
    return Rehearsal(
        environment_id=environment.id,
        window_kind=window.kind,
        window_start=window.start,
        window_end=window.end,
        window_label=window.label,
        granularity_seconds=window.granularity_seconds,
        granularity=window.granularity,
        imports=sorted({label for t in schedule.threads for label in _imports_of(requirement, t)}),
        notes=[*notes, *pacing_notes(request.cap_bits_per_second, request.cap_label, len(schedule.threads))],
        threads=list(schedule.threads),
        mode=request.mode,
        message_bytes=message_bytes,
        scale=request.scale,
        speedup=request.speedup,
        slot_seconds=schedule.slot_seconds,
        schedule_sha256=schedule.sha256,
        schedule_bytes=schedule.total_bytes,
        schedule_seconds=schedule.seconds,
        schedule_lines=schedule.line_count,
        schedule_id=schedule_id,
        label=request.label,
        requested_by=requested_by,
        across_hops=request.across_hops,
        cap_bits_per_second=request.cap_bits_per_second,
        cap_label=request.cap_label,
    )


def _queue_run(
    session: Session,
    environment: Environment,
    rehearsal: Rehearsal,
    carrier,
    *,
    requested_by: str,
    caps,
    settings,
    sockbuf_bytes: int | None,
) -> None:
    """One run of the rehearsal: its host pair replays the stored schedule's connections (all: None)."""
    client, server, connections = carrier
    run_in = RunCreate(
        client_host_id=client.id,
        server_host_id=server.id,
        mode=rehearsal.mode,
        conns=len(connections) if connections is not None else len(rehearsal.threads),
        message_bytes=rehearsal.message_bytes,
        sockbuf_bytes=sockbuf_bytes,
        interval_seconds=1.0,
        fq_rate_bits_per_second=per_connection(rehearsal.cap_bits_per_second, len(rehearsal.threads)),
        label=rehearsal.label or f"rehearsal #{rehearsal.id}",
    )
    replay = {
        "rehearsal_id": rehearsal.id,
        "replay_schedule_id": rehearsal.schedule_id,
        "replay_connections": connections,
        "replay_destination_id": server.destination_id,
        # the schedule's bytes are already scaled (schedule.build_schedule): the probe replays
        # them as written; its own --scale would multiply them again
        "replay_scale": 1.0,
        "replay_speedup": rehearsal.speedup,
        "duration_seconds": replay_cap(rehearsal.schedule_seconds, rehearsal.speedup),
    }
    runs.create_run(
        session=session,
        environment=environment,
        run_in=run_in,
        requested_by=requested_by,
        caps=caps,
        settings=settings,
        replay=replay,
        commit=False,
        together=f"rehearsal:{rehearsal.id}" if rehearsal.across_hops else None,
    )


def connections_of(schedule: Schedule, threads: list[int]) -> list[int] | None:
    """The schedule's connections that carry these threads, in their order (None: all, as numbered)."""
    if list(threads) == list(schedule.threads):
        return None
    position = {thread: i for i, thread in enumerate(schedule.threads)}
    return [position[t] for t in threads]


def _imports_of(requirement, thread: int) -> tuple[str, ...]:
    basis = requirement.threads[thread].replay_basis
    return basis.imports if basis else ()


def get_rehearsal(*, session: Session, rehearsal_id: int) -> Rehearsal:
    return get_or_404(session, Rehearsal, rehearsal_id, what="Rehearsal")


def list_rehearsals(*, session: Session, environment: Environment, limit: int = 50) -> list[Rehearsal]:
    """The newest first, each with its runs (every list reads their states: one query, not one a row)."""
    query = select(Rehearsal).where(Rehearsal.environment_id == environment.id).order_by(Rehearsal.id.desc())
    return list(session.scalars(query.options(selectinload(Rehearsal.runs)).limit(limit)))


def status(rehearsal: Rehearsal) -> RunStatus:
    """Queued or running while a run is; then failed or cancelled if any run did, else succeeded."""
    states = [run.status for run in rehearsal.runs]
    if not states:
        return RunStatus.failed
    for state in (RunStatus.running, RunStatus.queued, RunStatus.failed, RunStatus.cancelled):
        if state in states:
            return state
    return RunStatus.succeeded


def failure(rehearsal: Rehearsal) -> str | None:
    reasons = [f"run #{run.id}: {run.failure_reason}" for run in rehearsal.runs if run.failure_reason]
    return "; ".join(reasons) or None


def replays(*, session: Session, rehearsal: Rehearsal) -> list[RunReplay]:
    """Each run's threads and client lines; the threads follow the runs' order (see _pairs)."""
    result, offset = [], 0
    threads = list(rehearsal.threads)
    for run in rehearsal.runs:
        carried = threads[offset : offset + run.conns]
        offset = (offset + run.conns) % len(threads)  # across hops, each destination's runs carry them all
        result.append(RunReplay(run.id, carried, [], _series_of(session, run)))
    return result


# A live rehearsal page polls every second, and a day replayed at recorded speed is 86,400 interval lines a
# run: each run's series is kept in this process with the last event read, and a poll reads and parses only
# the lines that arrived since. Keyed by the run's id and creation time (an id SQLite gave again is a new key).
_READ_LIMIT = 32  # runs; a day's series is some 16 MB of Python floats, dropped once the result is stored
_READ_LOCK = threading.Lock()
_READ: OrderedDict[tuple[int, str], _Read] = OrderedDict()


@dataclass
class _Read:
    lock: threading.Lock
    seq: int
    series: RunSeries


def _read_key(run: Run) -> tuple[int, str]:
    return run.id, run.created_at.isoformat() if run.created_at else ""


def _forget(runs: list[Run]) -> None:
    with _READ_LOCK:
        for run in runs:
            _READ.pop(_read_key(run), None)


def _series_of(session: Session, run: Run) -> RunSeries:
    """The run's client series so far (a copy): the cached one, with the lines after its last event read."""
    key = _read_key(run)
    with _READ_LOCK:
        entry = _READ.get(key)
        if entry is None:
            entry = _READ[key] = _Read(threading.Lock(), -1, RunSeries())
            while len(_READ) > _READ_LIMIT:
                _READ.popitem(last=False)
        _READ.move_to_end(key)
    with entry.lock:
        rows = session.execute(
            select(RunEvent.seq, RunEvent.line)
            .where(RunEvent.run_id == run.id, RunEvent.role == "client", RunEvent.seq > entry.seq)
            .order_by(RunEvent.seq)
        ).all()
        if rows:
            entry.series.read(line for _, line in rows)
            entry.seq = rows[-1][0]
        return copy_series(entry.series)


def current_result(*, session: Session, rehearsal: Rehearsal) -> dict | None:
    """The measured figures: as stored once every run ended, else computed from the events so far
    (a page or an API read never writes), their series thinned as the stored one is: a live day at
    recorded speed drew 86,400 moments a trace on every poll (megabytes a second to each viewer)."""
    if rehearsal.result is not None:
        # stored by another process's worker, or a poll cached its figures after the store dropped
        # them: this process's copies go at the first read that sees the result
        with _READ_LOCK:
            left_behind = _FIGURES.pop(_figures_key(rehearsal), None)
        if left_behind is not None:
            _forget(rehearsal.runs)
        return rehearsal.result
    key, state = _figures_key(rehearsal), _figures_state(session, rehearsal)
    with _READ_LOCK:
        known = _FIGURES.get(key)
    if known is None or known[0] != state:
        result = _measured(session, rehearsal)
        known = (state, stored(result) if result is not None else None)
        with _READ_LOCK:
            _FIGURES[key] = known
            _FIGURES.move_to_end(key)
            while len(_FIGURES) > _READ_LIMIT:
                _FIGURES.popitem(last=False)
    return copy.deepcopy(known[1])


# A live rehearsal's figures with the state they are of (its runs' statuses and last events): every
# viewer's poll a second gets them without reading the series again (16 ms for a day's run) until a
# line arrives or a status changes. One entry a rehearsal, dropped once its result is stored.
_FIGURES: OrderedDict[tuple[int, str], tuple[tuple, dict | None]] = OrderedDict()


def _figures_key(rehearsal: Rehearsal) -> tuple[int, str]:
    return rehearsal.id, rehearsal.created_at.isoformat() if rehearsal.created_at else ""


def _figures_state(session: Session, rehearsal: Rehearsal) -> tuple:
    last = dict(
        session.execute(
            select(RunEvent.run_id, func.max(RunEvent.seq))
            .where(RunEvent.run_id.in_([run.id for run in rehearsal.runs]), RunEvent.role == "client")
            .group_by(RunEvent.run_id)
        ).all()
    )
    return tuple((*_read_key(run), run.status.value, last.get(run.id)) for run in rehearsal.runs)


def _measured(session: Session, rehearsal: Rehearsal) -> dict | None:
    """The figures of the first destination's runs (the plan's), and across hops each destination's."""
    done = replays(session=session, rehearsal=rehearsal)
    if not rehearsal.across_hops:
        return measured(done)
    # the destination each run's server fed when the rehearsal was made (runs before that was kept: now)
    into = {
        run.id: run.replay_destination_id or getattr(run.server_host, "destination_id", None) for run in rehearsal.runs
    }
    environment = session.get(Environment, rehearsal.environment_id)
    groups = [(d, [r for r in done if into.get(r.run_id) == d.id]) for d in environment.destinations]
    groups = [(d, mine) for d, mine in groups if mine]
    if not groups:
        return None
    first = measured(groups[0][1])
    if first is None:
        return None
    first["destinations"] = [
        {"destination_id": d.id, "name": d.name, **{k: v for k, v in (measured(mine) or {}).items() if k != "series"}}
        for d, mine in groups
    ]
    return first


def record_result(*, session: Session, rehearsal_id: int | None) -> None:
    """Store a rehearsal's measured figures once its last run has ended (the worker calls this as each
    run ends, and a cancel as it ends queued runs). Two runs ending together both write the same figures."""
    rehearsal = session.get(Rehearsal, rehearsal_id) if rehearsal_id is not None else None
    if rehearsal is None or rehearsal.result is not None:
        return
    session.expire_all()  # the runs as they are now, not as this session last read them
    if not rehearsal.runs or not all(run.status.finished for run in rehearsal.runs):
        return
    result = _measured(session, rehearsal)
    if result is not None:
        rehearsal.result = stored(result)
        session.commit()
    _forget(rehearsal.runs)  # from now on its pages read the stored result
    with _READ_LOCK:
        _FIGURES.pop(_figures_key(rehearsal), None)


def cancel_rehearsal(*, session: Session, rehearsal: Rehearsal) -> Rehearsal:
    for run in rehearsal.runs:
        if not run.status.finished:
            runs.cancel_run(session=session, run=run)
    record_result(session=session, rehearsal_id=rehearsal.id)  # when every run was still queued
    return rehearsal


def runs_of(rehearsal: Rehearsal) -> list[Run]:
    return list(rehearsal.runs)
