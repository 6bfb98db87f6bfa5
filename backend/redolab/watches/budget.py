"""Notifications with a budget: at most BUDGET_PER_HOUR state changes an hour are sent to one receiver,
and at most as many of one watch's changes; the ones over it are folded, and one digest per watch and
receiver (the newest change, with how many were folded since when) goes out as soon as the receiver's
last hour has room again. A watch that changed state FLAPPING_CHANGES times or more within the hour is
named flapping in what is sent."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from redolab.core.db import utcnow
from redolab.watches.models import Notification

BUDGET_PER_HOUR = 12  # per receiver, and per watch: an hour of a flapping link is 12 messages, then a digest
FLAPPING_CHANGES = 4  # changes within an hour that make a watch "flapping"
WINDOW = timedelta(hours=1)
COUNTED = ("pending", "sending", "delivered", "failed")  # what a receiver got (or is getting)


def changes_last_hour(session: Session, watch_id: int, now: datetime) -> int:
    """The watch's state changes within the last hour (notices and tests aside), as its notifications show."""
    return session.scalar(
        select(func.count(func.distinct(Notification.transition))).where(
            Notification.watch_id == watch_id, Notification.transition > 0, Notification.created_at > now - WINDOW
        )
    )


def _sent_to(session: Session, receiver_id: int, now: datetime, *, besides: int | None = None) -> int:
    """What the receiver got (or is getting) within the last hour, the row `besides` left out."""
    query = select(func.count(Notification.id)).where(
        Notification.receiver_id == receiver_id,
        Notification.status.in_(COUNTED),
        Notification.created_at > now - WINDOW,
    )
    return session.scalar(query if besides is None else query.where(Notification.id != besides))


def fold_over_budget(session: Session, rows: list[Notification], now: datetime | None = None) -> int:
    """Fold the rows of one state change just queued (pending) when their receiver, or their watch, used
    its hourly budget already. In the caller's transaction. Returns how many were folded."""
    now = now or utcnow()
    pending = [row for row in rows if row.status == "pending" and row.receiver_id is not None]
    if not pending:
        return 0
    watch_id, transition = pending[0].watch_id, pending[0].transition
    watch_sent = session.scalar(
        select(func.count(func.distinct(Notification.transition))).where(
            Notification.watch_id == watch_id,
            Notification.transition > 0,
            Notification.transition != transition,
            Notification.status.in_(COUNTED),
            Notification.created_at > now - WINDOW,
        )
    )
    folded = 0
    for row in pending:
        over_receiver = _sent_to(session, row.receiver_id, now, besides=row.id) >= BUDGET_PER_HOUR
        if over_receiver or watch_sent >= BUDGET_PER_HOUR:
            which = "the receiver's" if over_receiver else "the watch's"
            row.status = "folded"
            row.last_result = f"over {which} {BUDGET_PER_HOUR} an hour: folded into the next digest"
            folded += 1
    session.flush()
    return folded


def release_digests(session: Session, now: datetime | None = None) -> int:
    """For every watch and receiver with folded changes whose receiver has room in its last hour again:
    the newest folded change is sent, saying how many were folded since when; the others are marked
    digested. Each row moves once (conditional updates from "folded"). Returns the digests released."""
    now = now or utcnow()
    pairs = session.execute(
        select(Notification.watch_id, Notification.receiver_id, func.count(Notification.id),
               func.min(Notification.created_at), func.max(Notification.transition))
        .where(Notification.status == "folded", Notification.receiver_id.is_not(None))
        .group_by(Notification.watch_id, Notification.receiver_id)
    ).all()  # fmt: skip
    released = 0
    for watch_id, receiver_id, count, since, newest in pairs:
        if _sent_to(session, receiver_id, now) >= BUDGET_PER_HOUR:
            continue
        row = session.scalar(
            select(Notification).where(
                Notification.watch_id == watch_id,
                Notification.receiver_id == receiver_id,
                Notification.transition == newest,
                Notification.status == "folded",
            )
        )
        if row is None:
            continue
        payload = dict(row.payload)
        payload["folded"] = {"changes": count, "since": since.isoformat(timespec="seconds")}
        moved = session.execute(
            update(Notification)
            .where(Notification.id == row.id, Notification.status == "folded")
            .values(status="pending", payload=payload, next_attempt_at=now, last_result=f"digest of {count} changes")
            .execution_options(synchronize_session=False)
        ).rowcount
        session.execute(
            update(Notification)
            .where(
                Notification.watch_id == watch_id,
                Notification.receiver_id == receiver_id,
                Notification.status == "folded",
                Notification.transition < newest,
            )
            .values(status="digested", last_result=f"told in the digest of transition {newest}")
            .execution_options(synchronize_session=False)
        )
        released += moved
    session.commit()
    return released
