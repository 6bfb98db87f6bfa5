"""The job table: work for the workers, claimed atomically, with heartbeats."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from redolab.core.db import Base, UTCDateTime, enum_column, utcnow


class JobStatus(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"
    cancelled = "cancelled"  # before a worker claimed it (a conditional update: queued -> cancelled), or while it ran


class WorkStatus(StrEnum):
    """Where a piece of work the worker runs stands: a run (runs.RunStatus), a sweep, a collection."""

    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (WorkStatus.succeeded, WorkStatus.failed, WorkStatus.cancelled)


class Job(Base):
    __tablename__ = "jobs"
    # the queue's entries for what deleting an environment lists, and previews of uploads not imported
    __table_args__ = {"info": {"deleted_with": ("run", "sweep", "disk test", "collection", "redo history import")}}

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(20), default="run")  # run, sweep, disk or import
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    sweep_id: Mapped[int | None] = mapped_column(ForeignKey("sweeps.id", ondelete="CASCADE"), index=True)
    disk_test_id: Mapped[int | None] = mapped_column(ForeignKey("disk_tests.id", ondelete="CASCADE"), index=True)
    # An import of redo history: its record (gone when the import fails), what it reads and how far
    # it got; the error says why it failed.
    import_id: Mapped[int | None] = mapped_column(ForeignKey("redo_imports.id", ondelete="SET NULL"), index=True)
    environment_id: Mapped[int | None] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    label: Mapped[str | None] = mapped_column(String(255))  # the file's name
    source_path: Mapped[str | None] = mapped_column(String(1000))  # the upload, under the data directory
    options: Mapped[dict | None] = mapped_column(JSON)  # format and mapping
    progress_rows: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    estimated_rows: Mapped[int | None] = mapped_column(BigInteger)
    error: Mapped[str | None] = mapped_column(Text)
    # The hosts the job occupies: two jobs sharing one never run at the same time.
    client_host_id: Mapped[int | None] = mapped_column(Integer)
    server_host_id: Mapped[int | None] = mapped_column(Integer)
    # Jobs of one run on several hops at once ("cluster:12" across destinations, "rehearsal:3" to
    # every destination: the primary sends to each at the same time) may share a host with each
    # other, never with any other job.
    together: Mapped[str | None] = mapped_column(String(40))
    # Who queued it (a schedule's occurrence: the schedule's owner), for the per-user cap and an
    # admin's bulk cancel; and the seconds it is planned to hold its hosts (test time plus set-up),
    # from which the queue's estimated start is summed. None on jobs from before (or not counted).
    requested_by: Mapped[str | None] = mapped_column(String(64), index=True)
    planned_seconds: Mapped[float | None] = mapped_column(Float)
    status: Mapped[JobStatus] = mapped_column(enum_column(JobStatus), default=JobStatus.queued, index=True)
    worker_id: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
