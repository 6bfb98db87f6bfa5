"""redo rows: hour of day and percentile of profiles

Revision ID: 1413e21ccfa3
Revises: aaeb0756dc38
Create Date: 2026-11-22 04:29:40.045719
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "1413e21ccfa3"
down_revision: str | None = "aaeb0756dc38"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("redo_rows", schema=None) as batch_op:
        batch_op.add_column(sa.Column("hour_of_day", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("percentile_bytes_per_second", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("redo_rows", schema=None) as batch_op:
        batch_op.drop_column("percentile_bytes_per_second")
        batch_op.drop_column("hour_of_day")
