"""Compressibility measured (issue 59, item 1): a collection may also sample archived logs on the primary
(collections.compressibility, opt-in), each log's zlib figures in compressibility_samples

Revision ID: a3c5e7f90051
Revises: f8d1b3c60050
Create Date: 2026-12-02 20:15:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a3c5e7f90051"
down_revision: str | None = "f8d1b3c60050"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("collections", sa.Column("compressibility", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "compressibility_samples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=513), nullable=False),
        sa.Column("hour", sa.String(length=20), nullable=False),
        sa.Column("thread", sa.Integer(), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("log_bytes", sa.BigInteger(), nullable=False),
        sa.Column("bytes_read", sa.BigInteger(), nullable=False),
        sa.Column("zlib_level", sa.Integer(), nullable=False),
        sa.Column("zlib_bytes", sa.BigInteger(), nullable=False),
        sa.Column("compress_cpu_seconds", sa.Float(), nullable=False),
        sa.Column("decompress_cpu_seconds", sa.Float(), nullable=False),
        sa.Column("error", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_compressibility_samples_collection_id", "compressibility_samples", ["collection_id"])


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    inspector = sa.inspect(op.get_bind())
    if inspector.has_table("compressibility_samples"):
        op.drop_index("ix_compressibility_samples_collection_id", table_name="compressibility_samples")
        op.drop_table("compressibility_samples")
    if "compressibility" in {c["name"] for c in inspector.get_columns("collections")}:
        op.drop_column("collections", "compressibility")
