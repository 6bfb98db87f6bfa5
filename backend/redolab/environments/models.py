"""Environments (a primary and its destinations: standbys, far sync instances, cascaded standbys), their
hosts and the links the destinations' hops share."""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import Mapped, declared_attr, mapped_column, relationship, validates

from redolab.core.db import Base, TimestampMixin, UTCDateTime, enum_column
from redolab.core.fields import name_key

NAME_KEY_LENGTH = 90  # a SHA-256 in hex, and the suffix a migration gave rows that clashed before


def stored_name_key(name: str) -> str:
    """What the unique index on names holds: the SHA-256 (hex) of the name as people compare it
    (core.fields.name_key: NFKC, case folded, invisible characters left out). A digest, because a
    folded name can be 18 times longer than the name (NFKC expands some ligatures) and an index
    entry has a size limit; two simultaneous creates of look-alike names meet at this index."""
    return hashlib.sha256(name_key(name).encode()).hexdigest()


def same_or_new_key(current: str | None, name: str) -> str:
    """The key to store for `name`: the current one when the name reads the same (a row that clashed
    before the index keeps the suffix its migration gave it), else the new name's."""
    key = stored_name_key(name)
    return current if current is not None and current.split("-", 1)[0] == key else key


class Platform(StrEnum):
    dataguard = "dataguard"
    hadr = "hadr"

    @property
    def label(self) -> str:
        return {"dataguard": "Oracle Data Guard", "hadr": "Db2 HADR"}[self.value]


class ProtectionMode(StrEnum):
    max_performance = "max_performance"
    max_availability = "max_availability"
    max_protection = "max_protection"

    @property
    def label(self) -> str:
        return "Maximum " + self.value.removeprefix("max_").capitalize()


class TransportMode(StrEnum):
    """Data Guard redo transport (ASYNC, SYNC, FASTSYNC) or HADR sync mode."""

    async_ = "ASYNC"
    sync = "SYNC"
    fastsync = "FASTSYNC"
    nearsync = "NEARSYNC"
    superasync = "SUPERASYNC"

    @property
    def label(self) -> str:
        return self.value


TRANSPORT_MODES = {
    Platform.dataguard: (TransportMode.async_, TransportMode.sync, TransportMode.fastsync),
    Platform.hadr: (
        TransportMode.sync,
        TransportMode.nearsync,
        TransportMode.async_,
        TransportMode.superasync,
    ),
}


class HostRole(StrEnum):
    primary = "primary"
    standby = "standby"

    @property
    def label(self) -> str:
        return self.value.capitalize()


class DestinationKind(StrEnum):
    standby = "standby"
    far_sync = "far_sync"  # Data Guard: receives redo and forwards it, holds no datafiles
    cascaded = "cascaded"  # a standby fed by a standby or another cascaded standby (redo shipped ASYNC)

    @property
    def label(self) -> str:
        return {"standby": "Standby", "far_sync": "Far sync instance", "cascaded": "Cascaded standby"}[self.value]


class HadrRole(StrEnum):
    """Db2 HADR: one principal standby (any sync mode) and up to two auxiliaries (SUPERASYNC)."""

    principal = "principal"
    auxiliary = "auxiliary"

    @property
    def label(self) -> str:
        return self.value.capitalize()


