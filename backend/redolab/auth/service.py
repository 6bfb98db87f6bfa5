"""Users: creation, password checks, browser sessions and the user lifecycle.

Changes that must see every user at once (the first user from the setup link, the last-admin rule,
a user's tokens and sessions against their being disabled) are one serialised step each: they take
one lock, read again what they decide on, write and commit (`_serialised`), so two simultaneous
requests act one after the other on what the first one left.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from sqlalchemy import false, func, inspect, select, text, update
from sqlalchemy.orm import Session

from redolab.auth.models import ApiToken, Role, User, UserSession
from redolab.core.db import MAX_ROW_ID, get_or_404, utcnow
from redolab.core.errors import FieldError, NotFound
from redolab.core.security import (
    api_token_hash,
    hash_password,
    new_api_token,
    password_problem,
    session_key,
    verify_password,
)
from redolab.core.units import ascii_digits

_USERNAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
# last_seen_at is written at most this often, so a page with many fragments is not many writes
_SEEN_RESOLUTION = timedelta(seconds=60)
USERS_LOCK_KEY = 7_284_021  # pg_advisory_xact_lock key serialising changes of users


@contextmanager
def _serialised(session: Session, *users: User) -> Iterator[None]:
    """One serialised change of users: the lock first (PostgreSQL: an advisory lock; SQLite: its one
    write lock, which a write that changes nothing takes), then `users` read again, and at the end
    one commit that releases the lock (or a rollback when the change is refused)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": USERS_LOCK_KEY})
    else:  # every read after this write sees every commit before it (no older snapshot)
        session.execute(update(User).where(false()).values(role=User.role))
    try:
        for user in users:
            if not _reload(session, user):  # deleted by a request a moment ago
                raise NotFound(f"User {inspect(user).identity[0]} does not exist.")
        yield
    except BaseException:
        session.rollback()
        raise
    session.commit()


def _still_admin(session: Session, by: User | None) -> None:
    """The acting admin is still an active admin when the change is made, read again inside
    `_serialised` (an admin demoted, disabled or deleted a moment ago acts no more)."""
    if by is not None and not (_reload(session, by) and by.active and by.is_admin):
        raise FieldError("user", "You are no longer an active admin: nothing was changed.", 403)


def _reload(session: Session, user: User) -> bool:
    """Read the user's row again into `user`; False when it is gone."""
    return session.get(User, inspect(user).identity[0], populate_existing=True) is not None


def count_users(*, session: Session) -> int:
    return session.scalar(select(func.count()).select_from(User)) or 0


def get_user(*, session: Session, user_id: int) -> User:
    return get_or_404(session, User, user_id, what="User")


def get_user_by_username(*, session: Session, username: str) -> User | None:
    return session.scalar(select(User).where(User.username == username))


def list_users(*, session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.username)))


def authenticate(*, session: Session, username: str, password: str) -> User | None:
    """The user when the password matches and the user is not disabled; None otherwise (the same
    cost either way, so timing does not tell which names exist)."""
    user = get_user_by_username(session=session, username=username) if len(username) <= 64 else None
    if not verify_password(password, user.password_hash if user else None):
        return None
    return user if user is not None and user.active else None


def _new_user(username: str, password: str, role: Role) -> User:
    """A user checked and hashed, not yet stored (the hashing costs tens of milliseconds: it is
    done before any lock is taken)."""
    username = username.strip()
    if not _USERNAME.fullmatch(username):
        raise FieldError("username", "A user name has 1 to 64 letters, digits, '.', '_', '@' or '-'.", 422)
    problem = password_problem(password, username=username)
    if problem:
        raise FieldError("password", problem, 422)
    return User(username=username, password_hash=hash_password(password), role=role)


def _store_new_user(session: Session, user: User) -> None:
    if get_user_by_username(session=session, username=user.username):
        raise FieldError("username", f"A user named '{user.username}' already exists.")
    session.add(user)


def create_user(*, session: Session, username: str, password: str, role: Role = Role.admin) -> User:
    user = _new_user(username, password, role)
    with _serialised(session):
        _store_new_user(session, user)
    return user


