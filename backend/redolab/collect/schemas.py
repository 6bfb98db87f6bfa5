"""API schemas of collections."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from redolab.collect.models import CollectionStatus


class CollectionPublic(BaseModel):
    """A collection: how it went, its evidence and the facts it read (never a password)."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    environment_id: int
    host_id: int | None
    host_name: str
    database_kind: str
    status: CollectionStatus
    cancel_requested: bool
    scheduled: bool
    requested_by: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    failure_kind: str | None
    failure_step: str | None
    failure_message: str | None
    failure_hint: str | None
    database_version: str | None
    scripts: list
    row_counts: dict
    notes: list
    facts: dict | None
    facts_applied: bool
    import_id: int | None
    review: bool
    compressibility: bool  # the compressibility step was asked for (its samples feed the plan's transport card)
    staged: list | None  # with review: each import's upload_token, for POST .../redo/preview and .../redo/imports


class CollectionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    review: bool = False  # keep the rows as uploads to preview and import, instead of importing them
    compressibility: bool = Field(
        default=False,
        description="Also compress a few archived logs of the worst and a typical hour on the primary, read-only "
        "(Oracle only; nice 19, up to 256 MiB of each of 8 logs): their zlib ratio and CPU seconds per GiB.",
    )


class FactsApply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fields: list[str] | None = None  # None: every offered fact that differs
