"""Watches: make, change, silence and stop them; fire each check when due (short runs on the path,
queued like any run; a busy host skips the check, which is no failure); judge a check when its runs
end, against the environment's requirement as stored now; and change the watch's state when M of the
last N checks agree, as one conditional update that also writes the notifications, so two workers
judging at once still notify once."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from pydantic import ValidationError
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from redolab.core.config import Settings, get_settings
from redolab.core.db import get_or_404, utcnow
from redolab.core.errors import FieldError
from redolab.core.limits import LimitReached
from redolab.environments.models import Environment, Host
from redolab.jobs.admission import QueueCaps, current_caps, hold_queue_lock
from redolab.redo.analysis import stored_analysis
from redolab.runs import service as run_service
from redolab.runs.models import Run, RunEvent, RunStatus, RunSummary
from redolab.runs.parsers.redoprobe import ProbeOutputError, parse_line
from redolab.sweeps.clusters import node_pairs
from redolab.sweeps.models import Schedule, ScheduleStatus
from redolab.sweeps.schedules import busy_with
from redolab.watches.budget import release_digests
from redolab.watches.judge import Required, next_state, required_for, verdict_of
from redolab.watches.messages import queue_notifications, release_ended_silences
from redolab.watches.models import (
    CheckStatus,
    NotificationReceiver,
    Verdict,
    Watch,
    WatchCheck,
    WatchState,
)
from redolab.watches.owners import (
    DELETED_EVENT,
    SILENCED_EVENT,
    queue_notice,
    require_manager,
    require_silence_allowed,
)
from redolab.watches.schemas import WatchCreate, WatchSilence, check_run

log = logging.getLogger("redolab.watches")

CHECKS_SHOWN = 500  # the watch page's chart: the last checks


# -- making and changing --------------------------------------------------------------------------
def _pairs(environment: Environment, watch: Watch | WatchCreate) -> list[tuple[Host, Host]]:
    if watch.all_node_pairs:
        pairs = node_pairs(environment)
        if not pairs:
            raise FieldError(
                "all_node_pairs",
                "Every node pair needs primary and standby hosts with the same node numbers: add them first.",
                422,
            )
        return pairs
    if watch.client_host_id is None or watch.server_host_id is None:
        raise FieldError("client_host_id", "The watch's hosts were removed: choose the hosts again.", 422)
    client = run_service.host_in(environment, watch.client_host_id, "client_host_id")
    server = run_service.host_in(environment, watch.server_host_id, "server_host_id")
    if client.id == server.id:
        raise FieldError("server_host_id", "The client and the server must be two hosts.", 422)
    return [(client, server)]


def _path_label(pairs: list[tuple[Host, Host]], all_node_pairs: bool) -> str:
    if all_node_pairs:
        return f"all node pairs ({len(pairs)})"
    client, server = pairs[0]
    return f"{client.name} -> {server.name}"[:210]


def _receivers(session: Session, ids: list[int]) -> list[int]:
    found = set(session.scalars(select(NotificationReceiver.id).where(NotificationReceiver.id.in_(ids))))
    missing = [i for i in ids if i not in found]
    if missing:
        raise FieldError("receiver_ids", f"Receiver #{missing[0]} does not exist: an admin adds receivers.", 422)
    return list(dict.fromkeys(ids))


def _active_count(session: Session, owner: str) -> int:
    """Active watches and schedules of a user: both fire runs by themselves, under one cap."""
    watches = session.scalar(select(func.count(Watch.id)).where(Watch.active.is_(True), Watch.requested_by == owner))
    schedules = session.scalar(
        select(func.count(Schedule.id)).where(Schedule.status == ScheduleStatus.active, Schedule.requested_by == owner)
    )
    return (watches or 0) + (schedules or 0)


def create_watch(
    *,
    session: Session,
    environment: Environment,
    watch_in: WatchCreate,
    requested_by: str,
    caps: QueueCaps | None = None,
) -> Watch:
    """Check the path and the receivers, and the owner's cap of active schedules and watches (429, under
    the queue lock so two made at once at the cap cannot both pass); the first check is due at once."""
    caps = caps or current_caps()
    pairs = _pairs(environment, watch_in)
    receivers = _receivers(session, watch_in.receiver_ids)
    hold_queue_lock(session)
    active = _active_count(session, requested_by)
    if active >= caps.active_schedules_per_user:
        session.rollback()
        raise LimitReached(
            f"You have {active} active schedules and watches, the most one user may have "
            f"(REDOLAB_MAX_ACTIVE_SCHEDULES_PER_USER={caps.active_schedules_per_user}): stop one first.",
            status_code=429,
        )
    watch = Watch(
        environment_id=environment.id,
        path_label=_path_label(pairs, watch_in.all_node_pairs),
        receiver_ids=receivers,
        requested_by=requested_by,
        next_at=utcnow(),
        **watch_in.model_dump(exclude={"receiver_ids"}),
    )
    if watch_in.all_node_pairs:  # its pairs are read from the environment: ids sent with it (a form's
        watch.client_host_id = watch.server_host_id = None  # leftovers, or of no host) are not its hosts
    session.add(watch)
    session.commit()
    return watch


def get_watch(*, session: Session, watch_id: int, user=None) -> Watch:
    """A watch; a deleted one only for an admin (its history kept), a 404 for everyone else."""
    admin = bool(getattr(user, "is_admin", False))
    return get_or_404(session, Watch, watch_id, what="Watch", only=lambda w: w.deleted_at is None or admin)


def list_watches(*, session: Session, environment: Environment) -> list[Watch]:
    """The environment's watches, deleted ones left out."""
    mine = select(Watch).where(Watch.environment_id == environment.id, Watch.deleted_at.is_(None))
    return list(session.scalars(mine.order_by(Watch.id)))


