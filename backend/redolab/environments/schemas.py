"""API and form schemas for environments and hosts."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from redolab.core.fields import (
    BitRate,
    DurationSeconds,
    HostAddress,
    OneLine,
    OptionalHostAddress,
    OptionalInterfaceName,
    PosixUser,
    RowId,
    SizeBytes,
    TextBlock,
    TimeZoneName,
    UnitEcho,
    VisibleName,
    at_most,
    blank_to_none,
    positive,
)
from redolab.environments.models import (
    TRANSPORT_MODES,
    HostRole,
    HostTransport,
    Platform,
    ProtectionMode,
    TransportMode,
)

# Compared by name_key (case, width and invisible characters aside); never only blank or filler.
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), OneLine, VisibleName]
Description = Annotated[str, StringConstraints(max_length=500), TextBlock]
NotesText = Annotated[str, StringConstraints(max_length=10_000), TextBlock]
Nodes = Annotated[int, Field(ge=1, le=64)]
Percent = Annotated[float, Field(ge=0, le=1000)]

# Oracle: Maximum Protection needs SYNC; Maximum Availability needs SYNC or FASTSYNC.
_PROTECTION_NEEDS = {
    ProtectionMode.max_protection: (TransportMode.sync,),
    ProtectionMode.max_availability: (TransportMode.sync, TransportMode.fastsync),
}


class EnvironmentFields(UnitEcho):
    """Every settable field of an environment, all optional (PATCH). Quantities typed as text need a
    unit; one that reads two ways ("1 GB/s" for the link) is echoed in `unit_readings`."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: Description | None = None
    platform: Platform | None = None
    database_size_bytes: SizeBytes = None
    primary_rac_nodes: Nodes | None = None
    standby_rac_nodes: Nodes | None = None
    protection_mode: Annotated[ProtectionMode | None, BeforeValidator(blank_to_none)] = None
    transport_mode: TransportMode | None = None
    instantiation_goal_seconds: Annotated[DurationSeconds, AfterValidator(positive)] = None
    # the RPO goal: the data loss (transport lag) the business accepts, e.g. 30 s
    rpo_goal_seconds: Annotated[DurationSeconds, AfterValidator(positive), at_most(86400, "24 h")] = None
    headroom_percent: Percent | None = None
    apply_overhead_percent: Percent | None = None
    link_bandwidth_bits_per_second: Annotated[BitRate, AfterValidator(positive)] = None
    link_rtt_seconds: Annotated[DurationSeconds, AfterValidator(positive), at_most(10, "10 s")] = None
    time_zone: TimeZoneName | None = None  # the database's clock: imported times are read in it
    notes: NotesText | None = None


class EnvironmentUpdate(EnvironmentFields):
    pass


class EnvironmentCreate(EnvironmentFields):
    """A whole environment; also validates the result of an update."""

    name: Name
    description: Description = ""
    platform: Platform = Platform.dataguard
    primary_rac_nodes: Nodes = 1
    standby_rac_nodes: Nodes = 1
    protection_mode: Annotated[ProtectionMode | None, BeforeValidator(blank_to_none)] = Field(
        default=None, validate_default=True
    )
    transport_mode: TransportMode = TransportMode.async_
    headroom_percent: Percent = 30.0
    apply_overhead_percent: Percent = 30.0
    time_zone: TimeZoneName = "UTC"
    notes: NotesText = ""

    @field_validator("protection_mode")
    @classmethod
    def _protection_for_platform(cls, value, info: ValidationInfo):
        platform = info.data.get("platform")
        if platform is Platform.hadr and value is not None:
            raise PydanticCustomError(
                "platform_mismatch",
                "Protection modes are a Data Guard setting: leave it empty for Db2 HADR.",
            )
        if platform is Platform.dataguard and value is None:
            return ProtectionMode.max_performance
        return value

    @field_validator("transport_mode")
    @classmethod
    def _transport_for_platform(cls, value, info: ValidationInfo):
        platform = info.data.get("platform")
        if platform is None:
            return value
        allowed = TRANSPORT_MODES[platform]
        if value not in allowed:
            raise PydanticCustomError(
                "platform_mismatch",
                "{mode} is not a transport mode of {platform}: choose {allowed}.",
                {
                    "mode": value.value,
                    "platform": platform.label,
                    "allowed": ", ".join(mode.value for mode in allowed),
                },
            )
        needs = _PROTECTION_NEEDS.get(info.data.get("protection_mode"))
        if needs and value not in needs:
            raise PydanticCustomError(
                "protection_mismatch",
                "{protection} needs {needs} redo transport.",
                {
                    "protection": info.data["protection_mode"].label,
                    "needs": " or ".join(mode.value for mode in needs),
                },
            )
        return value


class EnvironmentPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    description: str
    platform: Platform
    database_size_bytes: int | None
    primary_rac_nodes: int
    standby_rac_nodes: int
    protection_mode: ProtectionMode | None
    transport_mode: TransportMode
    instantiation_goal_seconds: float | None
    rpo_goal_seconds: float | None
    headroom_percent: float
    apply_overhead_percent: float
    link_bandwidth_bits_per_second: int | None
    link_rtt_seconds: float | None
    time_zone: str
    notes: str
    created_at: datetime
    updated_at: datetime
    # How a quantity typed with a unit that reads two ways was read ("1 GB/s" for the link), in the
    # answer to a create or update; empty otherwise.
    unit_readings: dict[str, str] = {}


class EnvironmentsPublic(BaseModel):
    data: list[EnvironmentPublic]
    count: int


class HostFields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: HostRole | None = None
    node_number: Nodes | None = None
    name: Name | None = None
    ssh_address: HostAddress | None = None
    ssh_port: Annotated[int, Field(ge=1, le=65535)] | None = None
    ssh_user: PosixUser | None = None
    data_address: OptionalHostAddress = None
    data_interface: OptionalInterfaceName = None
    transport: HostTransport | None = None
    credential_id: Annotated[RowId | None, BeforeValidator(blank_to_none)] = None
    # Kernel-maximum sweeps may set net.ipv4.tcp_rmem/tcp_wmem here by sysctl (and put them back).
    allow_kernel_changes: bool | None = None


class HostUpdate(HostFields):
    pass


class HostCreate(HostFields):
    """A host. For "This machine" (transport local) the SSH fields are not used."""

    role: HostRole
    node_number: Nodes = 1
    name: Name
    transport: HostTransport = HostTransport.ssh
    ssh_address: HostAddress
    ssh_port: Annotated[int, Field(ge=1, le=65535)] = 22
    ssh_user: PosixUser
    allow_kernel_changes: bool = False

    @model_validator(mode="before")
    @classmethod
    def _local_needs_no_ssh(cls, data):
        """ "This machine" is reached without SSH: its SSH fields get harmless placeholders."""
        if isinstance(data, dict) and str(data.get("transport", "")) in ("local", "HostTransport.local"):
            data = dict(data)
            data["ssh_address"] = blank_to_none(data.get("ssh_address")) or "localhost"
            data["ssh_user"] = blank_to_none(data.get("ssh_user")) or "redolab"
        return data


class HostPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    environment_id: int
    role: HostRole
    node_number: int
    name: str
    ssh_address: str
    ssh_port: int
    ssh_user: str
    data_address: str | None
    data_interface: str | None
    transport: HostTransport
    credential_id: int | None
    host_key_fingerprint: str | None
    allow_kernel_changes: bool
    created_at: datetime
    updated_at: datetime


class HostsPublic(BaseModel):
    data: list[HostPublic]
    count: int


class HostPairCreate(UnitEcho):
    """The two hosts of the environment a run, sweep or imported result is between: the client
    sends, the server receives. (UnitEcho: the runs' and sweeps' quantities say how they were read.)"""

    client_host_id: RowId
    server_host_id: RowId


class HostPairPublic(BaseModel):
    """A HostPair row's hosts: their ids (None once a host was removed) and names at request time."""

    client_host_id: int | None
    server_host_id: int | None
    client_host_name: str
    server_host_name: str
