"""Rehearsals: a window of the environment's own redo replayed through the real link. A rehearsal
owns one run per host pair (one pair: one run with a connection per thread; node pairs: thread n
from primary node n to standby node n, all at once); its schedule and window are kept to trust and
repeat it, and its measured result is stored once every run has ended."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from redolab.core.db import Base, UTCDateTime, enum_column, utcnow
from redolab.runs.models import ProbeMode, ReplaySchedule, Run


class Rehearsal(Base):
    __tablename__ = "rehearsals"
    __table_args__ = {"info": {"contents": (3, "rehearsal", False)}}  # its runs are counted as runs

    id: Mapped[int] = mapped_column(primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"), index=True)
    # What was replayed: "worst-60m", "worst-15m", ... or "period" (dates given or dragged on the chart)
    window_kind: Mapped[str] = mapped_column(String(20))
    window_start: Mapped[datetime] = mapped_column(UTCDateTime())
    window_end: Mapped[datetime] = mapped_column(UTCDateTime())
    window_label: Mapped[str] = mapped_column(String(300), default="")
    granularity_seconds: Mapped[float | None] = mapped_column(Float)
    granularity: Mapped[str] = mapped_column(Text, default="")  # in words: what the replay cannot show
    imports: Mapped[list[str]] = mapped_column(JSON, default=list)  # the imports the series came from
    notes: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")  # threads left out, thin data
    threads: Mapped[list[int]] = mapped_column(JSON, default=list)  # connection i carries threads[i]
    mode: Mapped[ProbeMode] = mapped_column(enum_column(ProbeMode), default=ProbeMode.async_)
    message_bytes: Mapped[int] = mapped_column(BigInteger)
    scale: Mapped[float] = mapped_column(Float, default=1.0)
    speedup: Mapped[float] = mapped_column(Float, default=1.0)
    slot_seconds: Mapped[float] = mapped_column(Float)
    schedule_sha256: Mapped[str] = mapped_column(String(64))
    schedule_bytes: Mapped[int] = mapped_column(BigInteger)
    schedule_seconds: Mapped[float] = mapped_column(Float)
    schedule_lines: Mapped[int] = mapped_column(Integer, default=0)
    # the text, stored once (runs name it too, with the connections they replay)
    schedule_id: Mapped[int | None] = mapped_column(ForeignKey("replay_schedules.id", ondelete="SET NULL"))
    schedule: Mapped[ReplaySchedule | None] = relationship()
    label: Mapped[str] = mapped_column(String(200), default="")
    # to every destination the primary feeds at once (issue 38): each gets the whole schedule, one copy
    across_hops: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    # capped at a link tier (issue 55): its line rate shared by the connections, each paced at its share
    cap_bits_per_second: Mapped[int | None] = mapped_column(BigInteger)
    cap_label: Mapped[str] = mapped_column(String(200), default="", server_default="")
    requested_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The measured outcome, written once when every run has ended (see rehearsals.results)
    result: Mapped[dict | None] = mapped_column(JSON)

    runs: Mapped[list[Run]] = relationship(order_by="Run.id", foreign_keys="Run.rehearsal_id", viewonly=True)

    @property
    def schedule_text(self) -> str:
        """The schedule as the probe replayed it (one stored copy; its runs name the same)."""
        return self.schedule.text if self.schedule is not None else ""
