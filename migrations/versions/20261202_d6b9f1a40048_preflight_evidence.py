"""Pasted pre-flight evidence (issue 56, item 2): Broker VALIDATE outputs and V$RECOVERY_PROGRESS, kept
with the rows they were read into

Revision ID: d6b9f1a40048
Revises: c5a8e0f30047
Create Date: 2026-12-02 17:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from redolab.core.db import UTCDateTime

revision: str = "d6b9f1a40048"
down_revision: str | None = "c5a8e0f30047"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "preflight_evidence",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("member", sa.String(length=200), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("rows", sa.JSON(), nullable=False),
        sa.Column("figures", sa.JSON(), nullable=False),
        sa.Column("pasted_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["environment_id"], ["environments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_preflight_evidence_environment_id", "preflight_evidence", ["environment_id"])


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    if "preflight_evidence" in sa.inspect(op.get_bind()).get_table_names():
        op.drop_table("preflight_evidence")  # its index with it
