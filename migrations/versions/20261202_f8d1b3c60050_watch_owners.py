"""Watches have owners (issue 57, item 4): a deleted watch keeps its history for admins (deleted_at,
deleted_by), and notices of a silence or a deletion are numbered apart from state changes (notices);
receivers have a circuit breaker (item 3: failures_in_row, failing_until)

Revision ID: f8d1b3c60050
Revises: e7c0a2b50049
Create Date: 2026-12-02 17:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from redolab.core.db import UTCDateTime

revision: str = "f8d1b3c60050"
down_revision: str | None = "e7c0a2b50049"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("deleted_at", "deleted_by", "notices")


def upgrade() -> None:
    op.add_column("watches", sa.Column("deleted_at", UTCDateTime(timezone=True), nullable=True))
    op.create_index("ix_watches_deleted_at", "watches", ["deleted_at"])
    op.add_column("watches", sa.Column("deleted_by", sa.String(length=64), nullable=False, server_default=""))
    op.add_column("watches", sa.Column("notices", sa.Integer(), nullable=False, server_default="0"))
    table = "notification_receivers"
    op.add_column(table, sa.Column("failures_in_row", sa.Integer(), nullable=False, server_default="0"))
    op.add_column(table, sa.Column("failing_until", UTCDateTime(timezone=True), nullable=True))


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    bind = op.get_bind()
    present = {c["name"] for c in sa.inspect(bind).get_columns("notification_receivers")}
    for name in ("failing_until", "failures_in_row"):
        if name in present:
            op.drop_column("notification_receivers", name)
    if "ix_watches_deleted_at" in {i["name"] for i in sa.inspect(bind).get_indexes("watches")}:
        op.drop_index("ix_watches_deleted_at", table_name="watches")
    present = {c["name"] for c in sa.inspect(bind).get_columns("watches")}
    for name in reversed(COLUMNS):
        if name in present:
            op.drop_column("watches", name)
