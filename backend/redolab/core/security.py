"""Password hashing (argon2) and API bearer tokens (signed JWT)."""

from __future__ import annotations

from datetime import timedelta

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from redolab.core.db import utcnow

_hasher = PasswordHasher()
# Compared against when the user does not exist, so a wrong username costs as much as a wrong
# password and login timing does not reveal which names exist.
_DUMMY_HASH = _hasher.hash("redolab-no-such-user")
MIN_PASSWORD_LENGTH = 10
TOKEN_ALGORITHM = "HS256"  # noqa: S105


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password: str, password_hash: str | None) -> bool:
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def password_problem(password: str) -> str | None:
    """Why a new password is refused, or None when it is acceptable."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"The password must have at least {MIN_PASSWORD_LENGTH} characters."
    return None


def create_access_token(*, subject: str, secret_key: str, max_age_seconds: int) -> str:
    expires = utcnow() + timedelta(seconds=max_age_seconds)
    return jwt.encode({"sub": subject, "exp": expires}, secret_key, algorithm=TOKEN_ALGORITHM)


def read_access_token(token: str, *, secret_key: str) -> str | None:
    """Return the token's subject (username), or None when it is invalid or expired."""
    try:
        claims = jwt.decode(token, secret_key, algorithms=[TOKEN_ALGORITHM])
    except jwt.PyJWTError:
        return None
    subject = claims.get("sub")
    return subject if isinstance(subject, str) else None
