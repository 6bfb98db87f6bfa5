"""Run requests and their public form."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from redolab.core.fields import (
    MAX_SIZE_BYTES,
    BitRate,
    Bounds,
    DurationSeconds,
    Given,
    OneLine,
    Positive,
    SizeBytes,
    TextBlock,
    at_most,
    blank_to_none,
    field_label,
    folded,
)
from redolab.core.schema_rules import ABSOLUTE_DIR, TextPattern, absent, document, given
from redolab.core.units import UnitError, parse_size
from redolab.environments.schemas import HostPairCreate, HostPairPublic
from redolab.runs.models import ProbeMode, RunSource, RunStatus

_SAFE_PATH = re.compile(r"/[A-Za-z0-9._/+-]*")  # fullmatch: `$` would match before a newline


MIB = 1024 * 1024
MAX_MESSAGE_BYTES = 256 * MIB  # one probe message (a send; in SYNC a commit-sized write)
MessageBytes = Annotated[SizeBytes, Positive, at_most(MAX_MESSAGE_BYTES, "256 MiB")]


_CONGESTION = re.compile(r"[a-z0-9_]{1,15}")


def _check_congestion(value: str | None) -> str | None:
    """A congestion-control name as the kernel takes it (bbr, cubic, htcp): it reaches the probe's argv."""
    if value is not None and not _CONGESTION.fullmatch(value.strip()):
        raise PydanticCustomError(
            "congestion", "'{value}' is not a congestion control name: e.g. bbr or cubic.", {"value": value[:20]}
        )
    return value.strip() if value else None


def check_write_dir(value: str | None) -> str | None:
    if value is None:
        return None
    if not _SAFE_PATH.fullmatch(value) or "/../" in f"{value}/" or len(value) > 400:
        raise PydanticCustomError(
            "path",
            "'{value}' is not a safe absolute directory: use letters, digits, '.', '_', '-', '+' "
            "and '/' only, starting with '/' (e.g. /u02/redoprobe)",
            {"value": value},
        )
    return value


_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._:=/+-]{0,39}")


