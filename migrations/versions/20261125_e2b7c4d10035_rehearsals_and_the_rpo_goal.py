"""Rehearsals (a window of recorded redo replayed through the link) and the RPO goal (issue 35)

Revision ID: e2b7c4d10035
Revises: d8f1e2a30033
Create Date: 2026-11-25 16:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "e2b7c4d10035"
down_revision: str | None = "d8f1e2a30033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rehearsals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("window_kind", sa.String(length=20), nullable=False),
        sa.Column("window_start", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("window_end", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("window_label", sa.String(length=300), nullable=False),
        sa.Column("granularity_seconds", sa.Float(), nullable=True),
        sa.Column("granularity", sa.Text(), nullable=False),
        sa.Column("imports", sa.JSON(), nullable=False),
        sa.Column("threads", sa.JSON(), nullable=False),
        sa.Column("mode", sa.String(length=20), nullable=False),
        sa.Column("message_bytes", sa.BigInteger(), nullable=False),
        sa.Column("scale", sa.Float(), nullable=False),
        sa.Column("speedup", sa.Float(), nullable=False),
        sa.Column("slot_seconds", sa.Float(), nullable=False),
        sa.Column("schedule_sha256", sa.String(length=64), nullable=False),
        sa.Column("schedule_bytes", sa.BigInteger(), nullable=False),
        sa.Column("schedule_seconds", sa.Float(), nullable=False),
        sa.Column("schedule_lines", sa.Integer(), nullable=False),
        sa.Column("schedule_text", sa.Text(), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("requested_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["environment_id"], ["environments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("rehearsals", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rehearsals_environment_id"), ["environment_id"], unique=False)
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rehearsal_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("replay_schedule", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("replay_scale", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("replay_speedup", sa.Float(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_rehearsal_id"), ["rehearsal_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_runs_rehearsal_id_rehearsals"), "rehearsals", ["rehearsal_id"], ["id"], ondelete="CASCADE"
        )
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rpo_goal_seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.drop_column("rpo_goal_seconds")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_runs_rehearsal_id_rehearsals"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_runs_rehearsal_id"))
        batch_op.drop_column("replay_speedup")
        batch_op.drop_column("replay_scale")
        batch_op.drop_column("replay_schedule")
        batch_op.drop_column("rehearsal_id")
    with op.batch_alter_table("rehearsals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rehearsals_environment_id"))
    op.drop_table("rehearsals")
