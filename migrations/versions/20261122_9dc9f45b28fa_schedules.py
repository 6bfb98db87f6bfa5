"""schedules

Revision ID: 9dc9f45b28fa
Revises: 5fd0f2cd7fe0
Create Date: 2026-11-22 07:25:29.549030
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "9dc9f45b28fa"
down_revision: str | None = "5fd0f2cd7fe0"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("what", sa.String(length=10), nullable=False),
        sa.Column("template", sa.JSON(), nullable=False),
        sa.Column("client_host_name", sa.String(length=100), nullable=False),
        sa.Column("server_host_name", sa.String(length=100), nullable=False),
        sa.Column("every_seconds", sa.Float(), nullable=False),
        sa.Column("until", redolab.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("next_at", redolab.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column(
            "status",
            sa.Enum("active", "finished", "stopped", name="schedulestatus", native_enum=False, length=20),
            nullable=False,
        ),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("skipped", sa.JSON(), nullable=False),
        sa.Column("requested_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_schedules_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedules")),
    )
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_schedules_environment_id"), ["environment_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_schedules_next_at"), ["next_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_schedules_status"), ["status"], unique=False)

    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("schedule_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_schedule_id"), ["schedule_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_runs_schedule_id_schedules"), "schedules", ["schedule_id"], ["id"], ondelete="SET NULL"
        )

    with op.batch_alter_table("sweeps", schema=None) as batch_op:
        batch_op.add_column(sa.Column("schedule_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_sweeps_schedule_id"), ["schedule_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_sweeps_schedule_id_schedules"), "schedules", ["schedule_id"], ["id"], ondelete="SET NULL"
        )


def downgrade() -> None:
    with op.batch_alter_table("sweeps", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_sweeps_schedule_id_schedules"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_sweeps_schedule_id"))
        batch_op.drop_column("schedule_id")

    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_runs_schedule_id_schedules"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_runs_schedule_id"))
        batch_op.drop_column("schedule_id")

    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_schedules_status"))
        batch_op.drop_index(batch_op.f("ix_schedules_next_at"))
        batch_op.drop_index(batch_op.f("ix_schedules_environment_id"))

    op.drop_table("schedules")
