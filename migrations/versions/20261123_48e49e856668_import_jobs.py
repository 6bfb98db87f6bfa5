"""import jobs: large redo imports run as jobs (progress, error); an import is staged (`importing`)
until its rows are all written, then made `ready` in one short transaction

Revision ID: 48e49e856668
Revises: a15d902995e9
Create Date: 2026-11-23 11:59:46.535735
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "48e49e856668"
down_revision: str | None = "a15d902995e9"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("import_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("environment_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("label", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("source_path", sa.String(length=1000), nullable=True))
        batch_op.add_column(sa.Column("options", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("progress_rows", sa.BigInteger(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("estimated_rows", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("error", sa.Text(), nullable=True))
        batch_op.create_index(batch_op.f("ix_jobs_environment_id"), ["environment_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_import_id"), ["import_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_jobs_environment_id_environments"),
            "environments",
            ["environment_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_jobs_import_id_redo_imports"), "redo_imports", ["import_id"], ["id"], ondelete="SET NULL"
        )

    with op.batch_alter_table("redo_imports", schema=None) as batch_op:
        batch_op.add_column(sa.Column("status", sa.String(length=12), server_default="ready", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("redo_imports", schema=None) as batch_op:
        batch_op.drop_column("status")

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_jobs_import_id_redo_imports"), type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("fk_jobs_environment_id_environments"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_jobs_import_id"))
        batch_op.drop_index(batch_op.f("ix_jobs_environment_id"))
        batch_op.drop_column("error")
        batch_op.drop_column("estimated_rows")
        batch_op.drop_column("progress_rows")
        batch_op.drop_column("options")
        batch_op.drop_column("source_path")
        batch_op.drop_column("label")
        batch_op.drop_column("environment_id")
        batch_op.drop_column("import_id")
