"""login counts shared by every web process: the login throttle counts attempts per account and
address in the database, so several web processes behind one proxy count together

Revision ID: c51598b1e667
Revises: 48e49e856668
Create Date: 2026-11-23 16:45:10.060868
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c51598b1e667"
down_revision: str | None = "48e49e856668"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "login_counts",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_seconds", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_login_counts")),
    )
    with op.batch_alter_table("login_counts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_login_counts_last_seconds"), ["last_seconds"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("login_counts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_login_counts_last_seconds"))

    op.drop_table("login_counts")
