"""Sweep requests and their public form."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from redolab.core.fields import (
    DurationSeconds,
    Given,
    Positive,
    at_most,
    blank_to_none,
)
from redolab.core.schema_rules import absent, document, when_equals
from redolab.core.units import MIB, format_bytes
from redolab.environments.schemas import HostPairPublic
from redolab.runs.models import RunStatus
from redolab.runs.schemas import RUN_RULES, IntervalSeconds, RunCreate, count_list, size_list
from redolab.sweeps.grid import MAX_CONNS, MAX_POINTS, connection_steps
from redolab.sweeps.models import SweepKind

# What every run of a sweep shares; the sweep sets conns, sockbuf_bytes and the kernel maximum.
SHARED_RUN_FIELDS = (
    "mode",
    "message_bytes",
    "duration_seconds",
    "interval_seconds",
    "delay_us",
    "rate_bits_per_second",
    "write_dir",
    "sync_write",
)


# What the document says of the lists (the validators also read comma-separated text with units): each
# item's range, and at most MAX_POINTS items, as a grid has at most MAX_POINTS points.
_SIZES = {"items": {"type": "integer", "minimum": 4096, "maximum": 1024 * MIB}, "maxItems": MAX_POINTS}
_COUNTS = {"items": {"type": "integer", "minimum": 1, "maximum": MAX_CONNS}, "minItems": 1, "maxItems": MAX_POINTS}
# A buffer or kernel-maximum sweep needs its sizes; a kernel-maximum one runs with autotuning.
_SWEEP_RULES = document(
    *RUN_RULES,
    when_equals(
        "kind",
        (SweepKind.sockbuf.value, SweepKind.kernel_max.value),
        then={"required": ["sizes"], "properties": {"sizes": {"minItems": 1}}},
    ),
    when_equals("kind", (SweepKind.kernel_max.value,), then=absent("sockbuf_bytes")),
)


class SweepCreate(RunCreate):
    """A grid of runs between one host pair. Each run has the shared fields of RunCreate; the
    sweep sets the connection count and the socket buffer or kernel maximum of each."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_SWEEP_RULES)

    kind: SweepKind = SweepKind.connections
    duration_seconds: Annotated[DurationSeconds, Positive, at_most(3600, "1 h"), Given] = 20.0
    interval_seconds: IntervalSeconds = Field(default=2.0, validate_default=True)
    # Connection sweeps
    conns_start: Annotated[int, Field(ge=1, le=MAX_CONNS)] = 1
    conns_step: Annotated[Annotated[int, Field(ge=1, le=MAX_CONNS)] | None, BeforeValidator(blank_to_none)] = None
    conns_max: Annotated[int, Field(ge=1, le=MAX_CONNS)] = 16
    threshold_percent: Annotated[float, Field(ge=0, le=100)] = 5.0
    patience: Annotated[int, Field(ge=1, le=20)] = 3
    # Buffer sweeps: the sizes, each run at every connection count of conns_values
    sizes: Annotated[list[int], BeforeValidator(size_list), Field(json_schema_extra=_SIZES)] = []
    conns_values: Annotated[list[int], BeforeValidator(count_list), Field(json_schema_extra=_COUNTS)] = [1]
    repetitions: Annotated[int, Field(ge=1, le=10)] = 1

    @field_validator("sizes")
    @classmethod
    def _sizes_in_range(cls, sizes):
        for size in sizes:
            if not 4096 <= size <= 1024 * MIB:
                raise PydanticCustomError("size", "{size} is outside 4 KiB to 1 GiB.", {"size": format_bytes(size)})
        return sorted(set(sizes))

    @field_validator("conns_values")
    @classmethod
    def _counts_in_range(cls, counts):
        if not counts:
            raise PydanticCustomError("conns", "Give at least one connection count, e.g. 1, 8.")
        for count in counts:
            if not 1 <= count <= MAX_CONNS:
                raise PydanticCustomError("conns", "Connection counts run from 1 to {max}.", {"max": MAX_CONNS})
        return sorted(set(counts))

    @model_validator(mode="after")
    def _grid(self):
        if self.kind is SweepKind.connections:
            if self.conns_max < self.conns_start:
                raise PydanticCustomError("conns_max", "The maximum is below the first connection count.")
            count = len(self.grid_values())
        else:
            if not self.sizes:
                raise PydanticCustomError("sizes", "Give the sizes to try, e.g. 256K, 1M, 4M, 16M.")
            if self.kind is SweepKind.kernel_max and self.sockbuf_bytes is not None:
                raise PydanticCustomError(
                    "sockbuf_bytes", "A kernel-maximum sweep runs with autotuning: leave the socket buffer empty."
                )
            count = len(self.sizes) * len(self.conns_values)
        if count > MAX_POINTS:
            raise PydanticCustomError(
                "grid", "{count} grid points is too many (at most {max}).", {"count": count, "max": MAX_POINTS}
            )
        return self

    def grid_values(self) -> list[int]:
        """The swept axis: connection counts (connection sweeps) or sizes in bytes."""
        if self.kind is SweepKind.connections:
            return connection_steps(self.conns_start, self.conns_max, self.conns_step)
        return self.sizes

    def shared_parameters(self) -> dict:
        parameters = {name: getattr(self, name) for name in SHARED_RUN_FIELDS}
        if self.kind is SweepKind.connections:
            parameters["sockbuf_bytes"] = self.sockbuf_bytes
        return parameters


class SweepPublic(HostPairPublic):
    model_config = ConfigDict(from_attributes=True)

    id: int
    environment_id: int
    kind: SweepKind
    parameters: dict
    values: list[int]
    conns_values: list[int]
    repetitions: int
    threshold_percent: float
    patience: int
    label: str
    notes: str
    tags: list[str]
    status: RunStatus
    failure_reason: str | None
    requested_by: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    best_conns: int | None
    kernel_original: dict | None
    kernel_restored: bool | None
    # A queued sweep: the queued jobs ahead of it on its hosts, and when it should start (UTC).
    queue_position: int | None = None
    estimated_start_at: datetime | None = None


class SweepsPublic(BaseModel):
    data: list[SweepPublic]
    count: int  # sweeps in all (the page holds at most `limit` of them)


class SchedulePublic(BaseModel):
    """A schedule: what it repeats (`template`: the run's or sweep's fields), how often (seconds),
    until when (UTC), and the occurrences it skipped, with why."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    environment_id: int
    what: str
    template: dict
    client_host_name: str
    server_host_name: str
    every_seconds: float
    until: datetime
    next_at: datetime
    status: str
    label: str
    skipped: list[dict]
    requested_by: str
    created_at: datetime


class SchedulesPublic(BaseModel):
    data: list[SchedulePublic]
    count: int  # schedules in all (the page holds at most `limit` of them)