def create_first_user(*, session: Session, username: str, password: str) -> User | None:
    """The first user, an admin (the one-time setup link); None when a user exists already, also
    one that a simultaneous request created a moment ago: the count and the insert are one step."""
    user = _new_user(username, password, Role.admin)
    with _serialised(session):
        if count_users(session=session):
            return None  # the lock is released by the commit on the way out
        _store_new_user(session, user)
    return user


def _check_admins_remain(session: Session, user: User, what: str) -> None:
    """Refuse to leave the server without an active admin (called inside `_serialised`)."""
    if user.role is not Role.admin or not user.active:
        return
    others = (
        select(func.count())
        .select_from(User)
        .where(User.role == Role.admin, User.disabled_at.is_(None), User.id != user.id)
    )
    if not session.scalar(others):
        raise FieldError(
            "role", f"{user.username} is the last active admin: make another user admin before you {what}."
        )


def set_role(*, session: Session, user: User, role: Role, by: User | None = None) -> User:
    """Change a user's role; the last active admin keeps theirs (checked and changed in one step)."""
    with _serialised(session, user):
        _still_admin(session, by)
        if role is not Role.admin:
            _check_admins_remain(session, user, "change this role")
        user.role = role
    return user


# -- browser sessions -----------------------------------------------------------------------------


def start_session(*, session: Session, user: User, client_address: str | None) -> str | None:
    """A new server-side session for `user`; returns the key the signed cookie carries (None when
    the user was disabled since the password check: a session then would outlive the disabling)."""
    key, digest = session_key()
    with _serialised(session):
        if not _active(session, user.id):
            return None
        session.add(UserSession(user_id=user.id, key_hash=digest, client_address=(client_address or "")[:64] or None))
    return key


def _active(session: Session, user_id: int) -> bool:
    """Whether the user exists and is not disabled, as committed now (inside `_serialised`)."""
    return session.scalar(select(User.disabled_at.is_(None)).where(User.id == user_id)) is True


def session_user(*, session: Session, key: str, idle_seconds: int, max_age_seconds: int) -> User | None:
    """The user of a live session: not ended, used within `idle_seconds`, younger than
    `max_age_seconds`, and its user not disabled."""
    row = session.scalar(select(UserSession).where(UserSession.key_hash == api_token_hash(key)))
    if row is None or row.ended_at is not None:
        return None
    now = utcnow()
    if now - row.last_seen_at > timedelta(seconds=idle_seconds) or now - row.created_at > timedelta(
        seconds=max_age_seconds
    ):
        row.ended_at = now
        session.commit()
        return None
    user = session.get(User, row.user_id)
    if user is None or not user.active:
        return None
    if now - row.last_seen_at >= _SEEN_RESOLUTION:
        row.last_seen_at = now
        session.commit()
    return user


def end_session(*, session: Session, key: str) -> None:
    """Logout: the session stops working at once, whoever holds a copy of the cookie."""
    session.execute(
        update(UserSession)
        .where(UserSession.key_hash == api_token_hash(key), UserSession.ended_at.is_(None))
        .values(ended_at=utcnow())
    )
    session.commit()


def live_sessions(*, session: Session, user: User) -> list[UserSession]:
    query = select(UserSession).where(UserSession.user_id == user.id, UserSession.ended_at.is_(None))
    return list(session.scalars(query.order_by(UserSession.last_seen_at.desc())))


def end_user_sessions(*, session: Session, user: User, keep_key: str | None = None, tokens: bool = False) -> int:
    """End every session of `user` (but the one with `keep_key`) and invalidate their bearer
    tokens; with `tokens`, revoke their API tokens too. Returns the number of sessions ended."""
    ended = _end_sessions(session, user, keep_key=keep_key, tokens=tokens)
    session.commit()
    return ended


def _end_sessions(session: Session, user: User, *, keep_key: str | None = None, tokens: bool = False) -> int:
    now = utcnow()
    query = update(UserSession).where(UserSession.user_id == user.id, UserSession.ended_at.is_(None))
    if keep_key is not None:
        query = query.where(UserSession.key_hash != api_token_hash(keep_key))
    ended = session.execute(query.values(ended_at=now)).rowcount or 0
    if tokens:
        session.execute(
            update(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None)).values(revoked_at=now)
        )
    # an UPDATE, not `+= 1` on a value read earlier: two simultaneous ends both move the epoch on
    session.execute(
        update(User).where(User.id == user.id).values(auth_epoch=User.auth_epoch + 1),
        execution_options={"synchronize_session": False},
    )
    if user in session:
        session.expire(user, ["auth_epoch"])  # read again when next used
    return ended


