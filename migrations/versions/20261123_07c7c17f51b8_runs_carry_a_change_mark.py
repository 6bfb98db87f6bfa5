"""runs carry a change mark, drawn again by every change: the plan's cache of measured runs compares
their sum to know, in every process, that it is still current

Revision ID: 07c7c17f51b8
Revises: c51598b1e667
Create Date: 2026-11-23 19:00:40.894403
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "07c7c17f51b8"
down_revision: str | None = "c51598b1e667"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("change_mark", sa.BigInteger(), server_default="0", nullable=False))


def downgrade() -> None:
    # ALTER TABLE ... DROP COLUMN in place (SQLite 3.35+): batch mode would copy the table and drop
    # the old one, and the drop would cascade to every run's events and summary
    op.drop_column("runs", "change_mark")
