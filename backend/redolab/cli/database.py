"""The database a command works on: an engine, a session, an environment found by name."""

from __future__ import annotations

from contextlib import contextmanager

from redolab.cli.output import fail
from redolab.core.config import get_settings


def engine():
    import redolab.models  # noqa: F401 (every table: a foreign key to a model this command never loads still resolves)
    from redolab.core.db import make_engine

    return make_engine(get_settings().resolved_database_url)


@contextmanager
def database_session(migrate: bool = False):
    """A session on the configured database (upgraded to the current schema first when `migrate`)."""
    from redolab.core.db import make_sessionmaker
    from redolab.core.migrate import upgrade

    database = engine()
    try:
        if migrate:
            upgrade(database)
        with make_sessionmaker(database)() as session:
            yield session
    finally:
        database.dispose()


@contextmanager
def environment_named(name: str):
    """(session, environment) for the environment called `name`; a clear error if there is none."""
    from sqlalchemy import inspect, select

    from redolab.core.db import make_sessionmaker
    from redolab.environments.models import Environment

    database = engine()
    try:
        if not inspect(database).has_table("environments"):
            fail(f"the database {database.url.render_as_string()} has no redolab tables yet: run `redolab db upgrade`")
        with make_sessionmaker(database)() as session:
            environment = session.scalar(select(Environment).where(Environment.name == name))
            if environment is None:
                fail(f"no environment named '{name}'")
            yield session, environment
    finally:
        database.dispose()


def hosts_named(environment, env: str, client: str, server: str) -> dict:
    """The environment's hosts by name; fails naming --client or --server when one is not there."""
    hosts = {host.name: host for host in environment.hosts}
    for role, name in (("--client", client), ("--server", server)):
        if name not in hosts:
            fail(f"{role}: no host named '{name}' in '{env}' (hosts: {', '.join(sorted(hosts)) or 'none'})")
    return hosts