class Environment(TimestampMixin, Base):
    __tablename__ = "environments"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    # set with the name (see _keyed); a unique index. Nullable in the schema only: see its migration
    name_key: Mapped[str | None] = mapped_column(String(NAME_KEY_LENGTH), index=True, unique=True)
    description: Mapped[str] = mapped_column(String(500), default="")
    platform: Mapped[Platform] = mapped_column(enum_column(Platform))
    database_size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    primary_rac_nodes: Mapped[int] = mapped_column(Integer, default=1)
    standby_rac_nodes: Mapped[int] = mapped_column(Integer, default=1)
    protection_mode: Mapped[ProtectionMode | None] = mapped_column(enum_column(ProtectionMode))
    transport_mode: Mapped[TransportMode] = mapped_column(enum_column(TransportMode))
    instantiation_goal_seconds: Mapped[float | None] = mapped_column(Float)
    rpo_goal_seconds: Mapped[float | None] = mapped_column(Float)  # the data loss the business accepts
    # the failover time the business accepts: the apply backlog is judged against it
    rto_goal_seconds: Mapped[float | None] = mapped_column(Float)
    # Oracle's release as the DBA says it or V$INSTANCE.VERSION reads ("19c", "19.21.0.0.0"): the
    # settings start from its defaults and maximums ("" when not known)
    database_release: Mapped[str] = mapped_column(String(40), default="", server_default="")
    # the standby's redo apply rate (bytes/s): measured (V$RECOVERY_PROGRESS "Active Apply Rate") or entered
    apply_rate_bytes_per_second: Mapped[float | None] = mapped_column(Float)
    # Fast-Start Failover is used: FastStartFailoverLagLimit is where the RPO goal lands
    fast_start_failover: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # the user's word that the database is licensed for Advanced Compression (redo transport compression)
    advanced_compression_licensed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The instantiation copy (RMAN RESTORE ... FROM SERVICE): channels on each node, the nodes that run
    # them (None: the standby's RAC nodes), SECTION SIZE in bytes (None: whole files), and the primary's
    # archive destination free space the redo of the copy waits in (bytes).
    copy_channels_per_node: Mapped[int | None] = mapped_column(Integer)
    copy_nodes: Mapped[int | None] = mapped_column(Integer)
    copy_section_bytes: Mapped[int | None] = mapped_column(BigInteger)
    archive_free_bytes: Mapped[int | None] = mapped_column(BigInteger)
    headroom_percent: Mapped[float] = mapped_column(Float, default=30.0)
    apply_overhead_percent: Mapped[float] = mapped_column(Float, default=30.0)
    # the share of the link kept for other traffic (backups, the application): the RPO answer judges
    # links and tiers at the rest (MOS 2064368.1: size "along with any other network activity")
    link_reserved_percent: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    link_bandwidth_bits_per_second: Mapped[int | None] = mapped_column(BigInteger)
    link_rtt_seconds: Mapped[float | None] = mapped_column(Float)
    # The database's time zone (IANA name): imported times are read in it, stored in UTC, shown in it.
    time_zone: Mapped[str] = mapped_column(String(64), default="UTC", server_default="UTC")
    notes: Mapped[str] = mapped_column(Text, default="")
    # The user's word that the database is licensed for Oracle's Diagnostics Pack: only then does a
    # collection read AWR (DBA_HIST_*), which the licence covers.
    diagnostics_pack_licensed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Collections on a schedule: every this many seconds (None: off), the next one due then.
    collect_every_seconds: Mapped[int | None] = mapped_column(Integer)
    collect_next_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    hosts: Mapped[list[Host]] = relationship(
        back_populates="environment",
        cascade="all, delete-orphan",
        order_by="(Host.role, Host.node_number)",
    )
    credentials: Mapped[list[Credential]] = relationship(cascade="all, delete-orphan", order_by="Credential.name")
    # removed with the environment by the database (ON DELETE CASCADE), after its hosts
    destinations: Mapped[list[Destination]] = relationship(
        back_populates="environment",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="(Destination.position, Destination.id)",
    )
    shared_links: Mapped[list[SharedLink]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, order_by="SharedLink.id"
    )
    # the link tiers the buyer can choose here, each with its monthly price (planning/tiers.py reads them)
    link_tiers: Mapped[list[LinkTier]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, order_by="(LinkTier.bits_per_second, LinkTier.id)"
    )

    @validates("name")
    def _keyed(self, _field: str, name: str) -> str:
        self.name_key = same_or_new_key(self.name_key, name)
        return name

    @property
    def first_destination(self) -> Destination | None:
        """The destination the plan reads (lowest position): transport_mode and the link fields mirror it."""
        return self.destinations[0] if self.destinations else None

    def standby_hosts(self, destination: Destination | None = None) -> list[Host]:
        """The standby hosts of `destination`, by default of the first one: a second destination's
        node 1 never pairs with the primary's node 1 in a run meant for the first."""
        chosen = destination or self.first_destination
        wanted = chosen.id if chosen is not None else None
        return [h for h in self.hosts if h.role is HostRole.standby and h.destination_id == wanted]


