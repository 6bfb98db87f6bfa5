"""Engine, session factory, the declarative base shared by every model, and get_or_404."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Protocol, TypeVar

from sqlalchemy import DateTime, Engine, Enum, MetaData, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from sqlalchemy.types import TypeDecorator

from redolab.core.errors import NotFound

# Stable constraint names, so Alembic migrations read the same on SQLite and PostgreSQL.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# The largest id both databases store: ids are INTEGER columns, 32-bit on PostgreSQL (a larger number
# there fails the query: "integer out of range") and 64-bit on SQLite (whose driver cannot even bind
# a number beyond that). A larger number names no row: it is answered as "not found" before any query.
MAX_ROW_ID = 2**31 - 1


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp, also on SQLite (which drops the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC) if value is not None else value  # SQLite keeps the wall clock only

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


def make_engine(url: str) -> Engine:
    """Create an engine; SQLite gets foreign keys on and its directory created."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=5000")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def make_sessionmaker(engine: Engine) -> sessionmaker:
    return sessionmaker(bind=engine, expire_on_commit=False)


_MEMO = "redolab.memo"
T = TypeVar("T")


def memo(session: Session, key: tuple, compute: Callable[[], T]) -> T:
    """`compute()` once per transaction of `session` while it does not write: the sections of one page
    ask for the same rows (the environment page read its imports five times). A flush or the end of
    the transaction (commit, rollback, close) forgets every answer, so nothing read before a write or
    in an earlier transaction is served after it."""
    kept = session.info.setdefault(_MEMO, {})
    if key not in kept:
        kept[key] = compute()
    return kept[key]


@event.listens_for(Session, "after_flush")
@event.listens_for(Session, "after_transaction_end")
def _forget(session: Session, *_args) -> None:
    session.info.pop(_MEMO, None)


class Owner(Protocol):
    """What get_or_404 reads of the environment a row must belong to."""

    id: int
    name: str


RowT = TypeVar("RowT")


def get_or_404(
    session: Session,
    model: type[RowT],
    ident: int,
    *,
    what: str,
    environment: Owner | None = None,
    only: Callable[[RowT], bool] | None = None,
) -> RowT:
    """The `model` row with primary key `ident`, or NotFound (a 404) naming it as `what`: also when
    it belongs to another environment than `environment`, or when `only` rejects it."""
    row = session.get(model, ident) if -MAX_ROW_ID <= ident <= MAX_ROW_ID else None
    belongs = environment is None or (row is not None and row.environment_id == environment.id)
    if row is None or not belongs or (only is not None and not only(row)):
        where = "" if environment is None else f" in environment '{environment.name}'"
        raise NotFound(f"{what} {ident} does not exist{where}.")
    return row


def enum_column(enum_cls: type[StrEnum]) -> Enum:
    """A StrEnum stored as its value in a VARCHAR(20) (no database enum type to migrate)."""
    return Enum(
        enum_cls,
        native_enum=False,
        length=20,
        values_callable=lambda members: [member.value for member in members],
        validate_strings=True,
    )
