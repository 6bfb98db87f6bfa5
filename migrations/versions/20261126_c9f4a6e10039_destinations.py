"""Destinations and shared links (issue 38): an environment sends redo to one or more destinations
(standby, far sync, cascaded standby), each with its hosts, transport and network path; hops that
cross one physical link are a shared link

Every existing environment gets one destination, "standby" (kind standby, the environment's transport
mode and link, hadr_role "principal" on Db2 HADR, position 1), and every standby host of the
environment is pointed at it: nothing is lost, and the environment's transport and link fields go on
mirroring that first destination. A standby's node number becomes unique per destination, a primary's
stays unique per environment (a partial unique index: NULLs are distinct in a unique index).

The downgrade refuses while any environment has more than one destination (their hosts and paths
would have nowhere to go); otherwise it drops the new tables and the hosts' column and restores the
old unique constraint. Shared links are dropped with it.

Revision ID: c9f4a6e10039
Revises: b8e3f0d50038
Create Date: 2026-11-26 18:00:00.000000
"""

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import redolab.core.db

revision: str = "c9f4a6e10039"
down_revision: str | None = "b8e3f0d50038"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY_LENGTH = 90
TRANSPORT_MODES = ("ASYNC", "SYNC", "FASTSYNC", "NEARSYNC", "SUPERASYNC")
FIRST_NAME = "standby"


def _enum(*values: str, name: str) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, length=20)


