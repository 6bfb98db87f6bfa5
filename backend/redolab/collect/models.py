"""A collection: one run of the shipped scripts on a primary host, what it read, and the import it made."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Integer, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from redolab.core.db import Base, UTCDateTime, enum_column, utcnow
from redolab.jobs.models import WorkStatus

CollectionStatus = WorkStatus  # as a run's: queued, running, succeeded, failed, cancelled


class Collection(Base):
    __tablename__ = "collections"
    __table_args__ = ({"info": {"contents": (6, "collection", False)}},)  # what deleting its environment says

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    host_id: Mapped[int | None] = mapped_column(ForeignKey("hosts.id", ondelete="SET NULL"))
    host_name: Mapped[str] = mapped_column(String(100))  # as at request time
    database_kind: Mapped[str] = mapped_column(String(10))  # oracle or db2
    status: Mapped[CollectionStatus] = mapped_column(enum_column(CollectionStatus), default=CollectionStatus.queued)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    scheduled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    requested_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # A failure: collect.errors.KINDS, the step, what the tool said, what to do.
    failure_kind: Mapped[str | None] = mapped_column(String(20))
    failure_step: Mapped[str | None] = mapped_column(String(40))
    failure_message: Mapped[str | None] = mapped_column(Text)
    failure_hint: Mapped[str | None] = mapped_column(Text)
    # The evidence: the database's version, each script sent [{name, sha256, defines}], rows per step.
    database_version: Mapped[str | None] = mapped_column(String(64))
    scripts: Mapped[list] = mapped_column(JSON, default=list)
    row_counts: Mapped[dict] = mapped_column(JSON, default=dict)
    notes: Mapped[list] = mapped_column(JSON, default=list)  # "no AWR: ...", "no new logs since ..."
    facts: Mapped[dict | None] = mapped_column(JSON)  # what the database says of itself (collect.facts)
    facts_applied: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    import_id: Mapped[int | None] = mapped_column(ForeignKey("redo_imports.id", ondelete="SET NULL"))
    # Preview first: the rows are kept as uploads of the requester's (redo.uploads), one per import it
    # would make ({name, token, filename, format, mapping, rows}), previewed and imported as a file is
    review: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # also sample archived logs' compressibility on the host (collect.compressibility): opt-in, it costs CPU there
    compressibility: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    staged: Mapped[list | None] = mapped_column(JSON)
    job_id: Mapped[int | None] = mapped_column(Integer)


class CompressibilitySample(Base):
    """One archived log measured on the primary by a collection's compressibility step: its first
    `bytes_read` bytes (at most collect.compressibility.SAMPLE_BYTES) compressed with zlib at `zlib_level`
    into `zlib_bytes`, and the host's CPU seconds to compress and to decompress them; or `error`."""

    __tablename__ = "compressibility_samples"

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(513))  # V$ARCHIVED_LOG.NAME
    hour: Mapped[str] = mapped_column(String(20))  # "worst hour" or "typical hour"
    thread: Mapped[int] = mapped_column(Integer)
    sequence: Mapped[int] = mapped_column(BigInteger)
    log_bytes: Mapped[int] = mapped_column(BigInteger)
    bytes_read: Mapped[int] = mapped_column(BigInteger, default=0)
    zlib_level: Mapped[int] = mapped_column(Integer)
    zlib_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    compress_cpu_seconds: Mapped[float] = mapped_column(Float, default=0.0)
    decompress_cpu_seconds: Mapped[float] = mapped_column(Float, default=0.0)
    # the standby's CPU seconds to decompress `standby_bytes` of this log (compressed on the primary and sent
    # through redolab: collect.standby_timing); None where the standby did not time it
    standby_bytes: Mapped[int | None] = mapped_column(BigInteger)
    standby_decompress_cpu_seconds: Mapped[float | None] = mapped_column(Float)
    # the LZ-class fast codec on the same bytes (collect.compressibility.FAST_CODECS); None: none on the host
    fast_codec: Mapped[str | None] = mapped_column(String(20))
    fast_bytes: Mapped[int | None] = mapped_column(BigInteger)
    fast_compress_cpu_seconds: Mapped[float | None] = mapped_column(Float)
    fast_decompress_cpu_seconds: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(String(200))