def list_checks(*, session: Session, watch: Watch, limit: int = CHECKS_SHOWN) -> list[WatchCheck]:
    """The last `limit` checks, oldest first."""
    newest = session.scalars(
        select(WatchCheck).where(WatchCheck.watch_id == watch.id).order_by(WatchCheck.id.desc()).limit(limit)
    ).all()
    return list(reversed(newest))


def silence_watch(*, session: Session, watch: Watch, silence: WatchSilence | None, user=None) -> Watch:
    """Maintenance: no notifications until the silence ends (None ends it now); checks and states go on.
    The owner's or an admin's (more than a day: an admin's); the receivers are told of a silence."""
    if user is not None:
        require_manager(user, watch, "silence" if silence else "end the silence of")
        require_silence_allowed(user, silence.until if silence else None)
    watch.silenced_until = silence.until if silence else None
    watch.silence_reason = silence.reason if silence else ""
    if silence is not None and user is not None:
        environment = session.get(Environment, watch.environment_id)
        queue_notice(session, watch=watch, environment=environment, event=SILENCED_EVENT, by=user.username,
                     settings=get_settings(), reason=silence.reason)  # fmt: skip
    session.commit()
    if silence is None:
        release_ended_silences(session)
        session.refresh(watch)
    return watch


def set_active(*, session: Session, watch: Watch, active: bool, caps: QueueCaps | None = None, user=None) -> Watch:
    """Stop a watch (its runs under way finish), or start it again (the cap applies again): the owner's or
    an admin's. Starting never checks sooner than the last check plus the watch's interval, so stop and
    start cannot make checks (and state changes) faster than the interval."""
    if user is not None:
        require_manager(user, watch, "start or stop")
    if active and not watch.active:
        caps = caps or current_caps()
        hold_queue_lock(session)
        if _active_count(session, watch.requested_by) >= caps.active_schedules_per_user:
            session.rollback()
            raise LimitReached(
                "The owner is at REDOLAB_MAX_ACTIVE_SCHEDULES_PER_USER: stop another one first.", status_code=429
            )
        last = session.scalar(select(func.max(WatchCheck.at)).where(WatchCheck.watch_id == watch.id))
        earliest = last + timedelta(seconds=watch.every_seconds) if last is not None else utcnow()
        watch.next_at = max(utcnow(), earliest)
    watch.active = active
    session.commit()
    return watch


def delete_watch(*, session: Session, watch: Watch, user) -> None:
    """The owner's or an admin's. The watch stops and leaves every list; its checks and notifications are
    kept for admins to read (GET /api/v1/watches/{id}); its receivers are told."""
    require_manager(user, watch, "delete")
    environment = session.get(Environment, watch.environment_id)
    queue_notice(session, watch=watch, environment=environment, event=DELETED_EVENT, by=user.username,
                 settings=get_settings())  # fmt: skip
    watch.active, watch.deleted_at, watch.deleted_by = False, utcnow(), user.username
    session.commit()


