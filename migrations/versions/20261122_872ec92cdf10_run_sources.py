"""Run sources: imported oratcptest and iperf3 results (tool, file name, original text)

Revision ID: 872ec92cdf10
Revises: 5ecc24892160
Create Date: 2026-11-22 08:20:11.380532
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "872ec92cdf10"
down_revision: str | None = "5ecc24892160"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "source",
                sa.Enum("redoprobe", "oratcptest", "iperf3", name="runsource", native_enum=False, length=20),
                server_default="redoprobe",
                nullable=False,
            )
        )
        batch_op.add_column(sa.Column("source_name", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("source_text", sa.Text(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_source"), ["source"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_runs_source"))
        batch_op.drop_column("source_text")
        batch_op.drop_column("source_name")
        batch_op.drop_column("source")
