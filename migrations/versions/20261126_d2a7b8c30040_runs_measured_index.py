"""A covering index for the plan's measured-runs stamp (issue 37: 10,000 runs in one environment)

Revision ID: d2a7b8c30040
Revises: c9f4a6e10039
Create Date: 2026-11-26 18:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "d2a7b8c30040"
down_revision: str | None = "c9f4a6e10039"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ["environment_id", "status", "rehearsal_id", "bytes_per_second", "change_mark", "id"]


def upgrade() -> None:
    op.create_index("ix_runs_measured", "runs", COLUMNS, if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_runs_measured", table_name="runs", if_exists=True)  # a refused downgrade below may retry
