"""Hosts keep their encryption ceiling (issue 59, item 2): `openssl speed` per core at the transport's
message size, with the library's version and when it was measured

Revision ID: a3e5c7d90051
Revises: a1c4e7f20051
Create Date: 2026-12-02 20:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from redolab.core.db import UTCDateTime

revision: str = "a3e5c7d90051"
down_revision: str | None = "a1c4e7f20051"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("crypto_measured_at", "crypto_speed")


def upgrade() -> None:
    op.add_column("hosts", sa.Column("crypto_measured_at", UTCDateTime(timezone=True), nullable=True))
    op.add_column("hosts", sa.Column("crypto_speed", sa.JSON(), nullable=True))


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("hosts")}
    for name in reversed(COLUMNS):
        if name in present:
            op.drop_column("hosts", name)
