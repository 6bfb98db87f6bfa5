"""Users: creation, password checks, browser sessions and the user lifecycle."""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from redolab.auth.models import ApiToken, Role, User, UserSession
from redolab.core.db import get_or_404, utcnow
from redolab.core.errors import FieldError
from redolab.core.security import (
    api_token_hash,
    hash_password,
    new_api_token,
    password_problem,
    session_key,
    verify_password,
)

_USERNAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
# last_seen_at is written at most this often, so a page with many fragments is not many writes
_SEEN_RESOLUTION = timedelta(seconds=60)


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


def create_user(*, session: Session, username: str, password: str, role: Role = Role.admin) -> User:
    username = username.strip()
    if not _USERNAME.fullmatch(username):
        raise FieldError("username", "A user name has 1 to 64 letters, digits, '.', '_', '@' or '-'.", 422)
    problem = password_problem(password, username=username)
    if problem:
        raise FieldError("password", problem, 422)
    if get_user_by_username(session=session, username=username):
        raise FieldError("username", f"A user named '{username}' already exists.")
    user = User(username=username, password_hash=hash_password(password), role=role)
    session.add(user)
    session.commit()
    return user


def _check_admins_remain(session: Session, user: User, what: str) -> None:
    """Refuse to leave the server without an active admin."""
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


def set_role(*, session: Session, user: User, role: Role) -> User:
    if role is not Role.admin:
        _check_admins_remain(session, user, "change this role")
    user.role = role
    session.commit()
    return user


# -- browser sessions -----------------------------------------------------------------------------


def start_session(*, session: Session, user: User, client_address: str | None) -> str:
    """A new server-side session for `user`; returns the key the signed cookie carries."""
    key, digest = session_key()
    session.add(UserSession(user_id=user.id, key_hash=digest, client_address=(client_address or "")[:64] or None))
    session.commit()
    return key


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
    now = utcnow()
    query = update(UserSession).where(UserSession.user_id == user.id, UserSession.ended_at.is_(None))
    if keep_key is not None:
        query = query.where(UserSession.key_hash != api_token_hash(keep_key))
    ended = session.execute(query.values(ended_at=now)).rowcount or 0
    if tokens:
        session.execute(
            update(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None)).values(revoked_at=now)
        )
    user.auth_epoch += 1
    session.commit()
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
    """Disable (every session and token stops working, login is refused) or enable a user."""
    if disabled and user.active:
        if by is not None and by.id == user.id:
            raise FieldError("user", "You cannot disable yourself.")
        _check_admins_remain(session, user, "disable it")
        user.disabled_at = utcnow()
        end_user_sessions(session=session, user=user)
    elif not disabled and not user.active:
        user.disabled_at = None
        session.commit()
    return user


def delete_user(*, session: Session, user: User, by: User | None = None) -> None:
    """Delete a user with their sessions and tokens (runs keep the name they were requested by)."""
    if by is not None and by.id == user.id:
        raise FieldError("user", "You cannot delete yourself.")
    _check_admins_remain(session, user, "delete it")
    session.delete(user)
    session.commit()


def create_api_token(*, session: Session, user: User, name: str) -> tuple[ApiToken, str]:
    """A new token for `user`; the plain token is returned once and only its hash is stored."""
    name = name.strip()
    if not name or len(name) > 100 or not name.isprintable():
        raise FieldError(
            "name", "Give the token a name of 1 to 100 printable characters on one line (what uses it).", 422
        )
    token, digest, prefix = new_api_token()
    row = ApiToken(user_id=user.id, name=name, token_hash=digest, prefix=prefix)
    session.add(row)
    session.commit()
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
