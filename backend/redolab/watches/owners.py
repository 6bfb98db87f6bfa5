"""Watches have owners: stopping, silencing and deleting what others rely on is its owner's (the user who
made it) or an admin's; a silence longer than a day is an admin's; the receivers a watch serves are told
when it is silenced or deleted (a notice, numbered -1, -2, ... beside the state changes' transitions)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from redolab.core.config import Settings
from redolab.core.db import utcnow
from redolab.core.errors import FieldError
from redolab.watches.messages import notification_payload
from redolab.watches.models import Notification, NotificationReceiver, Watch

OWNER_SILENCE = timedelta(days=1)  # the longest silence an owner sets alone; longer ones are an admin's
SILENCED_EVENT = "redolab.watch.silenced"
DELETED_EVENT = "redolab.watch.deleted"


def can_manage(user, watch: Watch) -> bool:
    return bool(getattr(user, "is_admin", False)) or user.username == watch.requested_by


def require_manager(user, watch: Watch, action: str) -> None:
    """403 unless `user` owns the watch or is an admin."""
    if not can_manage(user, watch):
        raise FieldError(
            "watch",
            f"Only {watch.requested_by} (who made watch '{watch.name}') or an admin can {action} it: others rely "
            "on its alerts.",
            403,
        )


def require_silence_allowed(user, until) -> None:
    """A silence of more than a day switches a link's alerting off for long: an admin's decision."""
    if getattr(user, "is_admin", False):
        return
    if until is not None and until - utcnow() > OWNER_SILENCE + timedelta(minutes=1):
        raise FieldError("until", "A silence longer than a day is an admin's: ask an admin, or silence for less.", 403)


def queue_notice(
    session: Session, *, watch: Watch, environment, event: str, by: str, settings: Settings, reason: str = ""
) -> list[Notification]:
    """Tell every receiver of the watch that it was silenced or deleted (sent even while silenced: it is
    the silence's own news). In the caller's transaction, flushed."""
    wanted = [rid for rid in (watch.receiver_ids or []) if isinstance(rid, int)]
    existing = sorted(set(session.scalars(select(NotificationReceiver.id).where(NotificationReceiver.id.in_(wanted)))))
    if not existing:
        return []
    watch.notices = (watch.notices or 0) + 1
    number = -watch.notices
    payload = notification_payload(
        watch=watch, environment=environment, check=None, from_state=watch.state, to_state=watch.state,
        settings=settings,
    )  # fmt: skip
    what = "silenced" if event == SILENCED_EVENT else "deleted"
    until = f" until {payload['silenced_until']}" if event == SILENCED_EVENT and payload["silenced_until"] else ""
    payload.update(
        event=event, transition=number, notice=f"Watch {what}{until} by {by}" + (f": {reason}" if reason else "")
    )
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    now = utcnow()
    for receiver_id in existing:
        session.execute(
            insert(Notification)
            .values(
                watch_id=watch.id, transition=number, receiver_id=receiver_id, from_state=watch.state.value,
                to_state=watch.state.value, payload=payload, status="pending", attempts=0, next_attempt_at=now,
                claimed_by=None, last_result="", created_at=now,
            )
            .on_conflict_do_nothing()
        )  # fmt: skip
    session.flush()
    mine = select(Notification).where(Notification.watch_id == watch.id, Notification.transition == number)
    return list(session.scalars(mine))
