"""Collections from the database itself: a host's database access, the Diagnostics Pack tick, the
collection schedule and the collections (issue 36)

Revision ID: f3c8d5e20036
Revises: e2b7c4d10035
Create Date: 2026-11-25 17:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "f3c8d5e20036"
down_revision: str | None = "e2b7c4d10035"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HOST_COLUMNS = (
    ("db_kind", sa.String(length=10)),
    ("db_os_user", sa.String(length=32)),
    ("oracle_home", sa.String(length=255)),
    ("oracle_sid", sa.String(length=64)),
    ("db_connect", sa.String(length=255)),
    ("db_user", sa.String(length=128)),
    ("db_encrypted_password", sa.Text()),
    ("db2_sqllib", sa.String(length=255)),
    ("db2_database", sa.String(length=8)),
)
_STATUS = sa.Enum(
    "queued", "running", "succeeded", "failed", "cancelled", name="collectionstatus", native_enum=False, length=20
)


def upgrade() -> None:
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("diagnostics_pack_licensed", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch_op.add_column(sa.Column("collect_every_seconds", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("collect_next_at", redolab.core.db.UTCDateTime(), nullable=True))
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        for name, type_ in _HOST_COLUMNS:
            batch_op.add_column(sa.Column(name, type_, nullable=True))
    op.create_table(
        "collections",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("host_id", sa.Integer(), nullable=True),
        sa.Column("host_name", sa.String(length=100), nullable=False),
        sa.Column("database_kind", sa.String(length=10), nullable=False),
        sa.Column("status", _STATUS, nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("scheduled", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("requested_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("started_at", redolab.core.db.UTCDateTime(), nullable=True),
        sa.Column("finished_at", redolab.core.db.UTCDateTime(), nullable=True),
        sa.Column("failure_kind", sa.String(length=20), nullable=True),
        sa.Column("failure_step", sa.String(length=40), nullable=True),
        sa.Column("failure_message", sa.Text(), nullable=True),
        sa.Column("failure_hint", sa.Text(), nullable=True),
        sa.Column("database_version", sa.String(length=64), nullable=True),
        sa.Column("scripts", sa.JSON(), nullable=False),
        sa.Column("row_counts", sa.JSON(), nullable=False),
        sa.Column("notes", sa.JSON(), nullable=False),
        sa.Column("facts", sa.JSON(), nullable=True),
        sa.Column("facts_applied", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("import_id", sa.Integer(), nullable=True),
        sa.Column("job_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["environment_id"], ["environments.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["host_id"], ["hosts.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["import_id"], ["redo_imports.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_collections_environment_id"), ["environment_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_collections_environment_id"))
    op.drop_table("collections")
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        for name, _ in reversed(_HOST_COLUMNS):
            batch_op.drop_column(name)
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.drop_column("collect_next_at")
        batch_op.drop_column("collect_every_seconds")
        batch_op.drop_column("diagnostics_pack_licensed")
