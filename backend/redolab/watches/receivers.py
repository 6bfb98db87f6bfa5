"""Notification receivers (admins set them): create, list, delete.

A webhook, Slack or Teams URL must fall under an entry of REDOLAB_WEBHOOK_ALLOW when that list is set,
and may not be aimed inward (loopback, private, link-local) without it: a webhook is a request redolab
sends on a user's behalf, from inside its network (watches.targets; checked again at every send).
A webhook's signing secret is stored encrypted and returned once, by create_receiver; nothing reads it
back but the sender (notify.py)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from redolab.core.config import Settings
from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.core.fields import name_key
from redolab.core.security import encrypt_secret
from redolab.watches.models import Notification, NotificationReceiver, Watch
from redolab.watches.schemas_receivers import URL_KINDS, ReceiverCreate
from redolab.watches.targets import named_by, refusal

_LOOK_ALIKE = " (names that differ only in case, width or invisible characters are the same name)"


@dataclass(frozen=True)
class CreatedReceiver:
    receiver: NotificationReceiver
    signing_secret: str | None  # a webhook's: shown to the admin this once, stored only encrypted


def create_receiver(
    *, session: Session, receiver_in: ReceiverCreate, created_by: str, secret_key: str, settings: Settings
) -> CreatedReceiver:
    """Store a receiver; a webhook gets a signing secret (made here unless given), returned this once."""
    if receiver_in.url is not None:
        _check_target(receiver_in.url, settings.webhook_allow)
    _check_name_free(session, receiver_in.name)
    secret = None
    if receiver_in.kind == "webhook":
        given = receiver_in.signing_secret
        secret = given.get_secret_value() if given is not None else secrets.token_urlsafe(32)
    receiver = NotificationReceiver(
        name=receiver_in.name,
        kind=receiver_in.kind,
        url=receiver_in.url if receiver_in.kind in URL_KINDS else None,
        email_to=receiver_in.email_to if receiver_in.kind == "email" else None,
        encrypted_secret=encrypt_secret(secret, secret_key=secret_key) if secret is not None else None,
        created_by=created_by,
    )
    session.add(receiver)
    try:
        session.commit()
    except IntegrityError:  # a simultaneous create took the name
        session.rollback()
        raise FieldError("name", f"A receiver named '{receiver_in.name}' already exists.") from None
    # Only a secret the admin did not give is shown back: a given one they already have.
    return CreatedReceiver(receiver, secret if receiver_in.signing_secret is None else None)


def _check_target(url: str, allow: list[str]) -> None:
    """Refuse a URL outside REDOLAB_WEBHOOK_ALLOW (when set), or aimed inward without it (watches.targets)."""
    if allow and not named_by(url, allow):
        raise FieldError(
            "url",
            "This URL is under no entry of REDOLAB_WEBHOOK_ALLOW "
            f"({', '.join(allow)}): use one of them, or ask whoever runs redolab to add it.",
            status_code=422,
        )
    if problem := refusal(url, allow):
        raise FieldError(
            "url", f"This URL cannot receive notifications: {problem.removeprefix('refused: ')}.", status_code=422
        )


def _check_name_free(session: Session, name: str) -> None:
    key = name_key(name)
    for taken in session.scalars(select(NotificationReceiver.name)):
        if name_key(taken) == key:
            alike = "" if taken == name else _LOOK_ALIKE
            raise FieldError("name", f"A receiver named '{taken}' already exists{alike}.")


def list_receivers(*, session: Session) -> list[NotificationReceiver]:
    return list(session.scalars(select(NotificationReceiver).order_by(NotificationReceiver.name)))


def get_receiver(*, session: Session, receiver_id: int) -> NotificationReceiver:
    return get_or_404(session, NotificationReceiver, receiver_id, what="Notification receiver")


def delete_receiver(*, session: Session, receiver: NotificationReceiver) -> None:
    """Remove a receiver, and its id from every watch (SQLite may give a later receiver the same id,
    which must not inherit these watches). Notifications not yet sent to it are given up."""
    for watch in session.scalars(select(Watch)):
        if receiver.id in (watch.receiver_ids or []):
            watch.receiver_ids = [rid for rid in watch.receiver_ids if rid != receiver.id]
    pending = select(Notification).where(
        Notification.receiver_id == receiver.id, Notification.status.in_(("pending", "sending"))
    )
    for notification in session.scalars(pending):
        notification.status, notification.last_result = "failed", "the receiver was removed"
    session.delete(receiver)
    session.commit()
