"""A cluster run's sum is what its pairs carried at once: clusters.together, stored when the last pair
ends (the span every succeeded pair was measuring and each one's bytes received within it); backfilled
here for every cluster whose pairs have all ended, from their stored interval events, with the function
redolab uses when a run ends

Revision ID: b8d4f6a20044
Revises: a7c3e5f10043
Create Date: 2026-11-27 15:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b8d4f6a20044"
down_revision: str | None = "a7c3e5f10043"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("clusters", sa.Column("together", sa.JSON(), nullable=True))
    backfill()


def backfill() -> None:
    from redolab.core.db import UTCDateTime
    from redolab.sweeps.clusters import interval_series, together

    clusters = sa.table("clusters", sa.column("id", sa.Integer), sa.column("together", sa.JSON))
    runs = sa.table(
        "runs", sa.column("id", sa.Integer), sa.column("cluster_id", sa.Integer), sa.column("status", sa.String)
    )
    events = sa.table(
        "run_events",
        sa.column("run_id", sa.Integer),
        sa.column("seq", sa.Integer),
        sa.column("role", sa.String),
        sa.column("event", sa.String),
        sa.column("line", sa.Text),
        sa.column("received_at", UTCDateTime()),
    )
    bind = op.get_bind()
    pairs: dict[int, list[tuple[int, str]]] = {}
    for run_id, cluster_id, status in bind.execute(
        sa.select(runs.c.id, runs.c.cluster_id, runs.c.status).where(runs.c.cluster_id.is_not(None))
    ):
        pairs.setdefault(cluster_id, []).append((run_id, status))
    for cluster_id, members in pairs.items():
        if any(status not in ("succeeded", "failed", "cancelled") for _, status in members):
            continue  # still running: the last pair to end stores it
        succeeded = [run_id for run_id, status in members if status == "succeeded"]
        if not succeeded:
            continue
        rows = bind.execute(
            sa.select(events.c.run_id, events.c.role, events.c.received_at, events.c.line)
            .where(events.c.run_id.in_(succeeded), events.c.event == "interval")
            .order_by(events.c.run_id, events.c.seq)
        ).all()
        series = interval_series(rows)
        value = together({run_id: series.get(run_id, []) for run_id in succeeded})
        bind.execute(clusters.update().where(clusters.c.id == cluster_id).values(together=value))


def downgrade() -> None:
    # a plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+), and only when there: a downgrade refused by an
    # older revision below may be retried, and SQLite may have kept this step of the first attempt
    if "together" in {column["name"] for column in sa.inspect(op.get_bind()).get_columns("clusters")}:
        op.drop_column("clusters", "together")
