"""API schemas for destinations and shared links. Bandwidth and RTT read as the environment's link
fields do (environments.schemas.LinkBandwidth, LinkRtt): numbers in bit/s and seconds, or text with
a unit ("1 Gbit/s", "40 ms")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from redolab.core.fields import RowId, UnitEcho, blank_to_none
from redolab.environments.models import Destination, DestinationKind, HadrRole, SharedLink, TransportMode
from redolab.environments.schemas import LinkBandwidth, LinkRtt, Name, NotesText

MAX_HOPS = 64  # destinations one shared link may list (Data Guard has at most 30 remote destinations)
OptionalId = Annotated[RowId | None, BeforeValidator(blank_to_none)]


class DestinationFields(UnitEcho):
    """Every settable field of a destination, all optional (an update keeps what it leaves out)."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    kind: DestinationKind | None = None
    # Data Guard: ASYNC, SYNC or FASTSYNC; Db2 HADR: the principal's sync mode, SUPERASYNC for an auxiliary
    transport: Annotated[TransportMode | None, BeforeValidator(blank_to_none)] = None
    # what forwards redo to this one (a far sync to a standby, a standby to a cascaded one); null: the primary
    feeds_from: OptionalId = None
    hadr_role: Annotated[HadrRole | None, BeforeValidator(blank_to_none)] = None  # Db2 HADR only
    link_bandwidth_bits_per_second: LinkBandwidth = None
    link_rtt_seconds: LinkRtt = None
    notes: NotesText | None = None


class DestinationUpdate(DestinationFields):
    pass


class DestinationCreate(DestinationFields):
    """A new destination. Left out: kind standby; transport SUPERASYNC for an HADR auxiliary, else
    ASYNC; hadr_role on HADR: auxiliary (the principal exists from the environment's creation)."""

    name: Name
    kind: DestinationKind = DestinationKind.standby
    notes: NotesText = ""


class DestinationPublic(BaseModel):
    id: int
    environment_id: int
    name: str
    kind: DestinationKind
    transport: TransportMode
    feeds_from: int | None
    hadr_role: HadrRole | None
    position: int  # 1 is the first destination: the environment's transport and link mirror it
    link_bandwidth_bits_per_second: int | None
    link_rtt_seconds: float | None
    notes: str
    host_ids: list[int]  # its standby-side hosts (set on each host: destination_id)
    shared_link_ids: list[int]
    created_at: datetime
    updated_at: datetime
    unit_readings: dict[str, str] = {}  # how text with a unit that reads two ways was read, on a write

    @classmethod
    def of(cls, destination: Destination, unit_readings: dict[str, str] | None = None) -> DestinationPublic:
        return cls(
            id=destination.id,
            environment_id=destination.environment_id,
            name=destination.name,
            kind=destination.kind,
            transport=destination.transport,
            feeds_from=destination.feeds_from_id,
            hadr_role=destination.hadr_role,
            position=destination.position,
            link_bandwidth_bits_per_second=destination.link_bandwidth_bits_per_second,
            link_rtt_seconds=destination.link_rtt_seconds,
            notes=destination.notes,
            host_ids=[host.id for host in destination.hosts],
            shared_link_ids=sorted(link.id for link in destination.shared_links),
            created_at=destination.created_at,
            updated_at=destination.updated_at,
            unit_readings=unit_readings or {},
        )


class DestinationsPublic(BaseModel):
    data: list[DestinationPublic]
    count: int


class SharedLinkFields(UnitEcho):
    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    # the hops that cross this link: each destination stands for the hop that delivers redo into it
    destination_ids: Annotated[list[RowId], Field(min_length=1, max_length=MAX_HOPS)] | None = None
    bandwidth_bits_per_second: LinkBandwidth = None  # nominal
    notes: NotesText | None = None


class SharedLinkUpdate(SharedLinkFields):
    pass


class SharedLinkCreate(SharedLinkFields):
    name: Name
    destination_ids: Annotated[list[RowId], Field(min_length=1, max_length=MAX_HOPS)]
    notes: NotesText = ""


class SharedLinkPublic(BaseModel):
    id: int
    environment_id: int
    name: str
    destination_ids: list[int]
    bandwidth_bits_per_second: int | None
    notes: str
    created_at: datetime
    updated_at: datetime
    unit_readings: dict[str, str] = {}

    @classmethod
    def of(cls, link: SharedLink, unit_readings: dict[str, str] | None = None) -> SharedLinkPublic:
        return cls(
            id=link.id,
            environment_id=link.environment_id,
            name=link.name,
            destination_ids=[destination.id for destination in link.destinations],
            bandwidth_bits_per_second=link.bandwidth_bits_per_second,
            notes=link.notes,
            created_at=link.created_at,
            updated_at=link.updated_at,
            unit_readings=unit_readings or {},
        )


class SharedLinksPublic(BaseModel):
    data: list[SharedLinkPublic]
    count: int
