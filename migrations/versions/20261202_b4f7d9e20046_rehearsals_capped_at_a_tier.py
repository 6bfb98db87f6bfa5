"""Rehearsals may be capped at a link tier (issue 55, item 6): the tier's line rate (bit/s), shared by
the rehearsal's connections (each paced at its share), and the tier's name

Revision ID: b4f7d9e20046
Revises: a3e6c8d10045
Create Date: 2026-12-02 08:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b4f7d9e20046"
down_revision: str | None = "a3e6c8d10045"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("rehearsals", sa.Column("cap_bits_per_second", sa.BigInteger(), nullable=True))
    op.add_column("rehearsals", sa.Column("cap_label", sa.String(length=200), nullable=False, server_default=""))


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("rehearsals")}
    for name in ("cap_label", "cap_bits_per_second"):
        if name in present:
            op.drop_column("rehearsals", name)
