"""The instantiation copy as it will run (issue 59, item 3): RMAN channels per node, the nodes running
them, SECTION SIZE, and the primary's archive destination free space

Revision ID: a1c4e7f20051
Revises: a3c5e7f90051
Create Date: 2026-12-02 20:15:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a1c4e7f20051"
down_revision: str | None = "a3c5e7f90051"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    ("copy_channels_per_node", sa.Integer()),
    ("copy_nodes", sa.Integer()),
    ("copy_section_bytes", sa.BigInteger()),
    ("archive_free_bytes", sa.BigInteger()),
)


def upgrade() -> None:
    for name, kind in COLUMNS:
        op.add_column("environments", sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    # only what is there: SQLite may have kept this step of an earlier, refused downgrade
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("environments")}
    for name, _ in reversed(COLUMNS):
        if name in present:
            op.drop_column("environments", name)