# A destination stands for the hop that delivers redo into it (from its feeds_from, or from the primary);
# a shared link lists the hops that cross one physical link (the primary's uplink, one WAN circuit).
shared_link_hops = Table(
    "shared_link_hops",
    Base.metadata,
    Column("shared_link_id", ForeignKey("shared_links.id", ondelete="CASCADE"), primary_key=True),
    Column("destination_id", ForeignKey("destinations.id", ondelete="CASCADE"), primary_key=True, index=True),
)


class Destination(TimestampMixin, Base):
    """Where the primary's redo goes: a standby, a far sync instance, or a cascaded standby fed by
    another destination; its hosts (RAC nodes), its transport and its network path. Positions number
    the destinations 1.. in display order; the first is the one the environment's plan reads."""

    __tablename__ = "destinations"
    __table_args__ = (
        Index("ix_destinations_environment_id_name_key", "environment_id", "name_key", unique=True),
        {"info": {"contents": (0, "destination", False, 1)}},
    )  # contents: what deleting its environment says (its first destination is made with it)

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    name_key: Mapped[str | None] = mapped_column(String(NAME_KEY_LENGTH))  # set with the name; unique per environment
    kind: Mapped[DestinationKind] = mapped_column(enum_column(DestinationKind))
    transport: Mapped[TransportMode] = mapped_column(enum_column(TransportMode))
    # No ON DELETE: the service refuses to delete a destination another is fed from (SET NULL would
    # silently turn a cascaded standby into one fed by the primary).
    feeds_from_id: Mapped[int | None] = mapped_column(ForeignKey("destinations.id"), index=True)
    hadr_role: Mapped[HadrRole | None] = mapped_column(enum_column(HadrRole))  # None for Data Guard
    position: Mapped[int] = mapped_column(Integer, default=1)
    link_bandwidth_bits_per_second: Mapped[int | None] = mapped_column(BigInteger)
    link_rtt_seconds: Mapped[float | None] = mapped_column(Float)
    notes: Mapped[str] = mapped_column(Text, default="")

    environment: Mapped[Environment] = relationship(back_populates="destinations")
    feeds_from: Mapped[Destination | None] = relationship(remote_side=lambda: [Destination.id])
    hosts: Mapped[list[Host]] = relationship(back_populates="destination", order_by="Host.node_number")
    shared_links: Mapped[list[SharedLink]] = relationship(
        secondary=shared_link_hops, back_populates="destinations", passive_deletes=True
    )

    @validates("name")
    def _keyed(self, _field: str, name: str) -> str:
        self.name_key = same_or_new_key(self.name_key, name)
        return name


