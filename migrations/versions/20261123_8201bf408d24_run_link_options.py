"""Runs: redoprobe's link options (congestion control, pacing cap, zerocopy, reverse).

Revision ID: 8201bf408d24
Revises: 2c2f29d2b4f9
Create Date: 2026-11-23 04:02:50.591921
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "8201bf408d24"
down_revision: str | None = "2c2f29d2b4f9"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("congestion", sa.String(length=15), nullable=True))
        batch_op.add_column(sa.Column("fq_rate_bits_per_second", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("zerocopy", sa.Boolean(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("reverse", sa.Boolean(), server_default="0", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("reverse")
        batch_op.drop_column("zerocopy")
        batch_op.drop_column("fq_rate_bits_per_second")
        batch_op.drop_column("congestion")