# -- the user lifecycle ---------------------------------------------------------------------------


def change_password(*, session: Session, user: User, current: str | None, new: str, keep_key: str | None = None) -> int:
    """Set a new password (checking `current` unless it is None: an admin or the CLI) and end the
    user's other sessions and bearer tokens. Returns the number of sessions ended."""
    if current is not None and not verify_password(current, user.password_hash):
        raise FieldError("current_password", "The current password is wrong.", 422)
    problem = password_problem(new, username=user.username)
    if problem:
        raise FieldError("new_password", problem, 422)
    user.password_hash = hash_password(new)
    return end_user_sessions(session=session, user=user, keep_key=keep_key)


def set_disabled(*, session: Session, user: User, disabled: bool, by: User | None = None) -> User:
    """Disable a user (login is refused; every session, bearer token and API token of theirs is
    ended for good, so enabling them again revives none) or enable them. The last-admin check and
    the change are one serialised step."""
    with _serialised(session, user):
        _still_admin(session, by)
        if disabled and user.active:
            if by is not None and by.id == user.id:
                raise FieldError("user", "You cannot disable yourself.")
            _check_admins_remain(session, user, "disable it")
            user.disabled_at = utcnow()
            _end_sessions(session, user, tokens=True)
        elif not disabled and not user.active:
            user.disabled_at = None
    return user


def delete_user(*, session: Session, user: User, by: User | None = None) -> None:
    """Delete a user with their sessions and tokens (runs keep the name they were requested by)."""
    if by is not None and by.id == user.id:
        raise FieldError("user", "You cannot delete yourself.")
    with _serialised(session, user):
        _still_admin(session, by)
        _check_admins_remain(session, user, "delete it")
        session.delete(user)


def create_api_token(*, session: Session, user: User, name: str) -> tuple[ApiToken, str]:
    """A new token for `user`; the plain token is returned once and only its hash is stored. Made
    in one step with the check that the user is not disabled, so a token cannot slip in between a
    disabling's revocation and its commit and come back when the user is enabled again."""
    name = name.strip()
    if not name or len(name) > 100 or not name.isprintable():
        raise FieldError(
            "name", "Give the token a name of 1 to 100 printable characters on one line (what uses it).", 422
        )
    token, digest, prefix = new_api_token()
    row = ApiToken(user_id=user.id, name=name, token_hash=digest, prefix=prefix)
    with _serialised(session):
        if not _active(session, user.id):
            raise FieldError("user", f"{user.username} is disabled.", 403)
        session.add(row)
    return row, token


def list_api_tokens(*, session: Session, user: User) -> list[ApiToken]:
    query = select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id.desc())
    return list(session.scalars(query))


def revoke_api_token(*, session: Session, user: User, token_id: int) -> ApiToken | None:
    row = session.get(ApiToken, token_id)
    if row is None or row.user_id != user.id:
        return None
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.commit()
    return row


def user_for_api_token(*, session: Session, token: str) -> User | None:
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == api_token_hash(token)))
    if row is None or row.revoked_at is not None:
        return None
    user = session.get(User, row.user_id)
    if user is None or not user.active:
        return None
    row.last_used_at = utcnow()
    session.commit()
    return user


def user_for_bearer(*, session: Session, subject: str, epoch: int) -> User | None:
    """The user a bearer token names ("<id>.<identity_key>", see User.bearer_subject), when they
    are active and the token's epoch is their current one; None otherwise."""
    ident, _, key = subject.partition(".")
    if not (ascii_digits(ident) and key) or int(ident) > MAX_ROW_ID:
        return None
    user = session.get(User, int(ident))
    if user is None or not secrets.compare_digest(user.identity_key.encode(), key.encode()):
        return None
    return user if user.active and user.auth_epoch == epoch else None
