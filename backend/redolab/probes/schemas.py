"""Run requests and their public form."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from redolab.core.fields import (
    BitRate,
    DurationSeconds,
    SizeBytes,
    at_most,
    blank_to_none,
    positive,
)
from redolab.probes.models import ProbeMode, RunStatus

_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._/+-]*$")
MIB = 1024 * 1024


def _check_write_dir(value: str | None) -> str | None:
    if value is None:
        return None
    if not _SAFE_PATH.match(value) or "/../" in f"{value}/" or len(value) > 400:
        raise PydanticCustomError(
            "path",
            "'{value}' is not a safe absolute directory: use letters, digits, '.', '_', '-', '+' "
            "and '/' only, starting with '/' (e.g. /u02/redoprobe)",
            {"value": value},
        )
    return value


class RunCreate(BaseModel):
    """What to run. Sizes, rates and durations: numbers in base units or text with units."""

    model_config = ConfigDict(extra="forbid")

    client_host_id: int
    server_host_id: int
    mode: ProbeMode = ProbeMode.async_
    conns: Annotated[int, Field(ge=1, le=1024)] = 1
    message_bytes: Annotated[SizeBytes, AfterValidator(positive), at_most(256 * MIB, "256 MiB")] = MIB
    sockbuf_bytes: Annotated[SizeBytes, at_most(1024 * MIB, "1 GiB")] = None
    duration_seconds: Annotated[DurationSeconds, AfterValidator(positive), at_most(3600, "1 h")] = 60.0
    interval_seconds: Annotated[DurationSeconds, AfterValidator(positive), at_most(600, "10 min")] = Field(
        default=5.0, validate_default=True
    )
    delay_us: Annotated[int, Field(ge=0, le=60_000_000)] = 0
    rate_bits_per_second: Annotated[BitRate, AfterValidator(positive)] = None
    write_dir: Annotated[str | None, AfterValidator(_check_write_dir)] = None
    sync_write: bool = False
    label: Annotated[str, Field(max_length=200)] = ""
    notes: Annotated[str, Field(max_length=10_000)] = ""

    @field_validator("write_dir", mode="before")
    @classmethod
    def _blank_dir_is_none(cls, value):
        value = blank_to_none(value)
        return value.strip() if isinstance(value, str) else value

    @field_validator("label", "notes", mode="before")
    @classmethod
    def _strip_text(cls, value):
        return value.strip() if isinstance(value, str) else (value or "")

    @field_validator("sockbuf_bytes")
    @classmethod
    def _sockbuf_floor(cls, value):
        if value is not None and value < 4096:
            raise PydanticCustomError("too_small", "A socket buffer must be at least 4 KiB.")
        return value

    @field_validator("interval_seconds")
    @classmethod
    def _interval_within_duration(cls, value, info: ValidationInfo):
        duration = info.data.get("duration_seconds")
        if value is not None and duration is not None and value > duration:
            raise PydanticCustomError("interval", "The interval cannot be longer than the duration.")
        return value

    @field_validator("sync_write")
    @classmethod
    def _sync_write_needs_dir(cls, value, info: ValidationInfo):
        if value and not info.data.get("write_dir"):
            raise PydanticCustomError("sync_write", "A synchronous standby write needs a write directory.")
        return value


class RunPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    environment_id: int
    client_host_id: int | None
    server_host_id: int | None
    client_host_name: str
    server_host_name: str
    mode: ProbeMode
    conns: int
    message_bytes: int
    sockbuf_bytes: int | None
    duration_seconds: float
    interval_seconds: float
    delay_us: int
    rate_bits_per_second: int | None
    write_dir: str | None
    sync_write: bool
    label: str
    notes: str
    status: RunStatus
    failure_reason: str | None
    requested_by: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    probe_version: str | None
    probe_sha256: str | None
    client_command: str | None
    server_command: str | None
    client_settings: dict | None
    server_settings: dict | None
    seconds: float | None
    bytes_sent: int | None
    bytes_received: int | None
    bytes_per_second: float | None
    retransmits: int | None
    sndbuf_granted_bytes: int | None
    rcvbuf_granted_bytes: int | None


class RunsPublic(BaseModel):
    data: list[RunPublic]
    count: int


class RunEventPublic(BaseModel):
    seq: int
    role: str
    event: str
    data: dict
