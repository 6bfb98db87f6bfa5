"""What a seasoned DBA checks (issue 56): the database release (the settings start from its defaults),
the RTO goal, the standby's apply rate (bytes/s), whether Fast-Start Failover is used and whether the
database is licensed for Advanced Compression

Revision ID: c5a8e0f30047
Revises: b4f7d9e20046
Create Date: 2026-12-02 16:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c5a8e0f30047"
down_revision: str | None = "b4f7d9e20046"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("rto_goal_seconds", "database_release", "apply_rate_bytes_per_second", "fast_start_failover",
           "advanced_compression_licensed")  # fmt: skip


def upgrade() -> None:
    op.add_column("environments", sa.Column("rto_goal_seconds", sa.Float(), nullable=True))
    op.add_column(
        "environments", sa.Column("database_release", sa.String(length=40), nullable=False, server_default="")
    )
    op.add_column("environments", sa.Column("apply_rate_bytes_per_second", sa.Float(), nullable=True))
    for name in ("fast_start_failover", "advanced_compression_licensed"):
        op.add_column("environments", sa.Column(name, sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("environments")}
    for name in reversed(COLUMNS):
        if name in present:
            op.drop_column("environments", name)
