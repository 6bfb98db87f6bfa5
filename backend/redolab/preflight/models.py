"""Evidence a DBA pasted for the Pre-flight card: a Broker VALIDATE output or V$RECOVERY_PROGRESS, kept
with the rows it was read into, who pasted it and when."""

from __future__ import annotations

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from redolab.core.db import Base, TimestampMixin


class Evidence(TimestampMixin, Base):
    __tablename__ = "preflight_evidence"
    __table_args__ = {"info": {"contents": (8, "pasted pre-flight output", False)}}

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    # validate_database, validate_database_strict, validate_database_spfile, validate_network,
    # validate_connect_identifier, validate_static_connect, recovery_progress
    kind: Mapped[str] = mapped_column(String(40))
    member: Mapped[str] = mapped_column(String(200), default="")  # the database it is about ("ALL")
    label: Mapped[str] = mapped_column(String(200))  # the user's own name for it (errors name it)
    text: Mapped[str] = mapped_column(Text)  # as pasted
    rows: Mapped[list] = mapped_column(JSON, default=list)  # [{check, member, status, detail, line}]
    # recovery_progress: {active|average|maximum_apply_bytes_per_second, redo_applied_bytes, apply_lag_seconds}
    figures: Mapped[dict] = mapped_column(JSON, default=dict)
    pasted_by: Mapped[str] = mapped_column(String(64))
