"""Link watches: watches, their checks, notification receivers and notifications, and the run a check
made (issue 37)

Revision ID: b8e3f0d50038
Revises: a7d2e9c40037
Create Date: 2026-11-26 15:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "b8e3f0d50038"
down_revision: str | None = "a7d2e9c40037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _enum(*values: str, name: str) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, length=20)


def upgrade() -> None:
    op.create_table(
        "notification_receivers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=True),
        sa.Column("email_to", sa.String(length=320), nullable=True),
        sa.Column("encrypted_secret", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "watches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("client_host_id", sa.Integer(), nullable=True),
        sa.Column("server_host_id", sa.Integer(), nullable=True),
        sa.Column("all_node_pairs", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("path_label", sa.String(length=210), nullable=False),
        sa.Column("every_seconds", sa.Float(), nullable=False),
        sa.Column("duration_seconds", sa.Float(), nullable=False),
        sa.Column("conns", sa.Integer(), nullable=False),
        sa.Column("message_bytes", sa.BigInteger(), nullable=False),
        sa.Column("sockbuf_bytes", sa.BigInteger(), nullable=True),
        sa.Column("threshold_bytes_per_second", sa.Float(), nullable=True),
        sa.Column("margin_ratio", sa.Float(), nullable=False),
        sa.Column("agree_m", sa.Integer(), nullable=False),
        sa.Column("of_n", sa.Integer(), nullable=False),
        sa.Column("receiver_ids", sa.JSON(), nullable=False),
        sa.Column("state", _enum("unknown", "ok", "at_risk", "failing", name="watchstate"), nullable=False),
        sa.Column("state_since", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("transitions", sa.Integer(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("next_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("silenced_until", redolab.core.db.UTCDateTime(), nullable=True),
        sa.Column("silence_reason", sa.String(length=300), nullable=False),
        sa.Column("requested_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["client_host_id"], ["hosts.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["environment_id"], ["environments.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["server_host_id"], ["hosts.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("watches", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_watches_active"), ["active"], unique=False)
        batch_op.create_index(batch_op.f("ix_watches_environment_id"), ["environment_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_watches_next_at"), ["next_at"], unique=False)
    op.create_table(
        "watch_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("watch_id", sa.Integer(), nullable=False),
        sa.Column("at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("status", _enum("running", "judged", "skipped", name="checkstatus"), nullable=False),
        sa.Column("run_ids", sa.JSON(), nullable=False),
        sa.Column("verdict", _enum("ok", "at_risk", "failing", "skipped", name="verdict"), nullable=True),
        sa.Column("measured_bytes_per_second", sa.Float(), nullable=True),
        sa.Column("required_bytes_per_second", sa.Float(), nullable=True),
        sa.Column("required_basis", sa.String(length=300), nullable=False),
        sa.Column("sync_p99_seconds", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["watch_id"], ["watches.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("watch_checks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_watch_checks_at"), ["at"], unique=False)
        batch_op.create_index(batch_op.f("ix_watch_checks_watch_id"), ["watch_id"], unique=False)
    op.create_table(
        "notifications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("watch_id", sa.Integer(), nullable=False),
        sa.Column("transition", sa.Integer(), nullable=False),
        sa.Column("receiver_id", sa.Integer(), nullable=True),
        sa.Column("from_state", sa.String(length=20), nullable=False),
        sa.Column("to_state", sa.String(length=20), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("claimed_by", sa.String(length=100), nullable=True),
        sa.Column("last_result", sa.String(length=300), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("delivered_at", redolab.core.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["receiver_id"], ["notification_receivers.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["watch_id"], ["watches.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("watch_id", "transition", "receiver_id", name="uq_notification_once"),
    )
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_notifications_next_attempt_at"), ["next_attempt_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_notifications_status"), ["status"], unique=False)
        batch_op.create_index(batch_op.f("ix_notifications_watch_id"), ["watch_id"], unique=False)
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("watch_check_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_watch_check_id"), ["watch_check_id"], unique=False)
        batch_op.create_foreign_key(
            "fk_runs_watch_check_id_watch_checks", "watch_checks", ["watch_check_id"], ["id"], ondelete="SET NULL"
        )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint("fk_runs_watch_check_id_watch_checks", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_runs_watch_check_id"))
        batch_op.drop_column("watch_check_id")
    op.drop_table("notifications")
    op.drop_table("watch_checks")
    op.drop_table("watches")
    op.drop_table("notification_receivers")
