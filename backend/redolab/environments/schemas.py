"""API and form schemas for environments and hosts."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from redolab.core.fields import (
    BitRate,
    ByteRate,
    DurationSeconds,
    HostAddress,
    OneLine,
    OptionalHostAddress,
    OptionalInterfaceName,
    Positive,
    PosixUser,
    RowId,
    SizeBytes,
    TextBlock,
    TimeZoneName,
    UnitEcho,
    VisibleName,
    at_least,
    at_most,
    blank_to_none,
)
from redolab.core.schema_rules import ABSOLUTE_DIR, PRINTABLE_LINE, TextPattern, absent, document, given, when_equals
from redolab.environments.models import (
    TRANSPORT_MODES,
    HostRole,
    HostTransport,
    Platform,
    ProtectionMode,
    TransportMode,
)
from redolab.environments.releases import checked_release

# Compared by name_key (case, width and invisible characters aside); never only blank or filler.
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
    OneLine,
    VisibleName,
    TextPattern(PRINTABLE_LINE),
]
Description = Annotated[str, StringConstraints(max_length=500), TextBlock]
NotesText = Annotated[str, StringConstraints(max_length=10_000), TextBlock]
Nodes = Annotated[int, Field(ge=1, le=64)]
Channels = Annotated[int, Field(ge=1, le=64)]  # RMAN channels on one node
Percent = Annotated[float, Field(ge=0, le=1000)]
ReservedPercent = Annotated[float, Field(ge=0, le=90)]  # of the link, for other traffic: at least 10 % is redo's
CollectEvery = Annotated[int | None, Field(ge=3600, le=31 * 86400)]
# A network path's nominal bandwidth (bit/s) and round trip (s): an environment's link, a destination's
# path, a shared link. Numbers in base units, or text with a unit ("10 Gbit/s", "25 ms").
LinkBandwidth = Annotated[BitRate, Positive]
LinkRtt = Annotated[DurationSeconds, Positive, at_most(10, "10 s")]
DAILY_SECONDS = 86400  # the collection schedule's default interval

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
    instantiation_goal_seconds: Annotated[DurationSeconds, Positive] = None
    # the RPO goal: the data loss (transport lag) the business accepts, e.g. 30 s
    rpo_goal_seconds: Annotated[DurationSeconds, Positive, at_most(86400, "24 h")] = None
    # the failover time the business accepts, e.g. 15 min: the apply backlog is judged against it
    rto_goal_seconds: Annotated[DurationSeconds, Positive, at_most(7 * 86400, "7 d")] = None
    # "19c", "23ai", "11.2", or V$INSTANCE.VERSION ("19.0.0.0.0"); blank when not known
    database_release: Annotated[str | None, StringConstraints(max_length=40), AfterValidator(checked_release)] = None
    # the standby's redo apply rate (V$RECOVERY_PROGRESS "Active Apply Rate"), e.g. "120 MiB/s"
    apply_rate_bytes_per_second: Annotated[ByteRate, Positive] = None
    fast_start_failover: bool | None = None  # Fast-Start Failover is used (Data Guard)
    advanced_compression_licensed: bool | None = None  # redo transport compression is licensed
    # the instantiation copy: RMAN channels per node (1 to 64), the nodes running them, SECTION SIZE
    copy_channels_per_node: Annotated[Channels | None, BeforeValidator(blank_to_none)] = None
    copy_nodes: Annotated[Nodes | None, BeforeValidator(blank_to_none)] = None
    copy_section_bytes: Annotated[SizeBytes, at_least(2**20, "1 MiB")] = None
    # the primary's archive destination free space: the redo of the copy waits there
    archive_free_bytes: Annotated[SizeBytes, Positive] = None
    headroom_percent: Percent | None = None
    apply_overhead_percent: Percent | None = None
    # the share of the link reserved for other traffic (backups, the application), 0 to 90 %
    link_reserved_percent: ReservedPercent | None = None
    link_bandwidth_bits_per_second: LinkBandwidth = None
    link_rtt_seconds: LinkRtt = None
    time_zone: TimeZoneName | None = None  # the database's clock: imported times are read in it
    notes: NotesText | None = None
    # AWR (DBA_HIST_*) is read by a collection only when the database is licensed for the Diagnostics Pack
    diagnostics_pack_licensed: bool | None = None
    # collections on a schedule: every this many seconds (1 h to 31 days); null turns the schedule off
    collect_every_seconds: CollectEvery = None


class EnvironmentUpdate(EnvironmentFields):
    pass


def _modes(*modes: TransportMode) -> dict:
    return {"properties": {"transport_mode": {"enum": [mode.value for mode in modes]}}}


# What _protection_for_platform and _transport_for_platform check, as the document states it: Db2 HADR has
# no protection mode and its own sync modes; a protection mode that needs SYNC (or FASTSYNC) names it.
_ENVIRONMENT_RULES = document(
    when_equals(
        "platform",
        (Platform.hadr.value,),
        then={"allOf": [absent("protection_mode"), _modes(*TRANSPORT_MODES[Platform.hadr])]},
        otherwise=_modes(*TRANSPORT_MODES[Platform.dataguard]),
    ),
    *(
        when_equals("protection_mode", (protection.value,), then={"allOf": [given("transport_mode"), _modes(*needs)]})
        for protection, needs in _PROTECTION_NEEDS.items()
    ),
)
# The releases parse_release reads, narrower: 19c, 23ai, 11gR2, 19.21, 11.2.0.4.0, or blank.
RELEASE_PATTERN = r"^((9|1[3-9]|2[0-9]|30)(c|ai)|1[0-2](g|c)R[12]|(9|[12][0-9]|30)\.[0-9]{1,2}(\.[0-9]{1,3}){0,3})?$"


class EnvironmentCreate(EnvironmentFields):
    """A whole environment; also validates the result of an update."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_ENVIRONMENT_RULES)

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
    link_reserved_percent: ReservedPercent = 0.0
    time_zone: TimeZoneName = "UTC"
    notes: NotesText = ""
    diagnostics_pack_licensed: bool = False
    database_release: Annotated[
        str, StringConstraints(max_length=40), AfterValidator(checked_release), TextPattern(RELEASE_PATTERN)
    ] = ""
    fast_start_failover: bool = False
    advanced_compression_licensed: bool = False

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


