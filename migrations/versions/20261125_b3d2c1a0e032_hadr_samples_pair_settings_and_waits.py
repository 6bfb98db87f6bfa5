"""HADR samples: the pair's two ends, configured and granted values, and the HADR log write waits

Revision ID: b3d2c1a0e032
Revises: 75f36cb7490d
Create Date: 2026-11-25 12:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b3d2c1a0e032"
down_revision: str | None = "75f36cb7490d"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    ("primary_host", sa.String(length=255)),
    ("primary_instance", sa.String(length=128)),
    ("primary_member", sa.Integer()),
    ("standby_host", sa.String(length=255)),
    ("standby_instance", sa.String(length=128)),
    ("standby_member", sa.Integer()),
    ("log_stream_id", sa.Integer()),
    ("hadr_timeout_seconds", sa.Integer()),
    ("peer_window_seconds", sa.Integer()),
    ("peer_wait_limit_seconds", sa.Integer()),
    ("heartbeat_interval_seconds", sa.Integer()),
    ("heartbeats_expected", sa.Integer()),
    ("sock_send_requested_bytes", sa.BigInteger()),
    ("sock_send_actual_bytes", sa.BigInteger()),
    ("sock_recv_requested_bytes", sa.BigInteger()),
    ("sock_recv_actual_bytes", sa.BigInteger()),
    ("wait_current_seconds", sa.Float()),
    ("wait_recent_avg_seconds", sa.Float()),
    ("wait_accumulated_seconds", sa.Float()),
    ("wait_count", sa.BigInteger()),
)


def upgrade() -> None:
    # samples imported before carry none of these: their pair is their database and standby number
    with op.batch_alter_table("hadr_samples", schema=None) as batch_op:
        for name, kind in COLUMNS:
            batch_op.add_column(sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("hadr_samples", schema=None) as batch_op:
        for name, _ in reversed(COLUMNS):
            batch_op.drop_column(name)
