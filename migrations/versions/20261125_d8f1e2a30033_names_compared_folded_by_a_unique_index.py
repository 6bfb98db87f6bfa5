"""Environment and host names compared folded by a unique index (a stored key of the folded name)

Two simultaneous creates of look-alike names ('Prod' and 'Prod' in fullwidth letters) both passed the check in Python;
now each environment and each host stores `name_key`, the SHA-256 of its name as people compare it
(NFKC, case folded, invisible characters left out: redolab.core.fields.name_key), under a unique
index (environments: in all; hosts: per environment), so the second insert fails and is answered as
the check answers it.

Existing rows are filled here. Rows that already clash (look-alike names created before this check
existed, or by such a race) are all kept with their data: the oldest row (lowest id) of each group
of look-alikes gets the key itself, every later one the key with '-<its id>' appended, which is
deterministic and cannot collide with a plain key (a hex digest has no '-'). Those later rows keep
their names; renaming one is checked as any rename is.

The column stays nullable and the uniqueness is a unique index, not a constraint: on SQLite either
NOT NULL or a constraint means rebuilding the table, and rebuilding `environments` with foreign keys
on would cascade-delete every host, import and run. The application sets the key with every name.

Revision ID: d8f1e2a30033
Revises: c7e5a9f10033
Create Date: 2026-11-25 13:00:00
"""

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d8f1e2a30033"
down_revision: str | None = "c7e5a9f10033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY_LENGTH = 90


def _keys(rows, name_key) -> dict[int, str]:
    """{row id: stored key} for rows of (id, group, name), oldest first within each group."""
    seen: set[tuple[object, str]] = set()
    keys = {}
    for row_id, group, name in sorted(rows, key=lambda row: row[0]):
        key = hashlib.sha256(name_key(name).encode()).hexdigest()
        keys[row_id] = key if (group, key) not in seen else f"{key}-{row_id}"
        seen.add((group, key))
    return keys


def _fill(table_name: str, grouped_by: str | None, name_key) -> None:
    connection = op.get_bind()
    columns = [sa.column("id", sa.Integer()), sa.column("name", sa.String()), sa.column("name_key", sa.String())]
    if grouped_by:
        columns.append(sa.column(grouped_by, sa.Integer()))
    table = sa.table(table_name, *columns)
    group = table.c[grouped_by] if grouped_by else sa.literal(0)
    rows = connection.execute(sa.select(table.c.id, group, table.c.name)).all()
    for row_id, key in _keys(rows, name_key).items():
        connection.execute(table.update().where(table.c.id == row_id).values(name_key=key))


def upgrade() -> None:
    from redolab.core.fields import name_key  # the comparison the application makes

    for table_name in ("environments", "hosts"):
        with op.batch_alter_table(table_name, schema=None) as batch_op:  # ADD COLUMN: no table rebuilt
            batch_op.add_column(sa.Column("name_key", sa.String(length=KEY_LENGTH), nullable=True))
    _fill("environments", None, name_key)
    _fill("hosts", "environment_id", name_key)
    op.create_index(op.f("ix_environments_name_key"), "environments", ["name_key"], unique=True)
    op.create_index(op.f("ix_hosts_environment_id_name_key"), "hosts", ["environment_id", "name_key"], unique=True)


def downgrade() -> None:
    op.drop_index(op.f("ix_hosts_environment_id_name_key"), table_name="hosts")
    op.drop_index(op.f("ix_environments_name_key"), table_name="environments")
    for table_name in ("hosts", "environments"):  # natively: a rebuilt environments table would cascade
        op.execute(f"ALTER TABLE {table_name} DROP COLUMN name_key")