# -- firing ---------------------------------------------------------------------------------------
def fire_due_watches(sessions: sessionmaker, now: datetime | None = None, *, settings: Settings | None = None) -> int:
    """Start a check of every active watch that is due (one worker fires an occurrence: a conditional
    update of its next time; checks missed while redolab was down are not made up). Returns how many
    checks were started or skipped."""
    now = now or utcnow()
    fired = 0
    with sessions() as session:
        release_ended_silences(session, now)  # what a silence kept from the receivers, when it ends
        release_digests(session, now)  # what the hourly budget folded, once the receiver has room again
        due = session.scalars(select(Watch).where(Watch.active.is_(True), Watch.next_at <= now)).all()
        for watch in due:
            claimed = session.execute(
                update(Watch)
                .where(Watch.id == watch.id, Watch.next_at == watch.next_at)
                .values(next_at=now + timedelta(seconds=watch.every_seconds))
                .execution_options(synchronize_session=False)
            )
            session.commit()
            if claimed.rowcount != 1:
                continue
            start_check(session=session, watch=session.get(Watch, watch.id), settings=settings)
            fired += 1
    return fired


def start_check(*, session: Session, watch: Watch, settings: Settings | None = None) -> WatchCheck:
    """Queue the check's runs (one per pair, all at once), or skip it and say why: a busy host, the hosts
    removed, a queue cap. A skipped check is not a verdict."""
    environment = session.get(Environment, watch.environment_id)
    check = WatchCheck(watch_id=watch.id, at=utcnow(), run_ids=[])
    session.add(check)
    session.flush()
    by = f"{watch.requested_by} (watch #{watch.id})"[:64]
    try:
        pairs = _pairs(environment, watch)
        busy = busy_with(session, [host.id for pair in pairs for host in pair])
        if busy:
            return _skip(session, check, f"skipped: the hosts were busy with {busy}")
        runs = []
        for client, server in pairs:
            run_in = check_run(watch, client_host_id=client.id, server_host_id=server.id)
            run = run_service.create_run(
                session=session,
                environment=environment,
                run_in=run_in,
                requested_by=by,
                settings=settings,
                commit=False,
            )
            run.watch_check_id = check.id
            runs.append(run)
        session.flush()
        check.run_ids = [run.id for run in runs]
        session.commit()
        return check
    except (FieldError, LimitReached, ValidationError) as refused:
        session.rollback()
        check = WatchCheck(watch_id=watch.id, at=utcnow(), run_ids=[])
        session.add(check)
        return _skip(session, check, f"skipped: {_refusal_text(refused)}")


def _refusal_text(refused: Exception) -> str:
    """A refusal in the words its layer wrote: a stored watch the run's schema refuses (one stored before
    the watch's fields were checked against it) names the field, e.g. "sockbuf_bytes: ... at least 4 KiB"."""
    if isinstance(refused, ValidationError):
        error = refused.errors()[0]
        return f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
    return getattr(refused, "message", None) or str(refused)


def _skip(session: Session, check: WatchCheck, reason: str) -> WatchCheck:
    check.status, check.verdict, check.reason = CheckStatus.skipped, Verdict.skipped, reason[:2000]
    session.commit()
    return check


# -- judging --------------------------------------------------------------------------------------
def requirement_now(session: Session, environment: Environment, watch: Watch) -> Required | None:
    """What the path must carry now: the stored requirement (recomputed by every import), or the threshold."""
    analysis = stored_analysis(session=session, environment=environment)
    req = analysis.requirement if analysis is not None else None
    threads = [(n.thread, n.required_bytes_per_second) for n in req.threads.values()] if req else []
    return required_for(
        thread_required=threads,
        summed_required=req.summed_required_bytes_per_second if req else None,
        all_node_pairs=watch.all_node_pairs,
        threshold=watch.threshold_bytes_per_second,
    )


