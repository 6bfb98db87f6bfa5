"""The share of the link reserved for other traffic (issue 59, item 4): the RPO answer judges links
and tiers at the rest

Revision ID: b4d6f8a10052
Revises: a3e5c7d90051
Create Date: 2026-12-02 20:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b4d6f8a10052"
down_revision: str | None = "a3e5c7d90051"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("environments", sa.Column("link_reserved_percent", sa.Float(), nullable=False, server_default="0"))


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    if "link_reserved_percent" in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("environments")}:
        op.drop_column("environments", "link_reserved_percent")
