"""Per compressibility sample (issue 59, item 1): the standby's decompression cost, timed on the standby,
and the LZ-class fast codec's figures on the primary (LZ4 by module or command, else zstd -1)

Revision ID: c5e7a9b20053
Revises: b4d6f8a10052
Create Date: 2026-12-03 00:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c5e7a9b20053"
down_revision: str | None = "b4d6f8a10052"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    "standby_bytes",
    "standby_decompress_cpu_seconds",
    "fast_codec",
    "fast_bytes",
    "fast_compress_cpu_seconds",
    "fast_decompress_cpu_seconds",
)


def upgrade() -> None:
    op.add_column("compressibility_samples", sa.Column("standby_bytes", sa.BigInteger(), nullable=True))
    op.add_column("compressibility_samples", sa.Column("standby_decompress_cpu_seconds", sa.Float(), nullable=True))
    op.add_column("compressibility_samples", sa.Column("fast_codec", sa.String(length=20), nullable=True))
    op.add_column("compressibility_samples", sa.Column("fast_bytes", sa.BigInteger(), nullable=True))
    op.add_column("compressibility_samples", sa.Column("fast_compress_cpu_seconds", sa.Float(), nullable=True))
    op.add_column("compressibility_samples", sa.Column("fast_decompress_cpu_seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("compressibility_samples")}
    for column in reversed(COLUMNS):
        if column in present:
            op.drop_column("compressibility_samples", column)
