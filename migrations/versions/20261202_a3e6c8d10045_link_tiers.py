"""Link tiers an environment's buyer can choose (issue 55, item 2): each with its nominal rate (bit/s)
and, when known, its monthly price and currency; names unique per environment, as shared links'

Revision ID: a3e6c8d10045
Revises: b8d4f6a20044
Create Date: 2026-12-02 05:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "a3e6c8d10045"
down_revision: str | None = "b8d4f6a20044"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY_LENGTH = 90  # environments.models.NAME_KEY_LENGTH when this revision was written


def upgrade() -> None:
    op.create_table(
        "link_tiers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("name_key", sa.String(length=KEY_LENGTH), nullable=True),
        sa.Column("bits_per_second", sa.BigInteger(), nullable=False),
        sa.Column("monthly_price", sa.Float(), nullable=True),
        sa.Column("currency", sa.String(length=3), nullable=True),
        sa.Column("created_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_link_tiers_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_link_tiers")),
    )
    with op.batch_alter_table("link_tiers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_link_tiers_environment_id"), ["environment_id"], unique=False)
        batch_op.create_index("ix_link_tiers_environment_id_name_key", ["environment_id", "name_key"], unique=True)


def downgrade() -> None:
    # only when there: a downgrade refused by an older revision below may be retried (see b8d4f6a20044)
    if "link_tiers" in sa.inspect(op.get_bind()).get_table_names():
        op.drop_table("link_tiers")
