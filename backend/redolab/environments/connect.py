"""From a Host row to a connected transport (SSH with its credential, or local)."""

from __future__ import annotations

import asyncssh

from redolab.core.errors import FieldError
from redolab.core.security import decrypt_secret
from redolab.environments.credentials import read_key_file
from redolab.environments.models import CredentialKind, Host, HostTransport
from redolab.remote.local import LocalTransport
from redolab.remote.ssh import SshTarget, SshTransport
from redolab.remote.transport import NotAttempted, Transport


def ssh_target(host: Host, *, secret_key: str) -> SshTarget:
    credential = host.credential
    if credential is None:
        raise NotAttempted(
            f"host {host.name} has no SSH credential: an admin must add one under Credentials and assign it to the host"
        )
    keys: tuple = ()
    passphrase = None
    if credential.encrypted_passphrase:
        passphrase = decrypt_secret(credential.encrypted_passphrase, secret_key=secret_key)
    if credential.kind is CredentialKind.uploaded_key:
        text = decrypt_secret(credential.encrypted_private_key or "", secret_key=secret_key)
        try:
            keys = (asyncssh.import_private_key(text, passphrase),)
        except (asyncssh.KeyImportError, ValueError):
            raise NotAttempted(
                f"the private key of credential '{credential.name}' cannot be read (wrong passphrase?): upload it again"
            ) from None
    elif credential.kind is CredentialKind.key_path:
        try:  # read here, bounded: the file may have been replaced since the credential was saved
            keys = (asyncssh.import_private_key(read_key_file(credential.key_path or ""), passphrase),)
        except (FieldError, asyncssh.KeyImportError, asyncssh.KeyEncryptionError, ValueError):
            raise NotAttempted(
                f"the key file of credential '{credential.name}' cannot be read as a private key (a regular file "
                "of at most 64 KiB, with the right passphrase): an admin must fix it"
            ) from None
    return SshTarget(
        name=host.name,
        address=host.ssh_address,
        port=host.ssh_port,
        username=host.ssh_user,
        host_key=host.host_key,
        host_key_fingerprint=host.host_key_fingerprint,
        client_keys=keys,
        passphrase=passphrase,
        use_agent=credential.kind is CredentialKind.agent,
    )


async def connect_host(host: Host, *, secret_key: str) -> Transport:
    if host.transport is HostTransport.local:
        return LocalTransport(host.name)
    try:
        target = ssh_target(host, secret_key=secret_key)
    except ValueError as error:  # a credential that no longer decrypts
        raise NotAttempted(f"host {host.name}: {error}") from None
    return await SshTransport.connect(target)
