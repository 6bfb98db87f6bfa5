"""Delivering the queued notifications: every receiver in its own thread, newest state change first, a
few rows per receiver per poll, and a circuit breaker per receiver, so that one dead receiver delays only
itself (a healthy one gets each change within a poll). Claiming, sending and recording one row are
watches.notify's."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, select, update
from sqlalchemy.orm import sessionmaker

from redolab.core.config import Settings
from redolab.core.db import utcnow
from redolab.core.units import format_count
from redolab.watches.models import Notification, NotificationReceiver
from redolab.watches.notify import MAX_ATTEMPTS, STALE_SENDING, Delivery, Target, backoff, send_now
from redolab.watches.results import RESULT_LENGTH

log = logging.getLogger("redolab.notify")


def _release_stale(sessions: sessionmaker, now: datetime) -> int:
    """Rows a dead worker left in "sending" go back to pending (counted as an attempt, so a receiver
    that kills its sender is given up like any other)."""
    with sessions() as session:
        result = session.execute(
            update(Notification)
            .where(Notification.status == "sending", Notification.next_attempt_at < now - STALE_SENDING)
            .values(
                status=case((Notification.attempts + 1 >= MAX_ATTEMPTS, "failed"), else_="pending"),
                attempts=Notification.attempts + 1,
                claimed_by=None,
                next_attempt_at=now,
                last_result="interrupted while sending (its worker stopped)",
            )
            .execution_options(synchronize_session=False)
        )
        session.commit()
        return result.rowcount or 0


def _claim(sessions: sessionmaker, notification_id: int, worker_id: str, now: datetime) -> bool:
    """pending -> sending by one conditional update: of two workers, one gets the row. The claim's time
    is kept in next_attempt_at (a claim older than STALE_SENDING is released)."""
    with sessions() as session:
        result = session.execute(
            update(Notification)
            .where(
                Notification.id == notification_id,
                Notification.status == "pending",
                Notification.next_attempt_at <= now,
            )
            .values(status="sending", claimed_by=worker_id[:100], next_attempt_at=now)
            .execution_options(synchronize_session=False)
        )
        session.commit()
        return result.rowcount == 1


def _load(sessions: sessionmaker, notification_id: int) -> tuple[int, dict[str, Any], Target | None]:
    with sessions() as session:
        notification = session.get(Notification, notification_id)
        if notification is None:  # its watch was deleted meanwhile
            return 0, {}, None
        receiver = session.get(NotificationReceiver, notification.receiver_id) if notification.receiver_id else None
        return notification.attempts, dict(notification.payload), Target.of(receiver) if receiver else None


def _record(
    sessions: sessionmaker, notification_id: int, worker_id: str, attempts: int, delivery: Delivery, now: datetime
) -> str:
    attempts += 1
    if delivery.delivered:
        values = {"status": "delivered", "delivered_at": now}
    elif delivery.final or attempts >= MAX_ATTEMPTS:
        values = {"status": "failed"}
    else:
        values = {"status": "pending", "next_attempt_at": now + backoff(attempts)}
    with sessions() as session:
        session.execute(
            update(Notification)
            .where(
                Notification.id == notification_id,
                Notification.status == "sending",
                Notification.claimed_by == worker_id[:100],
            )
            .values(attempts=attempts, last_result=delivery.result[:RESULT_LENGTH], claimed_by=None, **values)
            .execution_options(synchronize_session=False)
        )
        session.commit()
    return values["status"]


BREAKER_FAILURES = 3  # attempts failed in a row (not a final refusal) that open a receiver's breaker
BREAKER_SECONDS = 300  # how long it is then skipped, its rows left pending (the receivers list shows it)
PER_RECEIVER = 5  # rows one receiver is sent per poll, newest first: a dead one holds only its own thread
Key = tuple[str, int | None]  # (the database, the receiver): one process may serve several databases
_IN_FLIGHT: set[Key] = set()  # receivers whose rows a thread of this process is sending now
_LOCK = threading.Lock()
_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="redolab-notify")


def key(sessions: sessionmaker, receiver_id: int | None) -> Key:
    bind = sessions.kw.get("bind")
    return (str(getattr(bind, "url", bind)), receiver_id)


def _failing(sessions: sessionmaker, now: datetime) -> set[int]:
    """The receivers whose breaker is open now."""
    with sessions() as session:
        return set(
            session.scalars(select(NotificationReceiver.id).where(NotificationReceiver.failing_until > now)).all()
        )


def _note(sessions: sessionmaker, receiver_id: int, delivery: Delivery, now: datetime) -> None:
    """One attempt's outcome on the receiver's breaker (one update: concurrent workers add up)."""
    ok = delivery.delivered or delivery.final
    failures = 0 if ok else NotificationReceiver.failures_in_row + 1
    until = now + timedelta(seconds=BREAKER_SECONDS)
    opened = case(
        (NotificationReceiver.failures_in_row + 1 >= BREAKER_FAILURES, until), else_=NotificationReceiver.failing_until
    )
    with sessions() as session:
        session.execute(
            update(NotificationReceiver)
            .where(NotificationReceiver.id == receiver_id)
            .values(failures_in_row=failures, failing_until=None if ok else opened)
            .execution_options(synchronize_session=False)
        )
        session.commit()
    if not ok:
        log.info("receiver %d: %s", receiver_id, delivery.result)


def _due_by_receiver(sessions: sessionmaker, now: datetime, limit: int) -> dict[int | None, list[int]]:
    """The due rows of each receiver, newest state change first (the news that matters most), at most
    PER_RECEIVER each; receivers whose breaker is open or whose rows are being sent are left for later."""
    with sessions() as session:
        rows = session.execute(
            select(Notification.id, Notification.receiver_id)
            .where(Notification.status == "pending", Notification.next_attempt_at <= now)
            .order_by(Notification.created_at.desc(), Notification.id.desc())
            .limit(limit)
        ).all()
    failing = _failing(sessions, now)
    found: dict[int | None, list[int]] = {}
    for notification_id, receiver_id in rows:
        if receiver_id in failing or key(sessions, receiver_id) in _IN_FLIGHT:
            continue
        mine = found.setdefault(receiver_id, [])
        if len(mine) < PER_RECEIVER:
            mine.append(notification_id)
    return found


def _deliver_one(sessions, notification_id: int, *, settings: Settings, secret_key: str, worker_id: str, now) -> bool:
    """Claim, send and record one row; False when another worker had it."""
    if not _claim(sessions, notification_id, worker_id, now):
        return False
    attempts, payload, target = _load(sessions, notification_id)
    if target is None:
        delivery = Delivery(False, "the receiver was removed", final=True)
    else:
        delivery = send_now(target, payload, notification_id=notification_id, settings=settings, secret_key=secret_key)
    status = _record(sessions, notification_id, worker_id, attempts, delivery, now)
    if target is not None:  # after the row: an open breaker never hides an attempt not yet recorded
        _note(sessions, target.receiver_id, delivery, now)
    log.info("notification %d to receiver %s: %s (%s)", notification_id, target.name if target else "(removed)",
             delivery.result, status)  # fmt: skip
    return True


def _deliver_receiver(sessions, receiver_id, ids: list[int], **send) -> int:
    """One receiver's rows in order, in its own thread; stops early when its breaker opens."""
    attempted = 0
    try:
        for notification_id in ids:
            if receiver_id is not None and receiver_id in _failing(sessions, send["now"]):
                break
            try:
                attempted += _deliver_one(sessions, notification_id, **send)
            except Exception:  # one row's trouble never stops the others, nor the worker
                log.exception("notification %d: not sent", notification_id)
    finally:
        with _LOCK:
            _IN_FLIGHT.discard(key(sessions, receiver_id))
    return attempted


