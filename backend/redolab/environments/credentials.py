"""SSH credentials: uploaded keys (encrypted), key files on the redolab server, or the agent.

A private key or passphrase is never returned, shown or logged after it is saved.
"""

from __future__ import annotations

import os
import stat
from datetime import datetime
from typing import Annotated

import asyncssh
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.core.fields import OneLine
from redolab.core.security import encrypt_secret
from redolab.environments.models import Credential, CredentialKind, Environment


class CredentialCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=100), OneLine]
    kind: CredentialKind
    private_key: SecretStr | None = None  # uploaded_key: the PEM/OpenSSH text
    passphrase: SecretStr | None = None
    key_path: Annotated[str | None, Field(max_length=4096), OneLine] = None  # key_path: a file on the redolab server


class CredentialPublic(BaseModel):
    """Everything about a credential except its secrets."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    environment_id: int
    name: str
    kind: CredentialKind
    key_path: str | None
    public_key_fingerprint: str | None
    has_passphrase: bool
    created_at: datetime


def public(credential: Credential) -> CredentialPublic:
    return CredentialPublic(
        id=credential.id,
        environment_id=credential.environment_id,
        name=credential.name,
        kind=credential.kind,
        key_path=credential.key_path,
        public_key_fingerprint=credential.public_key_fingerprint,
        has_passphrase=credential.encrypted_passphrase is not None,
        created_at=credential.created_at,
    )


def _read_key(text: str, passphrase: str | None, field: str) -> asyncssh.SSHKey:
    try:
        return asyncssh.import_private_key(text, passphrase)
    except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError) as error:
        message = str(error)
        if "passphrase" in message.lower():
            raise FieldError(
                "passphrase", "The key is encrypted: give its passphrase (or the right one).", 422
            ) from None
        raise FieldError(
            field, "This is not an SSH private key redolab can read (OpenSSH or PEM format).", 422
        ) from None


MAX_KEY_FILE_BYTES = 64 * 1024  # an RSA-16384 private key in PEM is under 13 KiB


def _key_file_refused(path: str) -> FieldError:
    return FieldError(
        "key_path",
        f"{path} is not a private key file redolab can use: give the absolute path of a regular, readable "
        f"OpenSSH or PEM private key of at most {MAX_KEY_FILE_BYTES // 1024} KiB on the redolab server, with its "
        "passphrase if it has one (e.g. /home/redolab/.ssh/id_ed25519).",
        422,
    )


def read_key_file(path: str) -> str:
    """The text of a private key file on the redolab server: a regular file of at most 64 KiB,
    checked on the open descriptor before a byte is read (a device, FIFO or directory is never
    read). Every refusal reads the same, so the message does not tell whether a file exists."""
    if not path.startswith("/"):
        raise _key_file_refused(path)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        raise _key_file_refused(path) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_KEY_FILE_BYTES:
            raise _key_file_refused(path)
        data = os.read(descriptor, MAX_KEY_FILE_BYTES + 1)
    except OSError:
        raise _key_file_refused(path) from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_KEY_FILE_BYTES:
        raise _key_file_refused(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _key_file_refused(path) from None


def create_credential(
    *, session: Session, environment: Environment, credential_in: CredentialCreate, secret_key: str
) -> Credential:
    name = credential_in.name.strip()
    taken = session.scalar(
        select(Credential.id).where(Credential.environment_id == environment.id, Credential.name == name)
    )
    if taken is not None:
        raise FieldError("name", f"A credential named '{name}' already exists in this environment.")
    passphrase = credential_in.passphrase.get_secret_value() if credential_in.passphrase else None
    credential = Credential(environment_id=environment.id, name=name, kind=credential_in.kind)
    if credential_in.kind is CredentialKind.uploaded_key:
        text = credential_in.private_key.get_secret_value() if credential_in.private_key else ""
        if not text.strip():
            raise FieldError("private_key", "Paste or upload the private key.", 422)
        key = _read_key(text, passphrase, "private_key")
        credential.encrypted_private_key = encrypt_secret(text, secret_key=secret_key)
        credential.public_key_fingerprint = key.get_fingerprint("sha256")
    elif credential_in.kind is CredentialKind.key_path:
        path = (credential_in.key_path or "").strip()[:4096]
        try:
            key = _read_key(read_key_file(path), passphrase, "key_path")
        except FieldError:  # one message for every refusal: no oracle on the server's files
            raise _key_file_refused(path) from None
        credential.key_path = path
        credential.public_key_fingerprint = key.get_fingerprint("sha256")
    if passphrase:
        credential.encrypted_passphrase = encrypt_secret(passphrase, secret_key=secret_key)
    session.add(credential)
    session.commit()
    session.refresh(environment)
    return credential


def get_credential(*, session: Session, environment: Environment, credential_id: int) -> Credential:
    return get_or_404(session, Credential, credential_id, what="Credential", environment=environment)


def delete_credential(*, session: Session, credential: Credential) -> None:
    session.delete(credential)
    session.commit()
