"""Users: creation and password checks."""

from __future__ import annotations

import re

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redolab.auth.models import ApiToken, Role, User
from redolab.core.db import utcnow
from redolab.core.errors import FieldError
from redolab.core.security import (
    api_token_hash,
    hash_password,
    new_api_token,
    password_problem,
    verify_password,
)

_USERNAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")


def count_users(*, session: Session) -> int:
    return session.scalar(select(func.count()).select_from(User)) or 0


def get_user_by_username(*, session: Session, username: str) -> User | None:
    return session.scalar(select(User).where(User.username == username))


def list_users(*, session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.username)))


def authenticate(*, session: Session, username: str, password: str) -> User | None:
    """The user when the password matches; None otherwise (same cost either way)."""
    user = get_user_by_username(session=session, username=username)
    if not verify_password(password, user.password_hash if user else None):
        return None
    return user


def create_user(*, session: Session, username: str, password: str, role: Role = Role.admin) -> User:
    username = username.strip()
    if not _USERNAME.match(username):
        raise FieldError("username", "A user name has 1 to 64 letters, digits, '.', '_', '@' or '-'.")
    problem = password_problem(password)
    if problem:
        raise FieldError("password", problem)
    if get_user_by_username(session=session, username=username):
        raise FieldError("username", f"A user named '{username}' already exists.")
    user = User(username=username, password_hash=hash_password(password), role=role)
    session.add(user)
    session.commit()
    return user


def set_role(*, session: Session, user: User, role: Role) -> User:
    user.role = role
    session.commit()
    return user


def create_api_token(*, session: Session, user: User, name: str) -> tuple[ApiToken, str]:
    """A new token for `user`; the plain token is returned once and only its hash is stored."""
    name = name.strip()
    if not name or len(name) > 100:
        raise FieldError("name", "Give the token a name of 1 to 100 characters (what uses it).")
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
    row.last_used_at = utcnow()
    session.commit()
    return session.get(User, row.user_id)
