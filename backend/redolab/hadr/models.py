"""Imported HADR monitoring: one row per db2pd capture file, one per capture and HADR pair."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from redolab.core.db import Base, UTCDateTime, utcnow


class HadrImport(Base):
    __tablename__ = "hadr_imports"
    __table_args__ = (
        UniqueConstraint("environment_id", "sha256"),
        {"info": {"contents": (6, "HADR monitoring import", False)}},
    )  # contents: what deleting its environment says

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    filename: Mapped[str] = mapped_column(String(255))
    sha256: Mapped[str] = mapped_column(String(64))
    layouts: Mapped[list] = mapped_column(JSON)  # "before 10.1", "10.1+"
    captures: Mapped[int] = mapped_column(Integer)
    notes: Mapped[list] = mapped_column(JSON)
    time_zone: Mapped[str] = mapped_column(String(64))
    first_time: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_time: Mapped[datetime | None] = mapped_column(UTCDateTime())
    imported_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    samples: Mapped[list[HadrSample]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, order_by="HadrSample.at_epoch_seconds"
    )


class HadrSample(Base):
    """One HADR pair as one capture showed it (db2pd -hadr)."""

    __tablename__ = "hadr_samples"

    id: Mapped[int] = mapped_column(primary_key=True)
    import_id: Mapped[int] = mapped_column(ForeignKey("hadr_imports.id", ondelete="CASCADE"), index=True)
    line: Mapped[int] = mapped_column(Integer)
    at_epoch_seconds: Mapped[float] = mapped_column(Float)  # UTC
    member: Mapped[int] = mapped_column(Integer)
    database: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(20))
    state: Mapped[str | None] = mapped_column(String(30))
    sync_mode: Mapped[str | None] = mapped_column(String(20))
    connect_status: Mapped[str | None] = mapped_column(String(20))
    heartbeats_missed: Mapped[int | None] = mapped_column(Integer)
    log_gap_bytes: Mapped[float | None] = mapped_column(Float)
    recv_buf_percent: Mapped[float | None] = mapped_column(Float)
    recv_buf_pages: Mapped[int | None] = mapped_column(Integer)
    primary_file: Mapped[str | None] = mapped_column(String(20))
    primary_position: Mapped[int | None] = mapped_column(BigInteger)
    standby_file: Mapped[str | None] = mapped_column(String(20))
    standby_position: Mapped[int | None] = mapped_column(BigInteger)
    standby_id: Mapped[int | None] = mapped_column(Integer)
    # the pair: the two ends of the log shipping channel as the capture names them
    primary_host: Mapped[str | None] = mapped_column(String(255))
    primary_instance: Mapped[str | None] = mapped_column(String(128))
    primary_member: Mapped[int | None] = mapped_column(Integer)
    standby_host: Mapped[str | None] = mapped_column(String(255))
    standby_instance: Mapped[str | None] = mapped_column(String(128))
    standby_member: Mapped[int | None] = mapped_column(Integer)
    log_stream_id: Mapped[int | None] = mapped_column(Integer)
    # configured (seconds) and granted (bytes) values, as this side of the pair reports them
    hadr_timeout_seconds: Mapped[int | None] = mapped_column(Integer)
    peer_window_seconds: Mapped[int | None] = mapped_column(Integer)
    peer_wait_limit_seconds: Mapped[int | None] = mapped_column(Integer)
    heartbeat_interval_seconds: Mapped[int | None] = mapped_column(Integer)
    heartbeats_expected: Mapped[int | None] = mapped_column(Integer)
    sock_send_requested_bytes: Mapped[int | None] = mapped_column(BigInteger)
    sock_send_actual_bytes: Mapped[int | None] = mapped_column(BigInteger)
    sock_recv_requested_bytes: Mapped[int | None] = mapped_column(BigInteger)
    sock_recv_actual_bytes: Mapped[int | None] = mapped_column(BigInteger)
    # the primary's log writes that waited for HADR: seconds, and the count since activation
    wait_current_seconds: Mapped[float | None] = mapped_column(Float)
    wait_recent_avg_seconds: Mapped[float | None] = mapped_column(Float)
    wait_accumulated_seconds: Mapped[float | None] = mapped_column(Float)
    wait_count: Mapped[int | None] = mapped_column(BigInteger)
    # the standby's replay: position, log received but not replayed (bytes), HADR_SPOOL_LIMIT (pages; -1 unlimited)
    replay_position: Mapped[int | None] = mapped_column(BigInteger)
    recv_replay_gap_bytes: Mapped[int | None] = mapped_column(BigInteger)
    spool_limit_pages: Mapped[int | None] = mapped_column(Integer)

    @property
    def current_gap_bytes(self) -> int | None:
        """PRIMARY_LOG_POS - STANDBY_LOG_POS at the capture (never below 0: on a standby the primary's
        position is its last heartbeat's); HADR_LOG_GAP (log_gap_bytes) is a running average."""
        if self.primary_position is None or self.standby_position is None:
            return None
        return max(0, self.primary_position - self.standby_position)
