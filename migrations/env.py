"""Alembic environment: uses redolab's settings and models.

A connection passed in config.attributes["connection"] (redolab db upgrade, serve, tests) is used
as is; otherwise the URL comes from attributes["database_url"] or REDOLAB_DATABASE_URL.
"""

from __future__ import annotations

from alembic import context

import redolab.models  # noqa: F401  (registers every table on Base.metadata)
from redolab.core.config import get_settings
from redolab.core.db import Base, make_engine

config = context.config
target_metadata = Base.metadata


def _configure(connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        # A batch migration recreates a table (copy, DROP, rename). With foreign keys on, that DROP
        # deletes every row referencing the table (ON DELETE CASCADE: a run's events and summary)
        # and fails on the others; SQLite's own procedure for altering a table turns them off
        # first. Outside a transaction only (pysqlite opens one at the first write): the first
        # statement here. Turned on again by the next connection (core.db), see migrate.upgrade.
        connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=sqlite,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    url = config.attributes.get("database_url") or get_settings().resolved_database_url
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        return
    url = config.attributes.get("database_url") or get_settings().resolved_database_url
    engine = make_engine(url)
    with engine.connect() as connection:
        _configure(connection)
        connection.commit()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
