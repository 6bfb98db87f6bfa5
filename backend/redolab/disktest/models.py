"""A log disk test on one host: `redoprobe disk` at several write sizes, run as a job."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from redolab.core.db import Base, UTCDateTime, utcnow


class DiskTest(Base):
    __tablename__ = "disk_tests"
    __table_args__ = {"info": {"contents": (7, "disk test", False)}}

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"), index=True)
    path: Mapped[str] = mapped_column(String(255))  # a directory on the host (the log file system)
    write_sizes: Mapped[list] = mapped_column(JSON)  # bytes
    seconds_per_size: Mapped[float] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(20), default="queued")  # queued, running, succeeded, failed
    error: Mapped[str | None] = mapped_column(Text)
    points: Mapped[list] = mapped_column(JSON, default=list)  # [{write_bytes, writes, seconds, seconds_per_write}]
    rate_bytes_per_second: Mapped[float | None] = mapped_column(Float)
    overhead_seconds: Mapped[float | None] = mapped_column(Float)
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    job_id: Mapped[int | None] = mapped_column(Integer)
