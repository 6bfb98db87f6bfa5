"""Users: creation and password checks."""

from __future__ import annotations

import re

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redolab.auth.models import User
from redolab.core.errors import FieldError
from redolab.core.security import hash_password, password_problem, verify_password

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


def create_user(*, session: Session, username: str, password: str) -> User:
    username = username.strip()
    if not _USERNAME.match(username):
        raise FieldError(
            "username", "A user name has 1 to 64 letters, digits, '.', '_', '@' or '-'."
        )
    problem = password_problem(password)
    if problem:
        raise FieldError("password", problem)
    if get_user_by_username(session=session, username=username):
        raise FieldError("username", f"A user named '{username}' already exists.")
    user = User(username=username, password_hash=hash_password(password))
    session.add(user)
    session.commit()
    return user