def _create_tables() -> None:
    op.create_table(
        "destinations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("name_key", sa.String(length=KEY_LENGTH), nullable=True),
        sa.Column("kind", _enum("standby", "far_sync", "cascaded", name="destinationkind"), nullable=False),
        sa.Column("transport", _enum(*TRANSPORT_MODES, name="transportmode"), nullable=False),
        sa.Column("feeds_from_id", sa.Integer(), nullable=True),
        sa.Column("hadr_role", _enum("principal", "auxiliary", name="hadrrole"), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("link_bandwidth_bits_per_second", sa.BigInteger(), nullable=True),
        sa.Column("link_rtt_seconds", sa.Float(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_destinations_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["feeds_from_id"], ["destinations.id"], name=op.f("fk_destinations_feeds_from_id_destinations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_destinations")),
    )
    with op.batch_alter_table("destinations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_destinations_environment_id"), ["environment_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_destinations_feeds_from_id"), ["feeds_from_id"], unique=False)
        batch_op.create_index("ix_destinations_environment_id_name_key", ["environment_id", "name_key"], unique=True)
    op.create_table(
        "shared_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("environment_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("name_key", sa.String(length=KEY_LENGTH), nullable=True),
        sa.Column("bandwidth_bits_per_second", sa.BigInteger(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("created_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", redolab.core.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_shared_links_environment_id_environments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shared_links")),
    )
    with op.batch_alter_table("shared_links", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_shared_links_environment_id"), ["environment_id"], unique=False)
        batch_op.create_index("ix_shared_links_environment_id_name_key", ["environment_id", "name_key"], unique=True)
    op.create_table(
        "shared_link_hops",
        sa.Column("shared_link_id", sa.Integer(), nullable=False),
        sa.Column("destination_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["destination_id"],
            ["destinations.id"],
            name=op.f("fk_shared_link_hops_destination_id_destinations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["shared_link_id"],
            ["shared_links.id"],
            name=op.f("fk_shared_link_hops_shared_link_id_shared_links"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("shared_link_id", "destination_id", name=op.f("pk_shared_link_hops")),
    )
    with op.batch_alter_table("shared_link_hops", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_shared_link_hops_destination_id"), ["destination_id"], unique=False)


def _first_destinations() -> None:
    """One destination per environment, copied from its fields; its standby hosts point at it."""
    from redolab.core.db import utcnow
    from redolab.core.fields import name_key  # the comparison the application makes

    connection = op.get_bind()
    environments = sa.table(
        "environments",
        sa.column("id", sa.Integer()),
        sa.column("platform", sa.String()),
        sa.column("transport_mode", sa.String()),
        sa.column("link_bandwidth_bits_per_second", sa.BigInteger()),
        sa.column("link_rtt_seconds", sa.Float()),
    )
    destinations = sa.table(
        "destinations",
        *(sa.column(name, sa.String()) for name in ("name", "name_key", "kind", "transport", "hadr_role", "notes")),
        sa.column("id", sa.Integer()),
        sa.column("environment_id", sa.Integer()),
        sa.column("position", sa.Integer()),
        sa.column("link_bandwidth_bits_per_second", sa.BigInteger()),
        sa.column("link_rtt_seconds", sa.Float()),
        sa.column("created_at", redolab.core.db.UTCDateTime()),
        sa.column("updated_at", redolab.core.db.UTCDateTime()),
    )
    hosts = sa.table(
        "hosts",
        sa.column("environment_id", sa.Integer()),
        sa.column("role", sa.String()),
        sa.column("destination_id", sa.Integer()),
    )
    key = hashlib.sha256(name_key(FIRST_NAME).encode()).hexdigest()
    now = utcnow()
    for row in connection.execute(sa.select(environments)).all():
        connection.execute(
            destinations.insert().values(
                environment_id=row.id,
                name=FIRST_NAME,
                name_key=key,
                kind="standby",
                transport=row.transport_mode,
                hadr_role="principal" if row.platform == "hadr" else None,
                position=1,
                link_bandwidth_bits_per_second=row.link_bandwidth_bits_per_second,
                link_rtt_seconds=row.link_rtt_seconds,
                notes="",
                created_at=now,
                updated_at=now,
            )
        )
    first = (
        sa.select(destinations.c.id).where(destinations.c.environment_id == hosts.c.environment_id).scalar_subquery()
    )
    connection.execute(hosts.update().where(hosts.c.role == "standby").values(destination_id=first))


def upgrade() -> None:
    _create_tables()
    with op.batch_alter_table("hosts", schema=None) as batch_op:  # SQLite: the table is rebuilt (foreign keys off)
        batch_op.add_column(sa.Column("destination_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            op.f("fk_hosts_destination_id_destinations"),
            "destinations",
            ["destination_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch_op.drop_constraint(op.f("uq_hosts_environment_id_role_node_number"), type_="unique")
        batch_op.create_index(batch_op.f("ix_hosts_destination_id"), ["destination_id"], unique=False)
    _first_destinations()
    op.create_index(
        "ix_hosts_destination_node", "hosts", ["environment_id", "role", "destination_id", "node_number"], unique=True
    )
    op.create_index(
        "ix_hosts_primary_node",
        "hosts",
        ["environment_id", "role", "node_number"],
        unique=True,
        sqlite_where=sa.text("destination_id IS NULL"),
        postgresql_where=sa.text("destination_id IS NULL"),
    )


def _refuse_lossy_downgrade() -> None:
    connection = op.get_bind()
    crowded = connection.execute(
        sa.text(
            "SELECT e.name, COUNT(*) FROM destinations d JOIN environments e ON e.id = d.environment_id "
            "GROUP BY e.id, e.name HAVING COUNT(*) > 1 ORDER BY e.name"
        )
    ).all()
    if crowded:
        named = ", ".join(f"'{name}' ({count} destinations)" for name, count in crowded[:10])
        raise RuntimeError(
            f"Cannot downgrade below c9f4a6e10039: {named} have more than one destination, which the older "
            "schema cannot hold. Delete all but the first destination of each (and their hosts) first."
        )


def downgrade() -> None:
    _refuse_lossy_downgrade()
    op.drop_index("ix_hosts_primary_node", table_name="hosts")
    op.drop_index("ix_hosts_destination_node", table_name="hosts")
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_hosts_destination_id"))
        batch_op.drop_constraint(op.f("fk_hosts_destination_id_destinations"), type_="foreignkey")
        batch_op.drop_column("destination_id")
        batch_op.create_unique_constraint(
            op.f("uq_hosts_environment_id_role_node_number"), ["environment_id", "role", "node_number"]
        )
    op.drop_table("shared_link_hops")
    op.drop_table("shared_links")
    op.drop_table("destinations")