def judge_run(*, session: Session, run_id: int, settings: Settings | None = None) -> WatchCheck | None:
    """A run ended: when it was the last of its check, judge the check (once: a conditional update) and
    move the watch's state. Called by the worker as each run ends."""
    run = session.get(Run, run_id)
    if run is None or run.watch_check_id is None:
        return None
    check = session.get(WatchCheck, run.watch_check_id)
    if check is None or check.status is not CheckStatus.running:
        return None
    runs = [session.get(Run, i) for i in check.run_ids]
    if any(r is not None and not r.status.finished for r in runs):
        return None
    watch = session.get(Watch, check.watch_id)
    environment = session.get(Environment, watch.environment_id)
    values = _judgement(session, environment, watch, [r for r in runs if r is not None])
    judged = session.execute(
        update(WatchCheck)
        .where(WatchCheck.id == check.id, WatchCheck.status == CheckStatus.running)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    if judged.rowcount != 1:  # another worker judged it
        session.rollback()
        return None
    session.refresh(check)
    # the verdict and the state it leads to in one transaction: a worker that dies between them
    # leaves neither, and the check is judged again (it is still running)
    move_state(session, watch, check, settings)
    session.commit()
    return check


# redoprobe's error codes (its client's "error" event) that say the link itself did not carry the run:
# refused or unreachable, no answer, the handshake lost on the way, the peer gone mid-run. The server
# probe was listening when the client started (the run waits for that), so none is a host down.
LINK_DOWN_CODES = frozenset({"connect", "timeout", "handshake_timeout", "peer_lost"})


def link_down(session: Session, run: Run) -> str | None:
    """The client's error message when `run` failed because the link did not carry it, else None."""
    if run.status is not RunStatus.failed:
        return None
    lines = session.scalars(
        select(RunEvent.line).where(RunEvent.run_id == run.id, RunEvent.role == "client", RunEvent.event == "error")
    )
    for line in lines:
        try:
            data = parse_line(line).data
        except ProbeOutputError:
            continue
        if data.get("code") in LINK_DOWN_CODES:
            return str(data.get("message") or data["code"])
    return None


def _judgement(session: Session, environment: Environment, watch: Watch, runs: list[Run]) -> dict:
    """A check's verdict from its runs: their summed throughput against the requirement. A run the link
    did not carry (refused, timed out, lost) measured 0 bytes/s, a failure; any other run without a
    measurement (a busy host, an SSH failure, redolab stopped) makes the check skipped, never a failure."""
    down = {r.id: why for r in runs if (why := link_down(session, r)) is not None}
    unmeasured = [
        r for r in runs if r.id not in down and (r.status is not RunStatus.succeeded or not r.bytes_per_second)
    ]
    required = requirement_now(session, environment, watch)
    values = {
        "required_bytes_per_second": required.bytes_per_second if required else None,
        "required_basis": (required.basis if required else "no redo history yet")[:300],
    }
    if unmeasured or not runs:
        first = unmeasured[0] if unmeasured else None
        why = f"run #{first.id} {first.status.value}: {first.failure_reason or 'no throughput'}" if first else "no run"
        return values | {
            "status": CheckStatus.skipped,
            "verdict": Verdict.skipped,
            "reason": f"not measured ({why})"[:2000],
        }
    measured = sum(0.0 if r.id in down else r.bytes_per_second for r in runs)
    p99 = [
        s.ack_p99_seconds
        for s in session.scalars(select(RunSummary).where(RunSummary.run_id.in_([r.id for r in runs])))
        if s.ack_p99_seconds is not None
    ]
    verdict = verdict_of(measured, required.bytes_per_second if required else None, watch.margin_ratio)
    reasons = ["no redo history yet: nothing to judge against"] if required is None else []
    reasons += [f"run #{i}: the link did not carry it ({why}), 0 bytes/s" for i, why in down.items()]
    reason = "; ".join(reasons)
    return values | {
        "status": CheckStatus.judged,
        "verdict": verdict,
        "measured_bytes_per_second": measured,
        "sync_p99_seconds": max(p99) if p99 else None,
        "reason": reason[:2000],
    }


def move_state(session: Session, watch: Watch, check: WatchCheck | None, settings: Settings | None) -> bool:
    """The state from the last N verdicts; a change is one conditional update (state and transition number
    as read) with its notifications, in the caller's transaction: True when this call changed it."""
    verdicts = list(
        reversed(
            session.scalars(
                select(WatchCheck.verdict)
                .where(WatchCheck.watch_id == watch.id, WatchCheck.status == CheckStatus.judged)
                .order_by(WatchCheck.id.desc())
                .limit(watch.of_n)
            ).all()
        )
    )
    session.refresh(watch)
    new = next_state(watch.state, [v for v in verdicts if v is not None], agree_m=watch.agree_m, of_n=watch.of_n)
    if new is watch.state:
        return False
    old, seen = watch.state, watch.transitions
    moved = session.execute(
        update(Watch)
        .where(Watch.id == watch.id, Watch.state == old, Watch.transitions == seen)
        .values(state=new, state_since=utcnow(), transitions=seen + 1)
        .execution_options(synchronize_session=False)
    )
    if moved.rowcount != 1:  # another worker moved it first
        return False
    session.refresh(watch)
    environment = session.get(Environment, watch.environment_id)
    if old is not WatchState.unknown or new is not WatchState.ok:  # the first OK is no news
        queue_notifications(
            session=session,
            watch=watch,
            environment=environment,
            check=check,
            from_state=old.value,
            to_state=new.value,
            transition=seen + 1,
            settings=settings or get_settings(),
        )
    log.info("watch %s (%s): %s -> %s", watch.id, watch.path_label, old.value, new.value)
    return True