def deliver_due(
    sessions: sessionmaker,
    *,
    settings: Settings,
    secret_key: str,
    worker_id: str,
    now: datetime | None = None,
    limit: int = 200,
    wait: bool = True,
) -> int:
    """Send the due notifications (pending, next_attempt_at <= now), each claimed first so no other worker
    sends it too: every receiver in its own thread, newest change first, at most PER_RECEIVER rows each
    per call, so a receiver that times out delays only itself; a receiver failing BREAKER_FAILURES times
    in a row is skipped for BREAKER_SECONDS. `wait` False returns at once (the worker's poll: a receiver
    still sending is skipped by the next poll); True waits and returns how many were attempted. Never
    raises for a bad receiver; each attempt takes at most REDOLAB_NOTIFICATION_TIMEOUT_SECONDS."""
    now = now or utcnow()
    try:
        if released := _release_stale(sessions, now):
            were = "was" if released == 1 else "were"
            log.warning("%s %s left sending by a stopped worker: retried", format_count(released, "notification"), were)
        with _LOCK:
            due = _due_by_receiver(sessions, now, limit)
            _IN_FLIGHT.update(key(sessions, receiver_id) for receiver_id in due)
    except Exception:  # a database that went away: the worker's loop tries again later
        log.exception("notifications: could not read the due ones")
        return 0
    send = {"settings": settings, "secret_key": secret_key, "worker_id": worker_id, "now": now}
    futures = [_POOL.submit(_deliver_receiver, sessions, receiver_id, ids, **send) for receiver_id, ids in due.items()]
    if not wait:
        return sum(len(ids) for ids in due.values())
    return sum(future.result() for future in futures)