def _split_list(value):
    """A list, or text separated by commas (a form field): blank items dropped. Anything else (a
    number, true, an object) is refused here: iterating it would be a TypeError, a 500."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise PydanticCustomError("list_type", "Give a list, or text with the items separated by commas.")
    return value


def _check_tags(tags: list[str]) -> list[str]:
    """Tags as they are compared, NFKC and case-folded ('MTU9000' and fullwidth letters are
    'mtu9000'), each once."""
    tags = [folded(tag) for tag in tags]
    for tag in tags:
        if not _TAG.fullmatch(tag):
            raise PydanticCustomError(
                "tag",
                "'{tag}' is not a tag: up to 40 letters, digits, spaces and . _ : = / + -, e.g. mtu9000",
                {"tag": tag},
            )
    if len(tags) > 20:
        raise PydanticCustomError("tags", "At most 20 tags.")
    return list(dict.fromkeys(tags))


# the document states _check_tags (it also reads comma-separated text, and folds letters to lower case)
_TAG_ITEMS = {"items": {"type": "string", "pattern": f"^{_TAG.pattern}$"}, "maxItems": 20}
Tags = Annotated[
    list[str], BeforeValidator(_split_list), AfterValidator(_check_tags), Field(json_schema_extra=_TAG_ITEMS)
]

# What the probe takes as --interval (redoprobe/main.c): a run it would refuse is refused here, before
# it is queued.
PROBE_INTERVAL_SECONDS = (0.1, 3600.0)


def _probe_interval(value: float | None) -> float:
    low, high = PROBE_INTERVAL_SECONDS
    if value is None or not low <= value <= high:
        raise PydanticCustomError(
            "interval", "The probe reports every 0.1 s to 1 h (3600 s): give an interval in that range."
        )
    return value


IntervalSeconds = Annotated[
    DurationSeconds, AfterValidator(_probe_interval), Bounds(*PROBE_INTERVAL_SECONDS, given=True)
]


def _stripped(value):
    return value.strip() if isinstance(value, str) else (value or "")


Label = Annotated[str, BeforeValidator(_stripped), Field(max_length=200), OneLine]


Notes = Annotated[str, BeforeValidator(_stripped), Field(max_length=10_000), TextBlock]


def size_list(value, info: ValidationInfo):
    """Sizes as a list or comma-separated text with units ("64K, 256K, 1M"); text without a unit
    ("65536") is refused naming the field, a number in a JSON list is bytes."""
    sizes = []
    for item in _split_list(value):
        try:
            size = parse_size(item) if isinstance(item, str) else int(item)
        except (UnitError, ValueError, OverflowError, TypeError) as error:
            label = field_label(info.field_name)
            raise PydanticCustomError("unit", "{label}: {error}", {"label": label, "error": str(error)}) from None
        if not 0 <= size <= MAX_SIZE_BYTES:
            raise PydanticCustomError(
                "out_of_bounds", "'{item}' is not a size from 0 to 1 EiB.", {"item": str(item)[:40]}
            )
        sizes.append(size)
    return sizes


def count_list(value):
    counts = []
    for item in _split_list(value):
        try:
            counts.append(int(item))
        except (TypeError, ValueError, OverflowError):
            raise PydanticCustomError("int", "'{item}' is not a connection count.", {"item": str(item)}) from None
    return counts


def sockbuf_floor(value: int | None) -> int | None:
    """A requested socket buffer (None: the kernel autotunes) is at least 4 KiB."""
    if value is not None and value < 4096:
        raise PydanticCustomError("too_small", "A socket buffer must be at least 4 KiB.")
    return value


# What _sync_write_needs_dir and _reverse_streams_unpaced check, as the document states it (the interval
# within the duration, a comparison of two fields, it cannot state).
RUN_RULES = (
    {"if": {"required": ["sync_write"], "properties": {"sync_write": {"const": True}}}, "then": given("write_dir")},
    {
        "if": {"required": ["reverse"], "properties": {"reverse": {"const": True}}},
        "then": {
            "allOf": [
                absent("rate_bits_per_second"),
                {"properties": {"mode": {"not": {"const": ProbeMode.sync.value}}, "delay_us": {"const": 0}}},
            ]
        },
    },
)


class RunCreate(HostPairCreate):
    """What to run. Sizes, rates and durations: numbers in base units or text with units."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=document(*RUN_RULES))

    mode: ProbeMode = ProbeMode.async_
    conns: Annotated[int, Field(ge=1, le=1024)] = 1
    message_bytes: Annotated[MessageBytes, Given] = MIB
    sockbuf_bytes: Annotated[SizeBytes, at_most(1024 * MIB, "1 GiB"), Bounds(minimum=4096)] = None
    duration_seconds: Annotated[DurationSeconds, Positive, at_most(3600, "1 h"), Given] = 60.0
    interval_seconds: IntervalSeconds = Field(default=5.0, validate_default=True)
    delay_us: Annotated[int, Field(ge=0, le=60_000_000)] = 0
    rate_bits_per_second: Annotated[BitRate, Positive] = None
    write_dir: Annotated[str | None, AfterValidator(check_write_dir), TextPattern(ABSOLUTE_DIR, max_length=400)] = None
    sync_write: bool = False
    congestion: Annotated[str | None, BeforeValidator(blank_to_none), AfterValidator(_check_congestion)] = None
    fq_rate_bits_per_second: Annotated[BitRate, Positive] = None
    zerocopy: bool = False
    reverse: bool = False
    label: Label = ""
    notes: Notes = ""
    tags: Tags = []

    @field_validator("reverse")
    @classmethod
    def _reverse_streams_unpaced(cls, value, info: ValidationInfo):
        if value and info.data.get("mode") is ProbeMode.sync:
            raise PydanticCustomError("reverse", "Reverse measures one direction's throughput: use ASYNC mode.")
        if value and (info.data.get("rate_bits_per_second") or info.data.get("delay_us")):
            raise PydanticCustomError(
                "reverse", "Reverse: the server sends as fast as it can; leave pacing and delay empty."
            )
        return value

    @field_validator("write_dir", mode="before")
    @classmethod
    def _blank_dir_is_none(cls, value):
        value = blank_to_none(value)
        return value.strip() if isinstance(value, str) else value

    @field_validator("sockbuf_bytes")
    @classmethod
    def _sockbuf_floor(cls, value):
        return sockbuf_floor(value)

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


class RunPublic(HostPairPublic):
    model_config = ConfigDict(from_attributes=True)

    id: int
    environment_id: int
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
    congestion: str | None = None
    fq_rate_bits_per_second: int | None = None
    zerocopy: bool = False
    reverse: bool = False
    label: str
    notes: str
    tags: list[str]
    sweep_id: int | None
    sweep_point: int | None
    repetition: int | None
    kernel_max_bytes: int | None
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
    source: RunSource
    source_name: str | None
    # A queued run: the queued jobs ahead of it on its hosts, and when it should start (UTC).
    queue_position: int | None = None
    estimated_start_at: datetime | None = None


class SyncUnderLoadCreate(RunCreate):
    """A SYNC run (one connection, commit-sized messages) and an ASYNC load of `load_conns` streams on
    the same hosts, started together (runs.loaded)."""

    mode: ProbeMode = ProbeMode.sync
    message_bytes: Annotated[MessageBytes, Given] = 8192
    load_conns: Annotated[int, Field(ge=1, le=64)] = 4


class RunsPublic(BaseModel):
    data: list[RunPublic]
    count: int  # runs in all (the page holds at most `limit` of them)


class ResultImport(HostPairCreate):
    """Results a team already has (oratcptest client output, iperf3 -J), imported as runs between
    two hosts of the environment: the client sent, the server received."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["auto", "oratcptest", "iperf3"] = "auto"
    # oratcptest prints clock times only: the day they belong to (taken as UTC). Default: today.
    test_date: date | None = None
    # the message size of oratcptest output trimmed of its "Message payload" line (ignored otherwise)
    message_bytes: MessageBytes = None
    label: Label = ""
    notes: Notes = ""
    tags: Tags = []

    @field_validator("test_date", mode="before")
    @classmethod
    def _blank_date(cls, value):
        return blank_to_none(value)


class RunEventPublic(BaseModel):
    seq: int
    role: str
    event: str
    data: dict
