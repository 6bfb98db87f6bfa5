"""Db2 HADR monitoring imports, disk tests (redoprobe disk as a job) and the log disk fit on each host

Revision ID: d5d7e4f61154
Revises: 8201bf408d24
Create Date: 2026-11-23 06:04:04.413382
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "d5d7e4f61154"
down_revision: str | None = "8201bf408d24"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "hadr_imports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("layouts", sa.JSON(), nullable=False),
        sa.Column("captures", sa.Integer(), nullable=False),
        sa.Column("notes", sa.JSON(), nullable=False),
        sa.Column("time_zone", sa.String(length=64), nullable=False),
        sa.Column("first_time", redolab.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_time", redolab.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("imported_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_hadr_imports_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hadr_imports")),
        sa.UniqueConstraint("environment_id", "sha256", name=op.f("uq_hadr_imports_environment_id_sha256")),
    )
    with op.batch_alter_table("hadr_imports", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_hadr_imports_environment_id"), ["environment_id"], unique=False)

    op.create_table(
        "hadr_samples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("at_epoch_seconds", sa.Float(), nullable=False),
        sa.Column("member", sa.Integer(), nullable=False),
        sa.Column("database", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("state", sa.String(length=30), nullable=True),
        sa.Column("sync_mode", sa.String(length=20), nullable=True),
        sa.Column("connect_status", sa.String(length=20), nullable=True),
        sa.Column("heartbeats_missed", sa.Integer(), nullable=True),
        sa.Column("log_gap_bytes", sa.Float(), nullable=True),
        sa.Column("recv_buf_percent", sa.Float(), nullable=True),
        sa.Column("recv_buf_pages", sa.Integer(), nullable=True),
        sa.Column("primary_file", sa.String(length=20), nullable=True),
        sa.Column("primary_position", sa.BigInteger(), nullable=True),
        sa.Column("standby_file", sa.String(length=20), nullable=True),
        sa.Column("standby_position", sa.BigInteger(), nullable=True),
        sa.Column("standby_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["import_id"], ["hadr_imports.id"], name=op.f("fk_hadr_samples_import_id_hadr_imports"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hadr_samples")),
    )
    with op.batch_alter_table("hadr_samples", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_hadr_samples_import_id"), ["import_id"], unique=False)

    op.create_table(
        "disk_tests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("host_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=255), nullable=False),
        sa.Column("write_sizes", sa.JSON(), nullable=False),
        sa.Column("seconds_per_size", sa.Float(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("points", sa.JSON(), nullable=False),
        sa.Column("rate_bytes_per_second", sa.Float(), nullable=True),
        sa.Column("overhead_seconds", sa.Float(), nullable=True),
        sa.Column("created_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("finished_at", redolab.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("job_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_disk_tests_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["host_id"], ["hosts.id"], name=op.f("fk_disk_tests_host_id_hosts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_disk_tests")),
    )
    with op.batch_alter_table("disk_tests", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_disk_tests_environment_id"), ["environment_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_disk_tests_host_id"), ["host_id"], unique=False)

    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("disk_rate_bytes_per_second", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("disk_overhead_seconds", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("disk_path", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("disk_measured_at", redolab.core.db.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("disk_points", sa.JSON(), nullable=True))

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("disk_test_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_jobs_disk_test_id"), ["disk_test_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_jobs_disk_test_id_disk_tests"), "disk_tests", ["disk_test_id"], ["id"], ondelete="CASCADE"
        )


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_jobs_disk_test_id_disk_tests"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_jobs_disk_test_id"))
        batch_op.drop_column("disk_test_id")

    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.drop_column("disk_points")
        batch_op.drop_column("disk_measured_at")
        batch_op.drop_column("disk_path")
        batch_op.drop_column("disk_overhead_seconds")
        batch_op.drop_column("disk_rate_bytes_per_second")

    with op.batch_alter_table("disk_tests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_disk_tests_host_id"))
        batch_op.drop_index(batch_op.f("ix_disk_tests_environment_id"))

    op.drop_table("disk_tests")
    with op.batch_alter_table("hadr_samples", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_hadr_samples_import_id"))

    op.drop_table("hadr_samples")
    with op.batch_alter_table("hadr_imports", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_hadr_imports_environment_id"))

    op.drop_table("hadr_imports")
