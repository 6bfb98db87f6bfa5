"""Runs and rehearsals on several hops at once (issue 38): a cluster run across the direct
destinations, or a rehearsal to each, whose jobs share the primary host and so may run together

Revision ID: e4b1c9d20041
Revises: d2a7b8c30040
Create Date: 2026-11-26 21:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e4b1c9d20041"
down_revision: str | None = "d2a7b8c30040"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("clusters", sa.Column("across_hops", sa.Boolean(), nullable=False, server_default="0"))
    op.add_column("jobs", sa.Column("together", sa.String(length=40), nullable=True))
    op.add_column("rehearsals", sa.Column("across_hops", sa.Boolean(), nullable=False, server_default="0"))


def downgrade() -> None:
    # a plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+), and only what is there: a downgrade refused by
    # an older revision below may be retried, and SQLite may have kept this step of the first attempt
    tables = ("clusters", "jobs", "rehearsals")
    present = {(t, c["name"]) for t in tables for c in sa.inspect(op.get_bind()).get_columns(t)}
    for table, column in (("rehearsals", "across_hops"), ("jobs", "together"), ("clusters", "across_hops")):
        if (table, column) in present:
            op.drop_column(table, column)
