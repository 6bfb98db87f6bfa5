"""Factories for test data, going through the same services the app uses."""

from __future__ import annotations

import itertools

from redolab.auth.service import create_user
from redolab.environments import service
from redolab.environments.schemas import EnvironmentCreate, HostCreate

PASSWORD = "correct horse battery"
_counter = itertools.count(1)


def make_user(session, username: str | None = None, password: str = PASSWORD):
    return create_user(
        session=session, username=username or f"user{next(_counter)}", password=password
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
    return service.create_host(
        session=session, environment=environment, host_in=HostCreate(**values)
    )
