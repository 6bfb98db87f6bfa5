"""Watches: a schedule of short runs on one path, each judged against the environment's current
requirement; the watch's state changes only when M of the last N judged checks agree, and each change
is a numbered transition whose notifications are sent exactly once (one row per receiver)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Integer, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from redolab.core.db import Base, UTCDateTime, enum_column, utcnow


class WatchState(StrEnum):
    unknown = "unknown"  # fewer than M judged checks so far
    ok = "ok"
    at_risk = "at_risk"  # keeps up, but with less headroom than the margin
    failing = "failing"  # carries less than the requirement

    @property
    def label(self) -> str:
        return {"unknown": "NOT YET KNOWN", "ok": "OK", "at_risk": "AT RISK", "failing": "FAILING"}[self.value]


class Verdict(StrEnum):
    ok = "ok"
    at_risk = "at_risk"
    failing = "failing"
    skipped = "skipped"  # not run or not measured (busy host, redolab down, a run that failed): never a failure


class CheckStatus(StrEnum):
    running = "running"  # its runs are queued or running
    judged = "judged"
    skipped = "skipped"


class Watch(Base):
    __tablename__ = "watches"
    __table_args__ = ({"info": {"contents": (7, "watch", False)}},)

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    # The path: one host pair (client sends, server receives), or every node pair of the cluster at once
    client_host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="SET NULL"))
    server_host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="SET NULL"))
    all_node_pairs: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    path_label: Mapped[str] = mapped_column(String(210))  # "p1 -> s1" or "all node pairs": a bounded metric label
    # Each check: a short run with these parameters
    every_seconds: Mapped[float] = mapped_column(Float, default=900.0)
    duration_seconds: Mapped[float] = mapped_column(Float, default=10.0)
    conns: Mapped[int] = mapped_column(Integer, default=1)
    message_bytes: Mapped[int] = mapped_column(BigInteger, default=1024 * 1024)
    sockbuf_bytes: Mapped[int | None] = mapped_column(BigInteger)
    # Judged against: the environment's requirement (per thread for one pair, summed for all node pairs),
    # or this threshold when set; AT RISK when the headroom over it is under margin_ratio
    threshold_bytes_per_second: Mapped[float | None] = mapped_column(Float)
    margin_ratio: Mapped[float] = mapped_column(Float, default=0.10)
    agree_m: Mapped[int] = mapped_column(Integer, default=2)
    of_n: Mapped[int] = mapped_column(Integer, default=3)
    receiver_ids: Mapped[list[int]] = mapped_column(JSON, default=list)  # who is told of each change
    state: Mapped[WatchState] = mapped_column(enum_column(WatchState), default=WatchState.unknown)
    state_since: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    transitions: Mapped[int] = mapped_column(Integer, default=0)  # the number of the last state change
    active: Mapped[bool] = mapped_column(Boolean, default=True, index=True)
    next_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    silenced_until: Mapped[datetime | None] = mapped_column(UTCDateTime())  # maintenance: no notifications
    silence_reason: Mapped[str] = mapped_column(String(300), default="")
    requested_by: Mapped[str] = mapped_column(
        String(64)
    )  # its owner: stop, silence and delete are theirs (or an admin's)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Deleted watches keep their checks and notifications for admins to read; nobody else sees them
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), index=True)
    deleted_by: Mapped[str] = mapped_column(String(64), default="", server_default="")
    # notices told to receivers beside state changes (silenced, deleted): numbered -1, -2, ... as transitions
    notices: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class WatchCheck(Base):
    """One occurrence of a watch: its runs, and what they measured against what was required then."""

    __tablename__ = "watch_checks"

    id: Mapped[int] = mapped_column(primary_key=True)
    watch_id: Mapped[int] = mapped_column(ForeignKey("watches.id", ondelete="CASCADE"), index=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    status: Mapped[CheckStatus] = mapped_column(enum_column(CheckStatus), default=CheckStatus.running)
    run_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    verdict: Mapped[Verdict | None] = mapped_column(enum_column(Verdict))
    measured_bytes_per_second: Mapped[float | None] = mapped_column(Float)  # as the receiver(s) counted, summed
    required_bytes_per_second: Mapped[float | None] = mapped_column(Float)
    required_basis: Mapped[str] = mapped_column(String(300), default="")
    sync_p99_seconds: Mapped[float | None] = mapped_column(Float)
    reason: Mapped[str] = mapped_column(Text, default="")  # why skipped, or what was judged


class NotificationReceiver(Base):
    """Where state changes are sent (set by admins): a webhook (JSON signed with HMAC-SHA256; Slack or
    Teams shaped) or an email address over the configured SMTP server. The signing secret is stored
    encrypted and never shown again."""

    __tablename__ = "notification_receivers"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[str] = mapped_column(String(10))  # webhook, slack, teams, email
    url: Mapped[str | None] = mapped_column(String(2000))
    email_to: Mapped[str | None] = mapped_column(String(320))
    encrypted_secret: Mapped[str | None] = mapped_column(Text)
    # its circuit breaker: attempts failed in a row, and until when it is skipped (shown as failing)
    failures_in_row: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    failing_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Notification(Base):
    """One state change told to one receiver, exactly once: (watch, transition, receiver) is unique, and a
    sender claims a row by a conditional update before it sends. Retried with backoff until delivered or
    given up; only the receiver's status is kept."""

    __tablename__ = "notifications"
    __table_args__ = (UniqueConstraint("watch_id", "transition", "receiver_id", name="uq_notification_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    watch_id: Mapped[int] = mapped_column(ForeignKey("watches.id", ondelete="CASCADE"), index=True)
    transition: Mapped[int] = mapped_column(Integer)
    receiver_id: Mapped[int | None] = mapped_column(ForeignKey("notification_receivers.id", ondelete="SET NULL"))
    from_state: Mapped[str] = mapped_column(String(20))
    to_state: Mapped[str] = mapped_column(String(20))
    payload: Mapped[dict] = mapped_column(JSON)  # the documented JSON (environment, path, measured, required, ...)
    status: Mapped[str] = mapped_column(
        String(12), default="pending", index=True
    )  # pending, sending, delivered, failed, silenced, superseded, folded (over the hourly budget), digested
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    claimed_by: Mapped[str | None] = mapped_column(String(100))
    last_result: Mapped[str] = mapped_column(String(300), default="")  # "HTTP 200", "SMTP 250", "timed out after 5 s"
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
