"""stored redo analyses: all of an environment's imports analysed once per change (computed on
first read for environments imported before)

Revision ID: a15d902995e9
Revises: 479f8852e947
Create Date: 2026-11-23 11:36:30.161979
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "a15d902995e9"
down_revision: str | None = "479f8852e947"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "redo_analyses",
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("signature", sa.String(length=64), nullable=False),
        sa.Column("computed_at", redolab.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.Column("charts", sa.JSON(), nullable=True),
        sa.Column("requirement", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_redo_analyses_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("environment_id", name=op.f("pk_redo_analyses")),
    )


def downgrade() -> None:
    op.drop_table("redo_analyses")
