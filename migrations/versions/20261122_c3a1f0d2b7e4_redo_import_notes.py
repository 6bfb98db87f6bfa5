"""Redo imports keep how their file was read (periods, lines passed over, ignored columns, members)

Revision ID: c3a1f0d2b7e4
Revises: 872ec92cdf10
Create Date: 2026-11-22 23:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c3a1f0d2b7e4"
down_revision: str | None = "872ec92cdf10"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("redo_imports", schema=None) as batch_op:
        batch_op.add_column(sa.Column("notes", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("redo_imports", schema=None) as batch_op:
        batch_op.drop_column("notes")