class SharedLink(TimestampMixin, Base):
    """A physical link that several hops share (the primary's uplink, one WAN circuit): its nominal
    bandwidth (bit/s) is what their redo adds up against."""

    __tablename__ = "shared_links"
    __table_args__ = (
        Index("ix_shared_links_environment_id_name_key", "environment_id", "name_key", unique=True),
        {"info": {"contents": (0, "shared link", False)}},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    name_key: Mapped[str | None] = mapped_column(String(NAME_KEY_LENGTH))  # set with the name; unique per environment
    bandwidth_bits_per_second: Mapped[int | None] = mapped_column(BigInteger)
    notes: Mapped[str] = mapped_column(Text, default="")

    destinations: Mapped[list[Destination]] = relationship(
        secondary=shared_link_hops, back_populates="shared_links", order_by="(Destination.position, Destination.id)"
    )

    @validates("name")
    def _keyed(self, _field: str, name: str) -> str:
        self.name_key = same_or_new_key(self.name_key, name)
        return name


class LinkTier(TimestampMixin, Base):
    """A link the environment's buyer can order: its nominal rate (bit/s, at most 1 Tbit/s) and, when
    known, its monthly price in a currency (ISO 4217 code). Names are unique per environment."""

    __tablename__ = "link_tiers"
    __table_args__ = (
        Index("ix_link_tiers_environment_id_name_key", "environment_id", "name_key", unique=True),
        {"info": {"contents": (0, "link tier", False)}},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    name_key: Mapped[str | None] = mapped_column(String(NAME_KEY_LENGTH))  # set with the name; unique per environment
    bits_per_second: Mapped[int] = mapped_column(BigInteger)
    monthly_price: Mapped[float | None] = mapped_column(Float)
    currency: Mapped[str | None] = mapped_column(String(3))

    @validates("name")
    def _keyed(self, _field: str, name: str) -> str:
        self.name_key = same_or_new_key(self.name_key, name)
        return name


class HostTransport(StrEnum):
    ssh = "ssh"
    local = "local"  # "This machine": the probe runs here, no SSH

    @property
    def label(self) -> str:
        return {"ssh": "SSH", "local": "This machine"}[self.value]


class CredentialKind(StrEnum):
    uploaded_key = "uploaded_key"  # stored encrypted in the database
    key_path = "key_path"  # a private key file on the redolab server
    agent = "agent"  # the redolab server's SSH agent

    @property
    def label(self) -> str:
        return {
            "uploaded_key": "Uploaded private key",
            "key_path": "Key file on the redolab server",
            "agent": "SSH agent of the redolab server",
        }[self.value]


class Credential(TimestampMixin, Base):
    """How redolab authenticates over SSH. Secrets are encrypted and never shown again."""

    __tablename__ = "credentials"
    __table_args__ = (
        UniqueConstraint("environment_id", "name"),
        {"info": {"contents": (1, "SSH credential", True)}},
    )  # contents: what deleting its environment says

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    kind: Mapped[CredentialKind] = mapped_column(enum_column(CredentialKind))
    encrypted_private_key: Mapped[str | None] = mapped_column(Text)
    encrypted_passphrase: Mapped[str | None] = mapped_column(Text)
    key_path: Mapped[str | None] = mapped_column(String(500))
    public_key_fingerprint: Mapped[str | None] = mapped_column(String(100))


class Host(TimestampMixin, Base):
    __tablename__ = "hosts"
    __table_args__ = (
        # A standby's node number is unique in its destination, a primary's in its environment (a
        # partial index: NULLs are distinct in a unique index, on both databases).
        Index("ix_hosts_destination_node", "environment_id", "role", "destination_id", "node_number", unique=True),
        Index(
            "ix_hosts_primary_node",
            "environment_id",
            "role",
            "node_number",
            unique=True,
            sqlite_where=text("destination_id IS NULL"),
            postgresql_where=text("destination_id IS NULL"),
        ),
        Index("ix_hosts_environment_id_name_key", "environment_id", "name_key", unique=True),
        {"info": {"contents": (0, "host", False)}},
    )  # contents: what deleting its environment says

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    role: Mapped[HostRole] = mapped_column(enum_column(HostRole))
    # The destination a standby host belongs to; None for a primary. Deleting a destination that
    # still has hosts is refused by the service (SET NULL is only the database's last word).
    destination_id: Mapped[int | None] = mapped_column(ForeignKey("destinations.id", ondelete="SET NULL"), index=True)
    node_number: Mapped[int] = mapped_column(Integer, default=1)
    name: Mapped[str] = mapped_column(String(100))
    name_key: Mapped[str | None] = mapped_column(String(NAME_KEY_LENGTH))  # set with the name; unique per environment
    ssh_address: Mapped[str] = mapped_column(String(255))
    ssh_port: Mapped[int] = mapped_column(Integer, default=22)
    ssh_user: Mapped[str] = mapped_column(String(32))
    data_address: Mapped[str | None] = mapped_column(String(255))
    data_interface: Mapped[str | None] = mapped_column(String(15))
    transport: Mapped[HostTransport] = mapped_column(
        enum_column(HostTransport), default=HostTransport.ssh, server_default="ssh"
    )
    credential_id: Mapped[int | None] = mapped_column(ForeignKey("credentials.id", ondelete="SET NULL"))
    # The pinned SSH host key (OpenSSH public key line) and its SHA256 fingerprint.
    host_key: Mapped[str | None] = mapped_column(Text)
    host_key_fingerprint: Mapped[str | None] = mapped_column(String(100))
    # An admin's permission for kernel-maximum sweeps to set tcp_rmem/tcp_wmem here by sysctl.
    allow_kernel_changes: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The log disk, from `redoprobe disk` at several write sizes: time = size / rate + overhead.
    disk_rate_bytes_per_second: Mapped[float | None] = mapped_column(Float)
    disk_overhead_seconds: Mapped[float | None] = mapped_column(Float)
    disk_path: Mapped[str | None] = mapped_column(String(255))
    disk_measured_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    disk_points: Mapped[list | None] = mapped_column(JSON)  # [{write_bytes, seconds_per_write, writes}]
    # The encryption ceiling, from `openssl speed` on the host (remote.crypto.CryptoSpeed.to_json()).
    crypto_measured_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    crypto_speed: Mapped[dict | None] = mapped_column(JSON)
    # How a collection reaches the database on this (primary) host; db_kind None: not set up.
    # Oracle: SQL*Plus from ORACLE_HOME (None: looked up for ORACLE_SID in the host's /etc/oratab),
    # `/ as sysdba` (or `/@connect` with a wallet, or db_user with the password on standard input).
    # Db2: the instance's sqllib (db2profile) and the database name. db_os_user: run through
    # `sudo -n -u` that user. The password is encrypted like SSH keys and never returned.
    db_kind: Mapped[str | None] = mapped_column(String(10))
    db_os_user: Mapped[str | None] = mapped_column(String(32))
    oracle_home: Mapped[str | None] = mapped_column(String(255))
    oracle_sid: Mapped[str | None] = mapped_column(String(64))
    db_connect: Mapped[str | None] = mapped_column(String(255))
    db_user: Mapped[str | None] = mapped_column(String(128))
    db_encrypted_password: Mapped[str | None] = mapped_column(Text)
    db2_sqllib: Mapped[str | None] = mapped_column(String(255))
    db2_database: Mapped[str | None] = mapped_column(String(8))

    environment: Mapped[Environment] = relationship(back_populates="hosts")
    destination: Mapped[Destination | None] = relationship(back_populates="hosts")
    credential: Mapped[Credential | None] = relationship()

    @validates("name")
    def _keyed(self, _field: str, name: str) -> str:
        self.name_key = same_or_new_key(self.name_key, name)
        return name

    @property
    def has_db_password(self) -> bool:
        return self.db_encrypted_password is not None

    @property
    def probe_address(self) -> str:
        """Where the probe's traffic goes: the data address, or the SSH address."""
        if self.transport is HostTransport.local:
            return self.data_address or "127.0.0.1"
        return self.data_address or self.ssh_address


class HostPair:
    """A client host (sends) and a server host (receives) of the environment, for a run or a sweep.
    The names are kept as at request time, so the row stays readable after its hosts are edited or
    removed (the ids then become NULL)."""

    client_host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="SET NULL"))
    server_host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="SET NULL"))
    client_host_name: Mapped[str] = mapped_column(String(100))
    server_host_name: Mapped[str] = mapped_column(String(100))

    # declared per class: each points at that class's own column
    @declared_attr
    def client_host(cls) -> Mapped[Host | None]:
        return relationship(Host, foreign_keys=lambda: [cls.client_host_id])

    @declared_attr
    def server_host(cls) -> Mapped[Host | None]:
        return relationship(Host, foreign_keys=lambda: [cls.server_host_id])