class DestinationRef(BaseModel):
    """A destination named in its environment's answer (GET /api/v1/destinations/{id} has the rest)."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str


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
    rto_goal_seconds: float | None = None
    database_release: str = ""
    apply_rate_bytes_per_second: float | None = None
    fast_start_failover: bool = False
    advanced_compression_licensed: bool = False
    copy_channels_per_node: int | None = None
    copy_nodes: int | None = None
    copy_section_bytes: int | None = None
    archive_free_bytes: int | None = None
    headroom_percent: float
    apply_overhead_percent: float
    link_reserved_percent: float = 0.0
    link_bandwidth_bits_per_second: int | None
    link_rtt_seconds: float | None
    time_zone: str
    notes: str
    diagnostics_pack_licensed: bool = False
    collect_every_seconds: int | None = None
    created_at: datetime
    updated_at: datetime
    # the destinations by position: the first is the one transport_mode and the link fields mirror
    destinations: list[DestinationRef] = []
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
    # A standby host's destination (empty: the environment's first); a primary host has none.
    destination_id: Annotated[RowId | None, BeforeValidator(blank_to_none)] = None
    # Kernel-maximum sweeps may set net.ipv4.tcp_rmem/tcp_wmem here by sysctl (and put them back).
    allow_kernel_changes: bool | None = None


class HostUpdate(HostFields):
    pass


class HostCreate(HostFields):
    """A host. For "This machine" (transport local) the SSH fields are not used."""

    # a primary belongs to no destination (destinations.host_destination_id refuses one)
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=document(when_equals("role", (HostRole.primary.value,), absent("destination_id"))),
    )

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
    destination_id: int | None = None
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
    db_kind: str | None = None
    db_os_user: str | None = None
    oracle_home: str | None = None
    oracle_sid: str | None = None
    db_connect: str | None = None
    db_user: str | None = None
    has_db_password: bool = False
    db2_sqllib: str | None = None
    db2_database: str | None = None
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


# -- a primary host's database access (collections) ----------------------------------------------
_HOME = re.compile(r"/[A-Za-z0-9._+/-]{0,254}")
_SID = re.compile(r"[A-Za-z][A-Za-z0-9_$#]{0,63}")
_CONNECT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,254}")  # a tnsnames/wallet alias
_DB_USER = re.compile(r"[A-Za-z][A-Za-z0-9_$#]{0,127}")
_DB2_NAME = re.compile(r"[A-Za-z@#$][A-Za-z0-9@#$]{0,7}")


def _pattern(pattern: re.Pattern, what: str):
    def check(value: str | None) -> str | None:
        if value is None:
            return None
        if not pattern.fullmatch(value) or "/../" in value + "/" or "/./" in value + "/":
            raise PydanticCustomError("database_access", "{what}", {"what": what})
        return value

    return AfterValidator(check)


OracleHome = Annotated[
    str | None,
    BeforeValidator(blank_to_none),
    _pattern(
        _HOME, "An absolute path of letters, digits and . _ + - / (e.g. /u01/app/oracle/product/19.0.0/dbhome_1)."
    ),
    TextPattern(ABSOLUTE_DIR, max_length=255),
]
OracleSid = Annotated[
    str | None,
    BeforeValidator(blank_to_none),
    _pattern(_SID, "An ORACLE_SID: a letter, then letters, digits, _, $ or # (at most 64)."),
    TextPattern(f"^{_SID.pattern}$"),
]
ConnectAlias = Annotated[
    str | None,
    BeforeValidator(blank_to_none),
    _pattern(_CONNECT, "A net service name (tnsnames or wallet alias): letters, digits, _ . and -."),
    TextPattern(f"^{_CONNECT.pattern}$"),
]
DbUser = Annotated[
    str | None,
    BeforeValidator(blank_to_none),
    _pattern(_DB_USER, "A database user name: a letter, then letters, digits, _, $ or #."),
    TextPattern(f"^{_DB_USER.pattern}$"),
]
Db2Name = Annotated[
    str | None,
    BeforeValidator(blank_to_none),
    _pattern(_DB2_NAME, "A Db2 database name: 1 to 8 letters, digits, @, # or $, not starting with a digit."),
    TextPattern(f"^{_DB2_NAME.pattern}$"),
]
OsUser = Annotated[PosixUser | None, BeforeValidator(blank_to_none)]


class DatabaseAccessUpdate(BaseModel):
    """How a collection reaches the database on a primary host. Oracle: ORACLE_SID, and ORACLE_HOME or
    none (read from the host's /etc/oratab); `/ as sysdba`, or `/@db_connect` (a wallet), or db_user
    with a password (sent on standard input, stored encrypted, never returned). Db2: the instance's
    sqllib directory and the database name. os_user: run through `sudo -n -u` that user."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=document(
            when_equals("db_kind", ("oracle",), then={"anyOf": [given("oracle_sid"), given("db_connect")]}),
            when_equals("db_kind", ("db2",), then=given("db2_sqllib", "db2_database")),
        ),
    )

    db_kind: Literal["oracle", "db2"] | None = None  # None: no collection from this host
    db_os_user: OsUser = None
    oracle_home: OracleHome = None
    oracle_sid: OracleSid = None
    db_connect: ConnectAlias = None
    db_user: DbUser = None
    password: Annotated[SecretStr | None, TextPattern(r"^[^\r\n\x00]*$", max_length=1024)] = (
        None  # None: keep the stored one (clear_password to remove it)
    )
    clear_password: bool = False
    db2_sqllib: OracleHome = None
    db2_database: Db2Name = None

    @model_validator(mode="after")
    def _complete(self):
        if self.db_kind == "oracle" and not self.oracle_sid and not self.db_connect:
            raise PydanticCustomError("database_access", "Give ORACLE_SID (or a connect string for a wallet).")
        if self.db_kind == "db2" and (not self.db2_sqllib or not self.db2_database):
            raise PydanticCustomError("database_access", "Give the instance's sqllib directory and the database name.")
        if self.password is not None and len(self.password.get_secret_value()) > 1024:
            raise PydanticCustomError("database_access", "The password is longer than 1,024 characters.")
        if self.password is not None and any(c in self.password.get_secret_value() for c in "\r\n\0"):
            raise PydanticCustomError("database_access", "A password is one line.")
        return self
