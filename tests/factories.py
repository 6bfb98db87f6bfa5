"""Factories for test data, going through the same services the app uses."""

from __future__ import annotations

import itertools

from redolab.auth.service import create_user
from redolab.environments import service
from redolab.environments.schemas import EnvironmentCreate, HostCreate

PASSWORD = "correct horse battery"
_counter = itertools.count(1)


def make_user(session, username: str | None = None, password: str = PASSWORD, role=None):
    from redolab.auth.models import Role

    return create_user(
        session=session, username=username or f"user{next(_counter)}", password=password, role=role or Role.admin
    )


def make_environment(session, **fields):
    values = {"name": f"env-{next(_counter)}", **fields}
    return service.create_environment(session=session, env_in=EnvironmentCreate(**values))


def make_host(session, environment, **fields):
    values = {
        "role": "primary",
        "node_number": 1,
        "name": f"db{next(_counter)}",
        "ssh_address": "127.0.0.1",
        "ssh_user": "oracle",
        **fields,
    }
    return service.create_host(session=session, environment=environment, host_in=HostCreate(**values))


def make_ssh_environment(session, sshd, *, secret_key: str, pinned: bool = True, **fields):
    """An environment whose primary and standby both reach the test sshd on 127.0.0.1."""
    from redolab.environments.credentials import CredentialCreate, create_credential

    environment = make_environment(session, **fields)
    credential = create_credential(
        session=session,
        environment=environment,
        credential_in=CredentialCreate(name="test key", kind="uploaded_key", private_key=sshd.client_key),
        secret_key=secret_key,
    )
    hosts = []
    for role, name in (("primary", "db1"), ("standby", "sb1")):
        host = make_host(
            session,
            environment,
            role=role,
            name=name,
            ssh_address="127.0.0.1",
            ssh_port=sshd.port,
            ssh_user=sshd.user,
            credential_id=credential.id,
        )
        if pinned:
            host.host_key, host.host_key_fingerprint = sshd.host_key_line, sshd.host_key_fingerprint
        hosts.append(host)
    session.commit()
    session.refresh(environment)
    return environment, hosts[0], hosts[1]


def make_measured_run(session, environment_id: int, primary, standby, bytes_per_second: float = 1e6, **fields):
    """A succeeded run from `primary` to `standby` with its stored summary, as if it had just ended
    (no intervals): what planning reads of a run, made without running the probe."""
    from redolab.core.db import utcnow
    from redolab.runs.models import Run, RunStatus
    from redolab.runs.service import store_summary

    values = {
        "environment_id": environment_id, "client_host_id": primary.id, "server_host_id": standby.id,
        "client_host_name": primary.name, "server_host_name": standby.name, "mode": "async", "conns": 1,
        "message_bytes": 1024 * 1024, "duration_seconds": 10, "interval_seconds": 1, "requested_by": "alice",
        "status": RunStatus.succeeded, "bytes_per_second": bytes_per_second, "label": "", "tags": [],
        "client_settings": {"mtu_bytes": 1500}, "created_at": utcnow(), **fields,
    }  # fmt: skip
    run = Run(**values)
    session.add(run)
    session.commit()
    store_summary(session=session, run=run)
    return run
