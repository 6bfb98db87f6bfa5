"""Rehearsals keep their window's notes: the threads left out of the replay and why (no times, no
data in the period, no whole byte after the scale), and how thinly the data cover a period

Revision ID: f5c2d0e30042
Revises: e4b1c9d20041
Create Date: 2026-11-27 07:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "f5c2d0e30042"
down_revision: str | None = "e4b1c9d20041"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("rehearsals", sa.Column("notes", sa.JSON(), nullable=False, server_default="[]"))


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    if "notes" in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("rehearsals")}:
        op.drop_column("rehearsals", "notes")
