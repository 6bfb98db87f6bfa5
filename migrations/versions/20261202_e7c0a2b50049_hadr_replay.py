"""Db2 HADR captures keep the standby's replay (issue 56, item 3): STANDBY_REPLAY_LOG_POS, the receive-replay
gap (bytes) and HADR_SPOOL_LIMIT (pages), for the replay rate and the takeover time

Revision ID: e7c0a2b50049
Revises: d6b9f1a40048
Create Date: 2026-12-02 17:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e7c0a2b50049"
down_revision: str | None = "d6b9f1a40048"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("replay_position", "recv_replay_gap_bytes", "spool_limit_pages")


def upgrade() -> None:
    op.add_column("hadr_samples", sa.Column("replay_position", sa.BigInteger(), nullable=True))
    op.add_column("hadr_samples", sa.Column("recv_replay_gap_bytes", sa.BigInteger(), nullable=True))
    op.add_column("hadr_samples", sa.Column("spool_limit_pages", sa.Integer(), nullable=True))


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("hadr_samples")}
    for name in reversed(COLUMNS):
        if name in present:
            op.drop_column("hadr_samples", name)
