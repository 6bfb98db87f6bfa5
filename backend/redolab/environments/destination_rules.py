"""The rules a destination obeys (no database access: the caller locks and reads the environment).

Oracle Data Guard: a far sync instance is fed by the primary only (SYNC or FASTSYNC, close to it)
and forwards the redo; a standby is fed by the primary or by a far sync instance (the MAA shape:
primary -> far sync, SYNC -> remote standby, ASYNC); a cascaded standby by a standby or another
cascaded standby (a physical standby that cascades redo), never by a far sync. A standby or a far sync
forwards ASYNC only (ORA-16695), so whatever a destination feeds is ASYNC. Changing a destination's
kind keeps what it feeds valid; the chain never comes back to where it started, and the first
destination (the one the environment's transport and link describe) is fed by the primary. Db2 HADR:
a principal standby in any sync mode and up to two auxiliaries in SUPERASYNC, all fed by the primary.
Each refusal is a FieldError naming the field: 422 for a value that cannot work, 409 for one that
clashes with what is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from pydantic import ValidationError

from redolab.core.errors import FieldError
from redolab.core.fields import field_label, name_key
from redolab.environments.models import (
    TRANSPORT_MODES,
    Destination,
    DestinationKind,
    Environment,
    HadrRole,
    Platform,
    TransportMode,
)
from redolab.environments.schemas import EnvironmentCreate

MAX_DATAGUARD_DESTINATIONS = 30  # LOG_ARCHIVE_DEST_2 to _31: every remote destination of a primary
MAX_HADR_DESTINATIONS = 3  # the principal standby and up to two auxiliaries
# environment field -> first destination field, kept equal by destinations.mirror()
MIRRORED = {
    "transport_mode": "transport",
    "link_bandwidth_bits_per_second": "link_bandwidth_bits_per_second",
    "link_rtt_seconds": "link_rtt_seconds",
}
_LOOK_ALIKE = " (names that differ only in case, width or invisible characters are the same name)"


@dataclass
class Proposal:
    """A destination as a create or update would leave it."""

    name: str
    kind: DestinationKind
    transport: TransportMode
    feeds_from_id: int | None
    hadr_role: HadrRole | None
    link_bandwidth_bits_per_second: int | None
    link_rtt_seconds: float | None
    notes: str

    @classmethod
    def of(cls, destination: Destination) -> Proposal:
        return cls(**{field.name: getattr(destination, field.name) for field in fields(cls)})


def check_platform_change(environment: Environment, platform: Platform) -> None:
    """A platform change rewrites the first destination's transport and HADR role: refused while the
    environment has more than that one destination, or one HADR has not (a far sync)."""
    if platform is environment.platform:
        return
    destinations = environment.destinations
    if len(destinations) > 1:
        names = ", ".join(f"'{d.name}'" for d in destinations[1:])
        raise FieldError(
            "platform",
            f"'{environment.name}' has {len(destinations)} destinations: delete all but the first ({names}) "
            f"before changing the platform to {platform.label}; their kinds and transports are "
            f"{environment.platform.label}'s.",
        )
    if destinations and destinations[0].kind is not DestinationKind.standby:
        raise FieldError(
            "platform",
            f"The destination '{destinations[0].name}' is a {destinations[0].kind.label.lower()}: make it a "
            f"standby (kind standby) before changing the platform to {platform.label}.",
        )


def environment_accepts(environment: Environment, first: Destination | Proposal, status_code: int = 422) -> None:
    """The environment as it would read after mirroring `first` must still validate (Maximum
    Availability needs SYNC or FASTSYNC, ...)."""
    values = {field: getattr(environment, field) for field in EnvironmentCreate.model_fields}
    values.update({env_field: getattr(first, dest_field) for env_field, dest_field in MIRRORED.items()})
    try:
        EnvironmentCreate.model_validate(values)
    except ValidationError as error:
        for problem in error.errors(include_url=False):
            field = problem["loc"][0] if problem["loc"] else ""
            if field in MIRRORED:
                raise FieldError(
                    MIRRORED[field],
                    f"'{first.name}' would be the first destination, whose {field_label(MIRRORED[field]).lower()} "
                    f"the environment's plan reads: {problem['msg']}",
                    status_code,
                ) from None


def named(items) -> str:
    return ", ".join(f"'{item.name}'" for item in items)


def check_name(environment: Environment, name: str, own_id: int | None, what: str, items) -> None:
    key = name_key(name)
    taken = next((item.name for item in items if item.id != own_id and name_key(item.name) == key), None)
    if taken is not None:
        alike = "" if taken == name else _LOOK_ALIKE
        raise FieldError(
            "name", f"'{environment.name}' already has a {what} named '{taken}'{alike}: pick another name."
        )


def _check_transport(environment: Environment, proposal: Proposal) -> None:
    allowed = TRANSPORT_MODES[environment.platform]
    if proposal.transport not in allowed:
        raise FieldError(
            "transport",
            f"{proposal.transport.value} is not a transport mode of {environment.platform.label}: choose "
            f"{', '.join(mode.value for mode in allowed)}.",
            422,
        )


def _check_hadr(environment: Environment, current: Destination | None, proposal: Proposal) -> None:
    """Db2 HADR: a principal standby (any sync mode) and up to two auxiliaries (SUPERASYNC), all fed by
    the primary."""
    if proposal.kind is not DestinationKind.standby:
        raise FieldError(
            "kind",
            f"Db2 HADR has no {proposal.kind.label.lower()}: its destinations are a principal standby and up to "
            "two auxiliary standbys. Use kind standby.",
            422,
        )
    if proposal.feeds_from_id is not None:
        raise FieldError(
            "feeds_from", "Db2 HADR standbys all receive log from the primary: leave feeds_from empty.", 422
        )
    if proposal.hadr_role is None:
        raise FieldError("hadr_role", "A Db2 HADR standby is the principal or an auxiliary: give hadr_role.", 422)
    if proposal.hadr_role is HadrRole.auxiliary and proposal.transport is not TransportMode.superasync:
        raise FieldError(
            "transport",
            f"An HADR auxiliary standby always receives in SUPERASYNC mode, whatever the principal's mode: set "
            f"transport SUPERASYNC (or leave it out), not {proposal.transport.value}.",
            422,
        )
    others = [d for d in environment.destinations if current is None or d.id != current.id]
    principal = next((d for d in others if d.hadr_role is HadrRole.principal), None)
    if proposal.hadr_role is HadrRole.principal and principal is not None:
        raise FieldError(
            "hadr_role",
            f"'{principal.name}' is already the principal standby and Db2 HADR has exactly one: make this one "
            "an auxiliary (hadr_role auxiliary, transport SUPERASYNC).",
        )
    if proposal.hadr_role is HadrRole.auxiliary and principal is None:
        raise FieldError(
            "hadr_role",
            f"Db2 HADR has exactly one principal standby and '{proposal.name}' is it: keep hadr_role principal.",
        )
    if current is None and len(others) >= MAX_HADR_DESTINATIONS:
        raise FieldError(
            "hadr_role",
            f"'{environment.name}' already has {len(others)} destinations: Db2 HADR has a principal standby and "
            "at most two auxiliaries.",
        )


def _check_feeds(environment: Environment, current: Destination | None, proposal: Proposal) -> None:
    """Data Guard: who feeds whom (see the module's docstring)."""
    if proposal.hadr_role is not None:
        raise FieldError("hadr_role", "hadr_role is a Db2 HADR setting: leave it empty for Oracle Data Guard.", 422)
    if proposal.kind is DestinationKind.far_sync and proposal.feeds_from_id is not None:
        raise FieldError(
            "feeds_from",
            "A far sync instance receives redo from the primary (SYNC or FASTSYNC, close to it) and forwards it to "
            "the destinations it feeds; it is never fed by another destination: leave feeds_from empty.",
            422,
        )
    if proposal.kind is DestinationKind.cascaded and proposal.feeds_from_id is None:
        raise FieldError(
            "feeds_from",
            "A cascaded standby receives redo from a physical standby that cascades it: give feeds_from, the id of "
            "the standby or cascaded standby that forwards it (a standby fed by a far sync is kind standby).",
            422,
        )
    if current is not None and proposal.kind is not current.kind:
        _check_dependents(environment, current, proposal)
    if proposal.feeds_from_id is not None:
        source = _check_source(environment, current, proposal)
        _check_source_kind(proposal, source)
        _check_cycle(environment, current, source)
        if proposal.transport is not TransportMode.async_:
            raise FieldError(
                "transport",
                f"'{proposal.name}' is fed by the {source.kind.label.lower()} '{source.name}', and a standby or a far "
                "sync forwards redo ASYNC only (cascades ship ASYNC; only the primary sends SYNC or FASTSYNC): set "
                f"transport ASYNC, not {proposal.transport.value}.",
                422,
            )


def _check_dependents(environment: Environment, current: Destination, proposal: Proposal) -> None:
    """A new kind for `current` keeps the destinations it feeds valid: a standby it feeds needs a far
    sync, a cascaded standby a standby or a cascaded standby."""
    fed = [d for d in environment.destinations if d.feeds_from_id == current.id and d.id != current.id]
    standbys = [d for d in fed if d.kind is DestinationKind.standby]
    if standbys and proposal.kind is not DestinationKind.far_sync:
        raise FieldError(
            "kind",
            f"The standby {named(standbys)} {'is' if len(standbys) == 1 else 'are'} fed from '{current.name}', and "
            "a standby fed from another destination is fed by a far sync instance: keep kind far_sync, or point "
            "its feeds_from elsewhere first.",
            422,
        )
    cascades = [d for d in fed if d.kind is DestinationKind.cascaded]
    if cascades and proposal.kind is DestinationKind.far_sync:
        raise FieldError(
            "kind",
            f"The cascaded standby {named(cascades)} {'is' if len(cascades) == 1 else 'are'} fed from "
            f"'{current.name}', and a cascaded standby is fed by a standby or another cascaded standby, never by a "
            "far sync: keep this a standby or cascaded standby, or point its feeds_from elsewhere first.",
            422,
        )


def _check_source(environment: Environment, current: Destination | None, proposal: Proposal) -> Destination:
    """The destination `proposal` is fed from: of this environment, and not for the first destination."""
    if is_first(environment, current):
        raise FieldError(
            "feeds_from",
            f"'{proposal.name}' is the first destination, the one the environment's transport and link describe: "
            "it receives redo from the primary. Leave feeds_from empty.",
            422,
        )
    source = next((d for d in environment.destinations if d.id == proposal.feeds_from_id), None)
    if source is None:
        raise FieldError(
            "feeds_from",
            f"Destination {proposal.feeds_from_id} is not one of '{environment.name}': choose one of "
            + ", ".join(f"{d.id} ({d.name})" for d in environment.destinations if current is None or d.id != current.id)
            + ".",
            422,
        )
    return source


def _check_source_kind(proposal: Proposal, source: Destination) -> None:
    """A standby is fed by a far sync; a cascaded standby by a standby or another cascaded standby."""
    what = f"'{source.name}' is a {source.kind.label.lower()}"
    if proposal.kind is DestinationKind.standby and source.kind is not DestinationKind.far_sync:
        raise FieldError(
            "kind",
            f"{what}, and a standby fed from a standby is a cascaded standby: use kind cascaded (or leave "
            "feeds_from empty for a standby fed by the primary, or give the far sync instance that forwards to it).",
            422,
        )
    if proposal.kind is DestinationKind.cascaded and source.kind is DestinationKind.far_sync:
        raise FieldError(
            "kind",
            f"{what}, and a standby fed by a far sync is kind standby: use kind standby (a cascaded standby is fed "
            "by a standby or another cascaded standby).",
            422,
        )


def _check_cycle(environment: Environment, current: Destination | None, source: Destination) -> None:
    """`source` is not (directly or not) fed from `current` itself."""
    if current is None:
        return
    by_id = {d.id: d for d in environment.destinations}
    chain, node = [current.name], source
    while node is not None and len(chain) <= len(by_id):
        chain.append(node.name)
        if node.id == current.id:
            raise FieldError(
                "feeds_from",
                f"That would feed '{current.name}' from itself: {' <- '.join(chain)}. Redo starts at the "
                "primary; pick a destination not fed (directly or not) from this one.",
                422,
            )
        node = by_id.get(node.feeds_from_id) if node.feeds_from_id is not None else None


def is_first(environment: Environment, current: Destination | None) -> bool:
    """Whether `current` (None: a new destination) is, or would be, the environment's first."""
    first = environment.first_destination
    return first is None if current is None else first is not None and first.id == current.id


def check_destination(environment: Environment, current: Destination | None, proposal: Proposal) -> None:
    check_name(environment, proposal.name, current.id if current else None, "destination", environment.destinations)
    _check_transport(environment, proposal)
    if environment.platform is Platform.hadr:
        _check_hadr(environment, current, proposal)
    else:
        _check_feeds(environment, current, proposal)
        if current is None and len(environment.destinations) >= MAX_DATAGUARD_DESTINATIONS:
            raise FieldError(
                "name",
                f"'{environment.name}' already has {len(environment.destinations)} destinations, the most a Data "
                "Guard primary sends to (LOG_ARCHIVE_DEST_2 to _31).",
            )
    if is_first(environment, current):
        environment_accepts(environment, proposal)
