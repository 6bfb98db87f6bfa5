"""Bearer tokens name users by id and a random identity key (never by name)

Revision ID: 75f36cb7490d
Revises: 07c7c17f51b8
Create Date: 2026-11-25 10:40:12.264283
"""

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "75f36cb7490d"
down_revision: str | None = "07c7c17f51b8"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("identity_key", sa.String(length=32), nullable=True))
    # each existing user a random key of their own (bearer tokens issued before name users by name
    # and stop working: their holders ask for a new one)
    connection = op.get_bind()
    users = sa.table("users", sa.column("id", sa.Integer()), sa.column("identity_key", sa.String(32)))
    for (user_id,) in connection.execute(sa.select(users.c.id)).all():
        connection.execute(users.update().where(users.c.id == user_id).values(identity_key=secrets.token_hex(16)))
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.alter_column("identity_key", existing_type=sa.String(length=32), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("identity_key")
