"""Alembic: upgrade from empty works on both backends, and the models match the migrations."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from redolab.core.db import Base, make_engine


def test_upgrade_creates_every_table(database_url):
    engine = make_engine(database_url)
    tables = set(inspect(engine).get_table_names())
    engine.dispose()
    assert {table.name for table in Base.metadata.sorted_tables} <= tables
    assert "alembic_version" in tables


def test_autogenerate_finds_no_drift(database_url):
    engine = make_engine(database_url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        diff = compare_metadata(context, Base.metadata)
    engine.dispose()
    assert diff == []


def test_sqlite_keeps_foreign_keys_on_after_an_upgrade(tmp_path):
    """Migrations turn SQLite's foreign keys off (a recreated table's DROP would cascade); no pooled
    connection may keep that after the upgrade."""
    from redolab.core.migrate import upgrade

    engine = make_engine(f"sqlite:///{tmp_path}/fk.db")
    upgrade(engine)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()
