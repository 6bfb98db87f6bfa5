"""sweeps, run tags, kernel-change permission

Revision ID: 5fd0f2cd7fe0
Revises: 1413e21ccfa3
Create Date: 2026-11-22 07:14:23.191519
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "5fd0f2cd7fe0"
down_revision: str | None = "1413e21ccfa3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sweeps",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("client_host_id", sa.Integer(), nullable=True),
        sa.Column("server_host_id", sa.Integer(), nullable=True),
        sa.Column("client_host_name", sa.String(length=100), nullable=False),
        sa.Column("server_host_name", sa.String(length=100), nullable=False),
        sa.Column(
            "kind",
            sa.Enum("connections", "sockbuf", "kernel_max", name="sweepkind", native_enum=False, length=20),
            nullable=False,
        ),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("values", sa.JSON(), nullable=False),
        sa.Column("conns_values", sa.JSON(), nullable=False),
        sa.Column("repetitions", sa.Integer(), nullable=False),
        sa.Column("threshold_percent", sa.Float(), nullable=False),
        sa.Column("patience", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "queued", "running", "succeeded", "failed", "cancelled", name="runstatus", native_enum=False, length=20
            ),
            nullable=False,
        ),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("requested_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("started_at", redolab.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("finished_at", redolab.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("best_conns", sa.Integer(), nullable=True),
        sa.Column("kernel_original", sa.JSON(), nullable=True),
        sa.Column("kernel_restored", sa.Boolean(), nullable=True),
        sa.ForeignKeyConstraint(
            ["client_host_id"], ["hosts.id"], name=op.f("fk_sweeps_client_host_id_hosts"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_sweeps_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["server_host_id"], ["hosts.id"], name=op.f("fk_sweeps_server_host_id_hosts"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sweeps")),
    )
    with op.batch_alter_table("sweeps", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sweeps_environment_id"), ["environment_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_sweeps_status"), ["status"], unique=False)

    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("allow_kernel_changes", sa.Boolean(), server_default=sa.false(), nullable=False))

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sweep_id", sa.Integer(), nullable=True))
        batch_op.alter_column("run_id", existing_type=sa.INTEGER(), nullable=True)
        batch_op.create_index(batch_op.f("ix_jobs_sweep_id"), ["sweep_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_jobs_sweep_id_sweeps"), "sweeps", ["sweep_id"], ["id"], ondelete="CASCADE"
        )

    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tags", sa.JSON(), server_default=sa.text("'[]'"), nullable=False))
        batch_op.add_column(sa.Column("sweep_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("sweep_point", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("repetition", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("kernel_max_bytes", sa.BigInteger(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_sweep_id"), ["sweep_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_runs_sweep_id_sweeps"), "sweeps", ["sweep_id"], ["id"], ondelete="SET NULL"
        )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_runs_sweep_id_sweeps"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_runs_sweep_id"))
        batch_op.drop_column("kernel_max_bytes")
        batch_op.drop_column("repetition")
        batch_op.drop_column("sweep_point")
        batch_op.drop_column("sweep_id")
        batch_op.drop_column("tags")

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_jobs_sweep_id_sweeps"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_jobs_sweep_id"))
        batch_op.alter_column("run_id", existing_type=sa.INTEGER(), nullable=False)
        batch_op.drop_column("sweep_id")

    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.drop_column("allow_kernel_changes")

    with op.batch_alter_table("sweeps", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sweeps_status"))
        batch_op.drop_index(batch_op.f("ix_sweeps_environment_id"))

    op.drop_table("sweeps")
