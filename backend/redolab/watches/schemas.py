"""API and form schemas of watches. Rates, sizes and durations: numbers in base units or text with units."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from redolab.core.fields import Bounds, ByteRate, DurationSeconds, Given, Positive, RowId, SizeBytes, at_most, one_line
from redolab.core.units import MIB
from redolab.runs.models import ProbeMode
from redolab.runs.schemas import PROBE_INTERVAL_SECONDS, MessageBytes, RunCreate, sockbuf_floor
from redolab.watches.models import CheckStatus, Verdict, Watch, WatchState

MIN_EVERY_SECONDS = 60


class WatchCreate(BaseModel):
    """A watch on one host pair (client sends, server receives) or on every node pair at once."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=100), AfterValidator(one_line)]
    client_host_id: RowId | None = None
    server_host_id: RowId | None = None
    all_node_pairs: bool = False
    # Given: blank text and null read as "not given", which a check's run cannot be (min(1.0, None), a 500)
    every_seconds: Annotated[DurationSeconds, Positive, at_most(86400, "1 day"), Given] = 900.0
    duration_seconds: Annotated[DurationSeconds, Positive, at_most(300, "5 min"), Given] = 10.0
    conns: Annotated[int, Field(ge=1, le=64)] = 1
    message_bytes: Annotated[MessageBytes, Given] = MIB
    sockbuf_bytes: Annotated[SizeBytes, at_most(1024 * MIB, "1 GiB"), Bounds(minimum=4096)] = None
    threshold_bytes_per_second: Annotated[ByteRate, Positive] = None
    margin_ratio: Annotated[float, Field(ge=0, le=10)] = 0.10
    agree_m: Annotated[int, Field(ge=1, le=20)] = 2
    of_n: Annotated[int, Field(ge=1, le=20)] = 3
    receiver_ids: Annotated[list[RowId], Field(max_length=50)] = []

    @field_validator("sockbuf_bytes")
    @classmethod
    def _sockbuf_floor(cls, value):
        return sockbuf_floor(value)  # the run's own floor: a smaller buffer is a run the probe never starts

    @field_validator("duration_seconds")
    @classmethod
    def _reports_at_least_once(cls, value):
        shortest = PROBE_INTERVAL_SECONDS[0]  # a check's run reports once over a duration shorter than 1 s
        if value is not None and value < shortest:
            raise PydanticCustomError("too_short", "A check runs at least {shortest} s.", {"shortest": shortest})
        return value

    @model_validator(mode="after")
    def _runs_accepted(self) -> WatchCreate:
        """Whatever the run's schema refuses is refused here, before the watch is stored (its checks would
        otherwise never start)."""
        try:
            check_run(self, client_host_id=1, server_host_id=2)
        except ValidationError as refused:
            error = refused.errors()[0]
            field = ".".join(str(part) for part in error["loc"])
            raise PydanticCustomError("run", "{field}: {message}", {"field": field, "message": error["msg"]}) from None
        return self

    @model_validator(mode="after")
    def _consistent(self) -> WatchCreate:
        if self.every_seconds is not None and self.every_seconds < MIN_EVERY_SECONDS:
            raise PydanticCustomError("too_often", "Check at most once a minute (every 1 min or more).")
        if (
            self.duration_seconds is not None
            and self.every_seconds is not None
            and self.duration_seconds + 30 > self.every_seconds
        ):
            raise PydanticCustomError(
                "overlap",
                "Each check's run must end well before the next one: make the "
                "duration at least 30 s shorter than the interval.",
            )
        if self.agree_m > self.of_n:
            raise PydanticCustomError("m_of_n", "M cannot be more than N (e.g. 2 of the last 3).")
        if not self.all_node_pairs and (self.client_host_id is None or self.server_host_id is None):
            raise PydanticCustomError("path", "Choose the client and the server host, or every node pair.")
        return self


def check_run(watch: WatchCreate | Watch, *, client_host_id: int, server_host_id: int) -> RunCreate:
    """The run a check of `watch` queues between two hosts (one per pair): ASYNC, reporting every second
    (or over its whole duration, when shorter). ValidationError when the run's schema refuses a value."""
    return RunCreate(
        client_host_id=client_host_id,
        server_host_id=server_host_id,
        mode=ProbeMode.async_,
        conns=watch.conns,
        message_bytes=watch.message_bytes,
        sockbuf_bytes=watch.sockbuf_bytes,
        duration_seconds=watch.duration_seconds,
        interval_seconds=min(1.0, watch.duration_seconds),
        label=f"watch {watch.name}"[:200],
    )


class WatchSilence(BaseModel):
    """No notifications until `until` (UTC); checks and states go on."""

    model_config = ConfigDict(extra="forbid")

    until: datetime
    reason: Annotated[str, Field(max_length=300), AfterValidator(one_line)] = ""

    @model_validator(mode="after")
    def _future(self) -> WatchSilence:
        until = self.until.replace(tzinfo=UTC) if self.until.tzinfo is None else self.until.astimezone(UTC)
        if until <= datetime.now(UTC):
            raise PydanticCustomError("past", "A silence ends in the future (times are UTC).")
        if (until - datetime.now(UTC)).days > 31:
            raise PydanticCustomError("far", "A silence lasts at most 31 days.")
        self.until = until
        return self


class WatchPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    environment_id: int
    name: str
    client_host_id: int | None
    server_host_id: int | None
    all_node_pairs: bool
    path_label: str
    every_seconds: float
    duration_seconds: float
    conns: int
    message_bytes: int
    sockbuf_bytes: int | None
    threshold_bytes_per_second: float | None
    margin_ratio: float
    agree_m: int
    of_n: int
    receiver_ids: list[int]
    state: WatchState
    state_since: datetime
    transitions: int
    active: bool
    next_at: datetime
    silenced_until: datetime | None
    silence_reason: str
    requested_by: str  # its owner: stop, silence and delete are theirs or an admin's
    created_at: datetime
    deleted_at: datetime | None = None  # deleted: kept for admins to read
    deleted_by: str = ""


class CheckPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    watch_id: int
    at: datetime
    status: CheckStatus
    run_ids: list[int]
    verdict: Verdict | None
    measured_bytes_per_second: float | None
    required_bytes_per_second: float | None
    required_basis: str
    sync_p99_seconds: float | None
    reason: str
