"""Jobs carry who queued them and their planned time (fair queues, issue 33)

Revision ID: c7e5a9f10033
Revises: b3d2c1a0e032
Create Date: 2026-11-25 12:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c7e5a9f10033"
down_revision: str | None = "b3d2c1a0e032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The owner of a schedule's occurrence is the schedule's owner: "ann (schedule #3)" is ann.
_OWNER_OF = "CASE WHEN instr({column}, ' (schedule #') > 0 THEN substr({column}, 1, instr({column}, ' (schedule #') - 1) ELSE {column} END"


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("requested_by", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("planned_seconds", sa.Float(), nullable=True))
        batch_op.create_index(batch_op.f("ix_jobs_requested_by"), ["requested_by"], unique=False)
    # jobs still waiting or running count against their owner's cap from the start
    postgres = op.get_bind().dialect.name == "postgresql"
    owner = _OWNER_OF.replace("instr(", "strpos(") if postgres else _OWNER_OF
    for table, key in (("runs", "run_id"), ("sweeps", "sweep_id")):
        # table and column names are the constants above, no input
        sql = f"UPDATE jobs SET requested_by = (SELECT {owner.format(column='t.requested_by')} FROM {table} t "  # noqa: S608
        sql += f"WHERE t.id = jobs.{key}) WHERE jobs.{key} IS NOT NULL AND jobs.status IN ('queued', 'running')"
        op.execute(sql)
    op.execute(
        "UPDATE jobs SET planned_seconds = (SELECT r.duration_seconds + 10 FROM runs r WHERE r.id = jobs.run_id) "
        "WHERE jobs.run_id IS NOT NULL AND jobs.status IN ('queued', 'running')"
    )


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_requested_by"))
        batch_op.drop_column("planned_seconds")
        batch_op.drop_column("requested_by")
