"""cluster runs

Revision ID: 5ecc24892160
Revises: 9dc9f45b28fa
Create Date: 2026-11-22 07:29:47.200521
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "5ecc24892160"
down_revision: str | None = "9dc9f45b28fa"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "clusters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("reverse", sa.Boolean(), nullable=False),
        sa.Column("template", sa.JSON(), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("requested_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_clusters_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_clusters")),
    )
    with op.batch_alter_table("clusters", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_clusters_environment_id"), ["environment_id"], unique=False)

    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cluster_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_cluster_id"), ["cluster_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_runs_cluster_id_clusters"), "clusters", ["cluster_id"], ["id"], ondelete="SET NULL"
        )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_runs_cluster_id_clusters"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_runs_cluster_id"))
        batch_op.drop_column("cluster_id")

    with op.batch_alter_table("clusters", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_clusters_environment_id"))

    op.drop_table("clusters")
