"""The notification of a watch's state change as receivers get it: the payload (documented in
watches.notify), one row per receiver, and its renderings: webhook JSON and its signature, Slack,
Teams, mail."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from datetime import datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from redolab.core.config import Settings
from redolab.core.db import utcnow
from redolab.core.units import format_byte_rate, format_byte_rate_in_mbit, ratio_as_percent
from redolab.watches.budget import FLAPPING_CHANGES, changes_last_hour, fold_over_budget
from redolab.watches.models import Notification, NotificationReceiver, Watch, WatchCheck, WatchState

log = logging.getLogger("redolab.notify")

EVENT = "redolab.watch.state_changed"
TEST_EVENT = "redolab.receiver.test"
SIGNATURE_HEADER = "X-Redolab-Signature"
TIMESTAMP_HEADER = "X-Redolab-Timestamp"


# ---------------------------------------------------------------------------------------------- payload


def _rate_text(bytes_per_second: float | None) -> str | None:
    """A rate in MiB/s (redo's unit) with the link's Mbit/s beside it, so measured and required compare."""
    if bytes_per_second is None:
        return None
    return f"{format_byte_rate(bytes_per_second)} ({format_byte_rate_in_mbit(bytes_per_second)})"


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


def notification_payload(
    *, watch: Watch, environment, check: WatchCheck | None, from_state, to_state, settings: Settings
) -> dict[str, Any]:
    """The documented JSON of one state change (see the module's docstring); plain values only.
    `check` is the check that decided it (None when no check did, e.g. a silence ending)."""
    base = settings.public_url.rstrip("/")
    measured = check.measured_bytes_per_second if check is not None else None
    required = check.required_bytes_per_second if check is not None else None
    run_ids = list(check.run_ids or []) if check is not None else []
    silenced = watch.silenced_until if watch.silenced_until is not None and watch.silenced_until > utcnow() else None
    return {
        "event": EVENT,
        "environment": {"id": environment.id, "name": environment.name},
        "watch": {"id": watch.id, "name": watch.name, "path": watch.path_label},
        "from_state": WatchState(from_state).value,
        "to_state": WatchState(to_state).value,
        "state_label": WatchState(to_state).label,
        "measured_bytes_per_second": measured,
        "required_bytes_per_second": required,
        "required_basis": check.required_basis if check is not None else "",
        "measured": _rate_text(measured),
        "required": _rate_text(required),
        "headroom_ratio": measured / required - 1 if measured is not None and required else None,
        "silenced_until": _iso(silenced),
        "at": _iso(utcnow()),
        "links": {
            "watch": f"{base}/watches/{watch.id}",
            "run": f"{base}/runs/{run_ids[0]}" if run_ids else None,
            "plan": f"{base}/environments/{environment.id}#plan",
        },
    }


def sample_payload(*, receiver: NotificationReceiver, settings: Settings) -> dict[str, Any]:
    """A test message: the state-change payload's shape with example figures, event redolab.receiver.test."""
    base = settings.public_url.rstrip("/")
    measured, required = 100 * 1024 * 1024.0, 50e6
    return {
        "event": TEST_EVENT,
        "environment": {"id": None, "name": "(test message)"},
        "watch": {"id": None, "name": f"test of receiver {receiver.name}", "path": "primary -> standby"},
        "transition": 0,
        "from_state": WatchState.ok.value,
        "to_state": WatchState.ok.value,
        "state_label": WatchState.ok.label,
        "measured_bytes_per_second": measured,
        "required_bytes_per_second": required,
        "required_basis": "an example figure",
        "measured": _rate_text(measured),
        "required": _rate_text(required),
        "headroom_ratio": measured / required - 1,
        "silenced_until": None,
        "at": _iso(utcnow()),
        "links": {"watch": f"{base}/", "run": None, "plan": f"{base}/"},
    }


# ------------------------------------------------------------------------------------------------ queue


def queue_notifications(
    *,
    session: Session,
    watch: Watch,
    environment,
    check: WatchCheck | None,
    from_state,
    to_state,
    transition: int,
    settings: Settings,
) -> list[Notification]:
    """One row per receiver of the watch that still exists ("silenced" while the watch is silenced,
    else "pending"), in the caller's transaction: flushed, not committed. A row that exists already for
    (watch, transition, receiver) is kept as it is (insert ... on conflict do nothing)."""
    wanted = [rid for rid in (watch.receiver_ids or []) if isinstance(rid, int)]
    if not wanted:
        return []
    existing = list(session.scalars(select(NotificationReceiver.id).where(NotificationReceiver.id.in_(wanted))))
    if not existing:
        return []
    now = utcnow()
    status = "silenced" if watch.silenced_until is not None and watch.silenced_until > now else "pending"
    payload = notification_payload(
        watch=watch, environment=environment, check=check, from_state=from_state, to_state=to_state, settings=settings
    )
    payload["transition"] = transition
    payload["changes_last_hour"] = changes_last_hour(session, watch.id, now) + 1  # this one too
    payload["flapping"] = payload["changes_last_hour"] >= FLAPPING_CHANGES
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    for receiver_id in sorted(set(existing)):
        session.execute(
            insert(Notification)
            .values(
                watch_id=watch.id,
                transition=transition,
                receiver_id=receiver_id,
                from_state=WatchState(from_state).value,
                to_state=WatchState(to_state).value,
                payload=payload,
                status=status,
                attempts=0,
                next_attempt_at=now,
                claimed_by=None,
                last_result="silenced: not sent" if status == "silenced" else "",
                created_at=now,
            )
            .on_conflict_do_nothing()
        )
    session.flush()
    mine = select(Notification).where(
        Notification.watch_id == watch.id, Notification.transition == transition, Notification.receiver_id.in_(existing)
    )
    rows = list(session.scalars(mine.order_by(Notification.id)))
    fold_over_budget(session, rows, now)  # over the receiver's or the watch's hourly budget: a digest later
    return rows


# ----------------------------------------------------------------------------------------------- render


def _headline(payload: dict[str, Any]) -> str:
    environment, watch = payload["environment"], payload["watch"]
    if payload.get("notice"):  # a silence or a deletion, not a state change
        return f"{payload['notice']}: {environment['name']}, {watch['path']}"
    was = WatchState(payload["from_state"]).label
    test = "Test message: " if payload.get("event") == TEST_EVENT else ""
    flapping = (
        f"FLAPPING ({payload.get('changes_last_hour')} changes in the last hour), " if payload.get("flapping") else ""
    )
    return f"{test}{flapping}{payload['state_label']} (was {was}): {environment['name']}, {watch['path']}"


def _facts(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) lines every format shows."""
    headroom = payload.get("headroom_ratio")
    required = payload.get("required") or "not known"
    if payload.get("required_basis"):
        required += f", {payload['required_basis']}"
    facts = [
        ("Environment", str(payload["environment"]["name"])),
        ("Watch", str(payload["watch"]["name"])),
        ("Path", str(payload["watch"]["path"])),
        ("State", f"{payload['state_label']} (was {WatchState(payload['from_state']).label})"),
        ("Measured", payload.get("measured") or "not measured"),
        ("Required", required),
        ("Headroom", f"{ratio_as_percent(headroom)} %" if headroom is not None else "not known"),
        ("At", str(payload["at"])),
    ]
    if payload.get("silenced_until"):
        facts.append(("Silenced until", str(payload["silenced_until"])))
    folded = payload.get("folded")
    if folded:
        said = f"{folded['changes']} changes since {folded['since']} over the hourly budget; this is the newest"
        facts.append(("Digest", said))
    return facts


def _links(payload: dict[str, Any]) -> list[tuple[str, str]]:
    names = {"watch": "The watch", "run": "The run", "plan": "The plan"}
    return [(names[key], url) for key, url in payload.get("links", {}).items() if url and key in names]


def _slack_escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack(payload: dict[str, Any]) -> dict[str, Any]:
    """Slack's incoming-webhook message: `text` (the notification's fallback) and Block Kit blocks."""
    lines = "\n".join(f"*{label}:* {_slack_escaped(text)}" for label, text in _facts(payload))
    links = " · ".join(f"<{url}|{label}>" for label, url in _links(payload))
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": f"redolab: {_headline(payload)}"[:150]}},
        {"type": "section", "text": {"type": "mrkdwn", "text": lines[:3000]}},
    ]
    if links:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": links[:3000]}})
    return {"text": _slack_escaped(f"redolab: {_headline(payload)}"), "blocks": blocks}


_TEAMS_COLOR = {"failing": "Attention", "at_risk": "Warning", "ok": "Good", "unknown": "Default"}
# Teams reads Markdown in a card's TextBlock and facts (links, emphasis, lists): a backslash makes each of
# these characters itself (CommonMark's escapes), and a line's start is never a list, heading or quote.
_TEAMS_INLINE = re.compile(r"([\\`*_\[\]~<])")
_TEAMS_LINE_START = re.compile(r"^([ \t]*)([#>+-]|\d{1,9}(?=[.)]))", re.MULTILINE)


def teams_text(text: str) -> str:
    """`text` as Teams shows it literally in an Adaptive Card (names are text, never Markdown)."""
    escaped = _TEAMS_INLINE.sub(r"\\\1", text)
    return _TEAMS_LINE_START.sub(lambda m: m[1] + (m[2] + "\\" if m[2][0].isdigit() else "\\" + m[2]), escaped)


def _teams(payload: dict[str, Any]) -> dict[str, Any]:
    """A Teams message with one Adaptive Card (what Teams incoming webhooks and Workflows accept)."""
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
            {
                "type": "TextBlock",
                "text": teams_text(f"redolab: {_headline(payload)}"),
                "weight": "Bolder",
                "size": "Medium",
                "wrap": True,
                "color": _TEAMS_COLOR.get(payload["to_state"], "Default"),
            },
            {
                "type": "FactSet",
                "facts": [{"title": label, "value": teams_text(text)} for label, text in _facts(payload)],
            },
        ],
        "actions": [{"type": "Action.OpenUrl", "title": label, "url": url} for label, url in _links(payload)],
    }
    return {
        "type": "message",
        "attachments": [
            {"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": None, "content": card}
        ],
    }


def render(receiver_kind: str, payload: dict[str, Any]) -> tuple[str, bytes]:
    """(content type, body) of a webhook-like receiver: "webhook" the payload as is, "slack" and "teams"
    in their formats."""
    if receiver_kind == "webhook":
        document = payload
    elif receiver_kind == "slack":
        document = _slack(payload)
    elif receiver_kind == "teams":
        document = _teams(payload)
    else:
        raise ValueError(f"no HTTP rendering for a {receiver_kind} receiver")
    return "application/json", json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def email_message(payload: dict[str, Any], settings: Settings, to: str) -> EmailMessage:
    """The alert mail: subject with the state, environment and path; a text body with the facts and links."""
    message = EmailMessage()
    message["Subject"] = f"[redolab] {_headline(payload)}"[:250]
    message["From"] = settings.smtp_from
    message["To"] = to
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain="redolab")
    width = max(len(label) for label, _ in _facts(payload)) + 1
    lines = [f"redolab: {_headline(payload)}", ""]
    lines += [f"{label + ':':<{width}} {text}" for label, text in _facts(payload)]
    lines += [""] + [f"{label}: {url}" for label, url in _links(payload)]
    lines += ["", "-- ", "Sent by redolab's link watch. Silence a watch on its page during maintenance."]
    message.set_content("\n".join(lines) + "\n")
    return message


def signature(secret: str, body: bytes) -> str:
    """The X-Redolab-Signature value: "sha256=" + hex HMAC-SHA256 of `body` keyed by `secret`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


# ------------------------------------------------------------------------------------- after a silence


def release_ended_silences(session: Session, now: datetime | None = None) -> int:
    """Every watch whose silence has ended with changes kept silent: the newest one is sent now when
    the state is not what its receivers last heard (ok→failing during maintenance is still news after
    it; ok→failing→ok is not), the others are marked superseded. Each row moves once (a conditional
    update from "silenced"), however many workers call this. Returns the rows released to be sent."""
    now = now or utcnow()
    ended = select(Watch.id).where(or_(Watch.silenced_until.is_(None), Watch.silenced_until <= now))
    watch_ids = session.scalars(
        select(Notification.watch_id)
        .distinct()
        .where(Notification.status == "silenced", Notification.watch_id.in_(ended))
    ).all()
    released = 0
    for watch_id in watch_ids:
        released += _release(session, watch_id, now)
    return released


def _release(session: Session, watch_id: int, now: datetime) -> int:
    silenced = (Notification.watch_id == watch_id, Notification.status == "silenced")
    newest = session.execute(
        select(Notification.transition, Notification.to_state)
        .where(*silenced)
        .order_by(Notification.transition.desc())
        .limit(1)
    ).first()
    if newest is None:
        return 0
    heard = session.scalar(
        select(Notification.to_state)
        .where(
            Notification.watch_id == watch_id,
            Notification.status != "silenced",
            Notification.status != "superseded",
            Notification.transition < newest.transition,
        )
        .order_by(Notification.transition.desc())
        .limit(1)
    )
    news = newest.to_state != (heard or WatchState.ok.value)  # heard nothing yet: the first OK is no news
    sent = 0
    if news:
        sent = session.execute(
            update(Notification)
            .where(*silenced, Notification.transition == newest.transition)
            .values(status="pending", next_attempt_at=now, last_result="silence ended: sent now")
            .execution_options(synchronize_session=False)
        ).rowcount
    session.execute(
        update(Notification)
        .where(*silenced, Notification.transition <= newest.transition)
        .values(status="superseded", last_result="silenced: not sent; a later state was told, or none was news")
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return sent
