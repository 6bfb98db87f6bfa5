"""The job table: work for the workers, claimed atomically, with heartbeats."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

import redolab.disktest.models  # noqa: F401  (jobs.disk_test_id refers to its table)
from redolab.core.db import Base, UTCDateTime, enum_column, utcnow


class JobStatus(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"


class Job(Base):
    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(20), default="run")  # run, sweep or disk
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    sweep_id: Mapped[int | None] = mapped_column(ForeignKey("sweeps.id", ondelete="CASCADE"), index=True)
    disk_test_id: Mapped[int | None] = mapped_column(ForeignKey("disk_tests.id", ondelete="CASCADE"), index=True)
    # The hosts the job occupies: two jobs sharing one never run at the same time.
    client_host_id: Mapped[int | None] = mapped_column(Integer)
    server_host_id: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[JobStatus] = mapped_column(enum_column(JobStatus), default=JobStatus.queued, index=True)
    worker_id: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
