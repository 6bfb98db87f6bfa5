"""run summaries: what the plan and the lists read of a run, stored when it ends; backfilled here
for every finished run from its stored client events

Revision ID: 479f8852e947
Revises: d5d7e4f61154
Create Date: 2026-11-23 11:30:45.732000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "479f8852e947"
down_revision: str | None = "d5d7e4f61154"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 200  # runs per step: a one-hour run has 3,600 interval lines


def upgrade() -> None:
    op.create_table(
        "run_summaries",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("interval_count", sa.Integer(), nullable=False),
        sa.Column("rtt_min_seconds", sa.Float(), nullable=True),
        sa.Column("rtt_median_seconds", sa.Float(), nullable=True),
        sa.Column("ack_count", sa.BigInteger(), nullable=False),
        sa.Column("ack_avg_seconds", sa.Float(), nullable=True),
        sa.Column("ack_p50_seconds", sa.Float(), nullable=True),
        sa.Column("ack_p95_seconds", sa.Float(), nullable=True),
        sa.Column("ack_p99_seconds", sa.Float(), nullable=True),
        sa.Column("server_write_seconds", sa.Float(), nullable=True),
        sa.Column("mtu_bytes", sa.Integer(), nullable=True),
        sa.Column("damaged", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_run_summaries_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_run_summaries")),
    )
    backfill()


def backfill() -> None:
    """Summarise every finished run, as redolab does when a run ends (the same function)."""
    from redolab.runs.service import summary_values

    runs = sa.table(
        "runs", sa.column("id", sa.Integer), sa.column("status", sa.String), sa.column("client_settings", sa.JSON)
    )
    events = sa.table(
        "run_events",
        sa.column("run_id", sa.Integer),
        sa.column("seq", sa.Integer),
        sa.column("role", sa.String),
        sa.column("event", sa.String),
        sa.column("line", sa.Text),
    )
    summaries = sa.table(
        "run_summaries",
        *(
            sa.column(name)
            for name in (
                "run_id",
                "interval_count",
                "rtt_min_seconds",
                "rtt_median_seconds",
                "ack_count",
                "ack_avg_seconds",
                "ack_p50_seconds",
                "ack_p95_seconds",
                "ack_p99_seconds",
                "server_write_seconds",
                "mtu_bytes",
                "damaged",
            )
        ),
    )
    bind = op.get_bind()
    finished = bind.execute(
        sa.select(runs.c.id, runs.c.client_settings)
        .where(runs.c.status.in_(("succeeded", "failed", "cancelled")))
        .order_by(runs.c.id)
    ).all()
    for start in range(0, len(finished), BATCH):
        batch = finished[start : start + BATCH]
        lines: dict[int, list[str]] = {row.id: [] for row in batch}
        query = (
            sa.select(events.c.run_id, events.c.line)
            .where(
                events.c.run_id.in_(list(lines)),
                events.c.role == "client",
                events.c.event.in_(("interval", "end")),
            )
            .order_by(events.c.run_id, events.c.seq)
        )
        for run_id, line in bind.execute(query):
            lines[run_id].append(line)
        bind.execute(
            summaries.insert(),
            [summary_values(_Run(row.id, row.client_settings), lines[row.id]) for row in batch],
        )


class _Run:
    """What summary_values reads of a run."""

    def __init__(self, run_id: int, client_settings) -> None:
        self.id, self.client_settings = run_id, client_settings


def downgrade() -> None:
    op.drop_table("run_summaries")
