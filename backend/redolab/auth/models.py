"""Users of the dashboard, their roles and their API tokens."""

from __future__ import annotations

import secrets
from datetime import datetime
from enum import StrEnum

from sqlalchemy import Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from redolab.core.db import Base, UTCDateTime, enum_column, utcnow


class Role(StrEnum):
    """viewer reads; operator also runs experiments; admin also manages hosts, credentials, users."""

    viewer = "viewer"
    operator = "operator"
    admin = "admin"

    @property
    def rank(self) -> int:
        return ("viewer", "operator", "admin").index(self.value)

    def allows(self, needed: Role) -> bool:
        return self.rank >= needed.rank


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[Role] = mapped_column(
        enum_column(Role),
        default=Role.admin,
        server_default=Role.admin.value,
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # A disabled user cannot log in, and every session and token of theirs stops working.
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Bumped when the password changes or an admin ends the user's sessions: bearer tokens carry the
    # epoch they were issued in and stop working when it moves on.
    auth_epoch: Mapped[int] = mapped_column(default=0, server_default="0")
    # Bearer tokens name the user by id and this random value, never by name: a user created later
    # with the same name, or with the same id (SQLite hands a deleted last row's id out again), is
    # another identity, and a token of the deleted one does not work for it.
    identity_key: Mapped[str] = mapped_column(String(32), default=lambda: secrets.token_hex(16))

    @property
    def bearer_subject(self) -> str:
        """What a bearer token names its user by: "<id>.<identity_key>"."""
        return f"{self.id}.{self.identity_key}"

    @property
    def active(self) -> bool:
        return self.disabled_at is None

    @property
    def can_operate(self) -> bool:
        """Runs, imports and changes (operator or admin): pages show those buttons only then."""
        return self.role.allows(Role.operator)

    @property
    def is_admin(self) -> bool:
        return self.role.allows(Role.admin)


class UserSession(Base):
    """A browser session. The cookie holds a random key; only its SHA-256 is stored, so logout,
    a password change or an admin can end it on the server."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    client_address: Mapped[str | None] = mapped_column(String(64))


class AuditEvent(Base):
    """Who did what, when, from where. Holds names and ids, never request bodies or secrets."""

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    username: Mapped[str | None] = mapped_column(String(64), index=True)  # None: not logged in
    action: Mapped[str] = mapped_column(String(64), index=True)
    target: Mapped[str | None] = mapped_column(String(200))
    outcome: Mapped[str] = mapped_column(String(20), default="ok")
    status_code: Mapped[int | None]
    client_address: Mapped[str | None] = mapped_column(String(64))
    detail: Mapped[str | None] = mapped_column(String(500))


class ApiToken(Base):
    """A bearer token for automation; only its SHA-256 is stored, the token is shown once."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(12))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class LoginCount(Base):
    """Login attempts of one account or one client address in the current window, shared by every
    web process (auth.guard): `key` is "account:<name>" or "address:<ip>"."""

    __tablename__ = "login_counts"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    attempts: Mapped[int] = mapped_column(Integer)
    last_seconds: Mapped[float] = mapped_column(Float, index=True)  # UTC seconds since the epoch
