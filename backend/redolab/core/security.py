"""Password hashing (argon2) and API bearer tokens (signed JWT)."""

from __future__ import annotations

import functools
import hashlib
from datetime import timedelta
from pathlib import Path

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from redolab.core.db import utcnow

_hasher = PasswordHasher()
# Compared against when the user does not exist, so a wrong username costs as much as a wrong
# password and login timing does not reveal which names exist. Made at the first such login, not
# at import: every `redolab` command, worker and web process imports this module, and one argon2
# hash costs about 130 ms there.
_DUMMY_HASH: str | None = None
MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 1024  # argon2 takes any length; this bounds the work a login can ask for
TOKEN_ALGORITHM = "HS256"  # noqa: S105


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def _dummy_hash() -> str:
    global _DUMMY_HASH
    if _DUMMY_HASH is None:
        _DUMMY_HASH = _hasher.hash("redolab-no-such-user")
    return _DUMMY_HASH


def verify_password(password: str, password_hash: str | None) -> bool:
    try:
        return _hasher.verify(password_hash or _dummy_hash(), password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def password_problem(password: str, *, username: str = "") -> str | None:
    """Why a new password is refused, or None when it is acceptable: at least 12 characters, not
    one of the 30,000 most common passwords (zxcvbn's list) and not a pattern zxcvbn guesses at
    once (repeats, sequences, keyboard walks, the user name)."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"The password must have at least {MIN_PASSWORD_LENGTH} characters."
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"The password must have at most {MAX_PASSWORD_LENGTH} characters."
    from zxcvbn import zxcvbn

    if password.lower() in _common_passwords():
        return "This password is on the list of common passwords: choose another."
    # zxcvbn's cost grows with length; the first 64 characters decide a long passphrase anyway
    if zxcvbn(password[:64], user_inputs=[username, "redolab"] if username else ["redolab"])["score"] < 2:
        return (
            "This password is too easy to guess (a repeat, a sequence, a keyboard walk or your user "
            "name): use a few unrelated words or a password manager."
        )
    return None


@functools.cache
def _common_passwords() -> frozenset[str]:
    from zxcvbn.frequency_lists import FREQUENCY_LISTS

    return frozenset(FREQUENCY_LISTS["passwords"])


def create_access_token(*, subject: str, secret_key: str, max_age_seconds: int, epoch: int = 0) -> str:
    """A bearer token for `subject`; `epoch` is the user's auth epoch, so a password change or an
    admin ending the user's sessions makes every earlier token invalid."""
    expires = utcnow() + timedelta(seconds=max_age_seconds)
    return jwt.encode({"sub": subject, "exp": expires, "ver": epoch}, secret_key, algorithm=TOKEN_ALGORITHM)


def read_access_token(token: str, *, secret_key: str) -> tuple[str, int] | None:
    """The token's subject (username) and auth epoch, or None when it is invalid or expired."""
    try:
        claims = jwt.decode(token, secret_key, algorithms=[TOKEN_ALGORITHM])
    except jwt.PyJWTError:
        return None
    subject, epoch = claims.get("sub"), claims.get("ver", 0)
    if not isinstance(subject, str) or not isinstance(epoch, int):
        return None
    return subject, epoch


def session_key() -> tuple[str, str]:
    """A new browser-session key (kept in the signed cookie) and its SHA-256 hex (stored)."""
    import secrets

    key = secrets.token_urlsafe(32)
    return key, api_token_hash(key)


def _fernet(secret_key: str):
    """Fernet keyed by HKDF-SHA256 of the secret key (a separate key from session signing)."""
    import base64

    from cryptography.fernet import Fernet
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"redolab", info=b"credentials v1").derive(
        secret_key.encode()
    )
    return Fernet(base64.urlsafe_b64encode(derived))


def encrypt_secret(plaintext: str, *, secret_key: str) -> str:
    """Encrypt an SSH private key or passphrase for storage."""
    return _fernet(secret_key).encrypt(plaintext.encode()).decode()


def decrypt_secret(token: str, *, secret_key: str) -> str:
    """Decrypt a stored secret; raises ValueError when the secret key has changed."""
    from cryptography.fernet import InvalidToken

    try:
        return _fernet(secret_key).decrypt(token.encode()).decode()
    except InvalidToken:
        raise ValueError(
            "a stored credential cannot be decrypted: REDOLAB_SECRET_KEY changed since it was "
            "saved; upload the key again"
        ) from None


def new_api_token() -> tuple[str, str, str]:
    """A new API token: (token shown once, its SHA-256 hex to store, a display prefix)."""
    import secrets

    token = "rl_" + secrets.token_urlsafe(32)
    return token, hashlib.sha256(token.encode()).hexdigest(), token[:10]


def api_token_hash(token: str) -> str:
    import hashlib

    return hashlib.sha256(token.encode()).hexdigest()


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's content, hex (read in blocks: archives and binaries can be large)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
