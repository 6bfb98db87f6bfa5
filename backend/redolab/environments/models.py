"""Environments (a primary and its standby) and their hosts."""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy import BigInteger, Enum, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from redolab.core.db import Base, TimestampMixin


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


def _enum(enum_cls: type[StrEnum]) -> Enum:
    return Enum(
        enum_cls,
        native_enum=False,
        length=20,
        values_callable=lambda members: [member.value for member in members],
        validate_strings=True,
    )


class Environment(TimestampMixin, Base):
    __tablename__ = "environments"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    description: Mapped[str] = mapped_column(String(500), default="")
    platform: Mapped[Platform] = mapped_column(_enum(Platform))
    database_size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    primary_rac_nodes: Mapped[int] = mapped_column(Integer, default=1)
    standby_rac_nodes: Mapped[int] = mapped_column(Integer, default=1)
    protection_mode: Mapped[ProtectionMode | None] = mapped_column(_enum(ProtectionMode))
    transport_mode: Mapped[TransportMode] = mapped_column(_enum(TransportMode))
    instantiation_goal_seconds: Mapped[float | None] = mapped_column(Float)
    headroom_percent: Mapped[float] = mapped_column(Float, default=30.0)
    apply_overhead_percent: Mapped[float] = mapped_column(Float, default=30.0)
    link_bandwidth_bits_per_second: Mapped[int | None] = mapped_column(BigInteger)
    link_rtt_seconds: Mapped[float | None] = mapped_column(Float)
    notes: Mapped[str] = mapped_column(Text, default="")

    hosts: Mapped[list[Host]] = relationship(
        back_populates="environment",
        cascade="all, delete-orphan",
        order_by="(Host.role, Host.node_number)",
    )


class Host(TimestampMixin, Base):
    __tablename__ = "hosts"
    __table_args__ = (UniqueConstraint("environment_id", "role", "node_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), index=True
    )
    role: Mapped[HostRole] = mapped_column(_enum(HostRole))
    node_number: Mapped[int] = mapped_column(Integer, default=1)
    name: Mapped[str] = mapped_column(String(100))
    ssh_address: Mapped[str] = mapped_column(String(255))
    ssh_port: Mapped[int] = mapped_column(Integer, default=22)
    ssh_user: Mapped[str] = mapped_column(String(32))
    data_address: Mapped[str | None] = mapped_column(String(255))
    data_interface: Mapped[str | None] = mapped_column(String(15))

    environment: Mapped[Environment] = relationship(back_populates="hosts")
