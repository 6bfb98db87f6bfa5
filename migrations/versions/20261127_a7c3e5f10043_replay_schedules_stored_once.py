"""A rehearsal's schedule is stored once (replay_schedules), named by the rehearsal and by each of its
runs with the connections it replays, and counted against its owner's cap; a run keeps the destination
its server fed when it was made

Each rehearsal's text moves to a replay_schedules row (its owner and size with it), and the rehearsal
and its runs name it; a run whose text was the whole schedule drops its copy (a node pair's run, which
kept a part, keeps it: the runner reads it first). Each rehearsal run's destination is its server
host's now. The downgrade writes every text back where it was (a part: its connections' lines).

Revision ID: a7c3e5f10043
Revises: f5c2d0e30042
Create Date: 2026-11-27 09:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "a7c3e5f10043"
down_revision: str | None = "f5c2d0e30042"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _create_table() -> None:
    op.create_table(
        "replay_schedules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("text_bytes", sa.BigInteger(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("requested_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_replay_schedules_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_replay_schedules")),
    )
    with op.batch_alter_table("replay_schedules", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_replay_schedules_environment_id"), ["environment_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_replay_schedules_requested_by"), ["requested_by"], unique=False)


def _owner(requested_by: str) -> str:
    for marker in (" (schedule #", " (watch #"):
        requested_by = requested_by.split(marker, 1)[0]
    return requested_by


def upgrade() -> None:
    _create_table()
    with op.batch_alter_table("rehearsals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("schedule_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_rehearsals_schedule_id_replay_schedules"),
            "replay_schedules",
            ["schedule_id"],
            ["id"],
            ondelete="SET NULL",
        )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("replay_schedule_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("replay_connections", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("replay_destination_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_replay_schedule_id"), ["replay_schedule_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_runs_replay_schedule_id_replay_schedules"),
            "replay_schedules",
            ["replay_schedule_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_runs_replay_destination_id_destinations"),
            "destinations",
            ["replay_destination_id"],
            ["id"],
            ondelete="SET NULL",
        )
    _move_texts()
    with op.batch_alter_table("rehearsals", schema=None) as batch_op:
        batch_op.drop_column("schedule_text")


def _move_texts() -> None:
    bind = op.get_bind()
    rehearsals = bind.execute(sa.text("SELECT id, schedule_text, requested_by FROM rehearsals ORDER BY id")).all()
    for rehearsal in rehearsals:
        text = rehearsal.schedule_text or ""
        bind.execute(
            sa.text(
                "INSERT INTO replay_schedules (environment_id, sha256, text_bytes, text, requested_by, created_at) "
                "SELECT environment_id, schedule_sha256, :size, schedule_text, :owner, created_at FROM rehearsals "
                "WHERE id = :r"
            ),
            {"size": len(text.encode()), "owner": _owner(rehearsal.requested_by), "r": rehearsal.id},
        )
        stored = bind.execute(sa.text("SELECT MAX(id) FROM replay_schedules")).scalar()
        bind.execute(sa.text("UPDATE rehearsals SET schedule_id = :s WHERE id = :r"), {"s": stored, "r": rehearsal.id})
        bind.execute(
            sa.text(
                "UPDATE runs SET replay_schedule_id = :s, replay_destination_id = (SELECT destination_id FROM hosts "
                "WHERE hosts.id = runs.server_host_id) WHERE rehearsal_id = :r"
            ),
            {"s": stored, "r": rehearsal.id},
        )
        runs = bind.execute(
            sa.text("SELECT id, replay_schedule FROM runs WHERE rehearsal_id = :r"), {"r": rehearsal.id}
        )
        for run in runs.all():
            if run.replay_schedule == text:  # the whole schedule: named, not copied
                bind.execute(sa.text("UPDATE runs SET replay_schedule = NULL WHERE id = :run"), {"run": run.id})


def _part(text: str, connections: list[int] | None) -> str:
    """As runs.probes.schedule_part then (a migration keeps its own copy of what it relies on)."""
    if connections is None:
        return text
    position = {connection: new for new, connection in enumerate(connections)}
    lines = text.splitlines()
    out = [lines[0]] if lines and lines[0].startswith("#") else []
    out.append(
        f"# part: connection{'s' if len(connections) > 1 else ''} {', '.join(map(str, connections))} of the "
        "rehearsal's schedule, renumbered from 0 in that order"
    )
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if fields and int(fields[0]) in position:
            out.append(" ".join([str(position[int(fields[0])]), *fields[1:]]))
    return "\n".join(out) + "\n"


def downgrade() -> None:
    # SQLite (pysqlite) runs DDL outside a transaction until the first DML statement: one that changes
    # nothing opens it, so that a downgrade refused by an older revision below rolls all of this back
    # (else its table copies would be half kept, and the retry would fail)
    op.execute("UPDATE rehearsals SET id = id WHERE 1 = 0")
    with op.batch_alter_table("rehearsals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("schedule_text", sa.Text(), nullable=True))
    _texts_back()
    with op.batch_alter_table("rehearsals", schema=None) as batch_op:
        batch_op.alter_column("schedule_text", existing_type=sa.Text(), nullable=False)
        batch_op.drop_constraint(batch_op.f("fk_rehearsals_schedule_id_replay_schedules"), type_="foreignkey")
        batch_op.drop_column("schedule_id")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_runs_replay_destination_id_destinations"), type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("fk_runs_replay_schedule_id_replay_schedules"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_runs_replay_schedule_id"))
        batch_op.drop_column("replay_destination_id")
        batch_op.drop_column("replay_connections")
        batch_op.drop_column("replay_schedule_id")
    op.drop_table("replay_schedules")


def _texts_back() -> None:
    """Each rehearsal's text, and each run's that named it (a part: its connections' lines)."""
    bind = op.get_bind()
    texts = dict(bind.execute(sa.text("SELECT id, text FROM replay_schedules")).all())
    rehearsals = bind.execute(sa.text("SELECT id, schedule_id FROM rehearsals")).all()
    for rehearsal_id, schedule_id in rehearsals:
        bind.execute(
            sa.text("UPDATE rehearsals SET schedule_text = :t WHERE id = :r"),
            {"t": texts.get(schedule_id, ""), "r": rehearsal_id},
        )
    runs_table = sa.table(
        "runs",
        sa.column("id"),
        sa.column("replay_schedule"),
        sa.column("replay_schedule_id"),
        sa.column("replay_connections", sa.JSON()),
    )
    runs = bind.execute(
        sa.select(runs_table.c.id, runs_table.c.replay_schedule_id, runs_table.c.replay_connections).where(
            runs_table.c.replay_schedule.is_(None), runs_table.c.replay_schedule_id.is_not(None)
        )
    ).all()
    for run in runs:
        bind.execute(
            sa.text("UPDATE runs SET replay_schedule = :t WHERE id = :r"),
            {"t": _part(texts.get(run.replay_schedule_id, ""), run.replay_connections), "r": run.id},
        )
