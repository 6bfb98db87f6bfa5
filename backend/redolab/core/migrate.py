"""Run Alembic migrations from code (the CLI and `serve` use this)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text

from redolab.core.config import PROJECT_ROOT

MIGRATION_LOCK_KEY = 7_284_020  # pg_advisory_xact_lock key: one upgrade at a time


def alembic_config(url: str | None = None) -> Config:
    config = Config(toml_file=str(PROJECT_ROOT / "pyproject.toml"))
    if url:
        config.attributes["database_url"] = url
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Upgrade the database behind `engine` to `revision`."""
    config = alembic_config()
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":  # two web containers starting at once: one upgrades
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
    if engine.dialect.name == "sqlite":  # the migration turned foreign keys off on its connection:
        engine.dispose()  # no pooled connection keeps that; new ones turn them on (core.db)
