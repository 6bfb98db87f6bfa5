"""The stored redo analysis of an environment (see planning/stored.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, LargeBinary, String
from sqlalchemy.orm import Mapped, deferred, mapped_column

from redolab.core.db import Base, UTCDateTime, utcnow


class StoredAnalysis(Base):
    """All of an environment's imports analysed together, once per change of the imports, the
    headroom or the time zone: the summary (`redolab redo analyze --json`), the History charts' data
    and the requirement the plan uses (zlib-compressed pickle, read only when the plan needs it)."""

    __tablename__ = "redo_analyses"

    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True)
    signature: Mapped[str] = mapped_column(String(64))
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    summary: Mapped[dict | None] = mapped_column(JSON)
    charts: Mapped[dict | None] = deferred(mapped_column(JSON))
    requirement: Mapped[bytes | None] = deferred(mapped_column(LargeBinary))
