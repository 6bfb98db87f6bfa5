"""A collection can keep its rows for a preview before they are imported (issue 36)

Revision ID: a7d2e9c40037
Revises: f3c8d5e20036
Create Date: 2026-11-26 15:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a7d2e9c40037"
down_revision: str | None = "f3c8d5e20036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.add_column(sa.Column("review", sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column("staged", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.drop_column("staged")
        batch_op.drop_column("review")
