"""Rehearsal request and response shapes (JSON API, form and CLI share the request)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from redolab.core.fields import BitRate, Bounds, Positive, SizeBytes, at_most
from redolab.runs.models import ProbeMode, RunStatus
from redolab.runs.schemas import Label, MessageBytes, sockbuf_floor

MIB = 1024 * 1024


class RehearsalCreate(BaseModel):
    """What to replay: `worst-60m` (default), `worst-15m`, `worst-5m`, `worst-1m`, or a period
    `FROM..TO` (ISO times, in the database's time zone unless they carry one); the volume scale
    (1.3 = the plan's headroom) and a time compression for a quick look."""

    model_config = ConfigDict(extra="forbid")

    window: Annotated[str, Field(max_length=200)] = "worst-60m"
    scale: Annotated[float, Field(gt=0, le=1000)] = 1.0
    speedup: Annotated[float, Field(ge=1, le=3600)] = 1.0
    mode: ProbeMode = ProbeMode.async_
    message_bytes: MessageBytes = None
    sockbuf_bytes: Annotated[
        SizeBytes, at_most(1024 * MIB, "1 GiB"), AfterValidator(sockbuf_floor), Bounds(minimum=4096)
    ] = None
    client_host_id: int | None = None
    server_host_id: int | None = None
    across_hops: bool = Field(False, description="Replay to every destination the primary feeds at once.")
    label: Label = ""
    cap_bits_per_second: Annotated[BitRate, Positive] = Field(
        None,
        description=(
            "Rehearse at a link tier: its line rate (bit/s, or text such as '500 Mbit/s'). Every connection is "
            "paced (SO_MAX_PACING_RATE) at the tier's rate shared by the threads (one connection per thread: "
            "rate / threads each), and the plan predicts the lag at the tier's redo payload rate."
        ),
    )
    cap_label: Label = Field("", description="The tier's name, as the what-if over link tiers lists it.")

    @field_validator("cap_label")
    @classmethod
    def _label_names_a_cap(cls, value: str, info: ValidationInfo) -> str:
        if value and info.data.get("cap_bits_per_second") is None:
            raise PydanticCustomError("cap_label", "A tier's name needs its rate: give cap_bits_per_second too.")
        return value


class RehearsalPublic(BaseModel):
    id: int
    environment_id: int
    status: RunStatus
    failure_reason: str | None
    window_kind: str
    window_start: datetime
    window_end: datetime
    window_label: str
    granularity_seconds: float | None
    granularity: str
    imports: list[str]
    notes: list[str]  # threads left out of the replay and why, thin data
    threads: list[int]
    mode: ProbeMode
    message_bytes: int
    scale: float
    speedup: float
    across_hops: bool
    compressed: bool
    cap_bits_per_second: int | None = Field(None, description="The link tier's line rate it was capped at (bit/s).")
    cap_label: str = Field("", description="The link tier's name.")
    slot_seconds: float
    schedule_sha256: str
    schedule_bytes: int
    schedule_seconds: float
    run_ids: list[int]
    result: dict | None
    label: str
    requested_by: str
    created_at: datetime
    status_url: str
    schedule_url: str
