"""Environments keep the database's time zone; redo imports the zone their times were read in

Revision ID: 5e2b9c41d7a8
Revises: c3a1f0d2b7e4
Create Date: 2026-11-23 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5e2b9c41d7a8"
down_revision: str | None = "c3a1f0d2b7e4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("time_zone", sa.String(length=64), server_default="UTC", nullable=False))
    with op.batch_alter_table("redo_imports", schema=None) as batch_op:
        batch_op.add_column(sa.Column("time_zone", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("redo_imports", schema=None) as batch_op:
        batch_op.drop_column("time_zone")
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.drop_column("time_zone")
