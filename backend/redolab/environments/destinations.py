"""Destinations and shared links: the operations the JSON API (and later the pages) share.

The mirror rule: an environment's transport_mode, link_bandwidth_bits_per_second and link_rtt_seconds
always equal those of its FIRST destination (lowest position), because the plan reads them from the
environment. `mirror()` is the one place that keeps them in step: creating, updating or deleting
destinations copies the first one's values into the environment; an update of the environment
(environments.service.update_environment, the environment API and form) copies the environment's
values into its first destination. Creating an environment creates that first destination at once
(`first_destination`). The first destination receives redo from the primary (no feeds_from).

Validation answers FieldError(field, message, status): 422 for a value that cannot work whatever is
stored, 409 for one that clashes with what is stored (a name taken, a destination still in use).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import false, inspect, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import ObjectDeletedError

from redolab.core.db import get_or_404
from redolab.core.errors import FieldError, NotFound
from redolab.environments.destination_rules import (
    MIRRORED,
    Proposal,
    check_destination,
    check_name,
    environment_accepts,
    named,
)
from redolab.environments.models import (
    Destination,
    DestinationKind,
    Environment,
    HadrRole,
    HostRole,
    Platform,
    SharedLink,
    TransportMode,
)
from redolab.environments.schemas_destinations import (
    DestinationCreate,
    DestinationUpdate,
    SharedLinkCreate,
    SharedLinkUpdate,
)

T = TypeVar("T")
FIRST_NAME = "standby"  # the destination every environment starts with (and every migrated one has)
MAX_SHARED_LINKS = 64


# -- the mirror rule -----------------------------------------------------------------------------
def first_destination(environment: Environment) -> Destination:
    """The destination a new environment starts with: a standby named "standby" with the environment's
    transport and link (the HADR principal on Db2 HADR), at position 1."""
    return Destination(
        name=FIRST_NAME,
        kind=DestinationKind.standby,
        transport=environment.transport_mode,
        hadr_role=HadrRole.principal if environment.platform is Platform.hadr else None,
        position=1,
        link_bandwidth_bits_per_second=environment.link_bandwidth_bits_per_second,
        link_rtt_seconds=environment.link_rtt_seconds,
        notes="",
    )


def mirror(*, environment: Environment, from_environment: bool = False) -> None:
    """Keep the environment's transport_mode and link fields equal to its first destination's (see the
    module's docstring). from_environment: the environment's fields were just set, so they are
    written into the first destination (with the HADR role its platform gives it); otherwise the
    first destination's are copied into the environment."""
    first = environment.first_destination
    if first is None:
        return
    for environment_field, destination_field in MIRRORED.items():
        if from_environment:
            setattr(first, destination_field, getattr(environment, environment_field))
        else:
            setattr(environment, environment_field, getattr(first, destination_field))
    if from_environment:
        first.hadr_role = HadrRole.principal if environment.platform is Platform.hadr else None


# -- reading -------------------------------------------------------------------------------------
def list_destinations(*, environment: Environment) -> list[Destination]:
    """The environment's destinations by position (the first is the one the plan reads)."""
    return list(environment.destinations)


def get_destination(*, session: Session, destination_id: int) -> Destination:
    return get_or_404(session, Destination, destination_id, what="Destination")


def list_shared_links(*, environment: Environment) -> list[SharedLink]:
    return list(environment.shared_links)


def get_shared_link(*, session: Session, shared_link_id: int) -> SharedLink:
    return get_or_404(session, SharedLink, shared_link_id, what="Shared link")


def _commit(session: Session, environment: Environment, name: str, own_id: int | None, what: str) -> None:
    """Commit; the unique index on (environment, name key) refusing it means a simultaneous request took
    the name: answered as the check answers it, once the rollback has expired what was read."""
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        items = environment.destinations if what == "destination" else environment.shared_links
        check_name(environment, name, own_id, what, items)
        raise FieldError("name", f"'{environment.name}' already has a {what} named '{name}'.") from None


def lock_environment(session: Session, environment: Environment) -> None:
    """One destination or shared-link write per environment at a time, then its destinations read
    afresh, so the counts, the principal and the cycle checks see every committed write. PostgreSQL:
    a row lock on the environment; SQLite: its one write lock, which a write that changes nothing
    takes (every read after it sees every commit before it). Held until the commit or the rollback."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(Environment.id).where(Environment.id == environment.id).with_for_update())
    else:
        session.execute(update(Destination).where(false()).values(position=Destination.position))
    session.expire(environment, ["destinations", "shared_links", "hosts"])
    if session.scalar(select(Environment.id).where(Environment.id == environment.id)) is None:
        session.rollback()  # another request deleted it since this one read it: nothing to lock
        raise NotFound(f"Environment {environment.id} does not exist.")


def _lock_row(session: Session, row: Destination | SharedLink, what: str) -> Environment:
    """lock_environment for a write to `row`, then `row` read afresh; NotFound (a 404 naming it) when
    another request deleted it, or its environment, between this request's lookup and the lock (the
    bench's DELETE /destinations/{id} met an environment deleted meanwhile: a 500)."""
    model, ident = type(row), inspect(row).identity[0]  # the key, read without a query
    try:
        environment = session.get(Environment, row.environment_id)
        if environment is None:
            raise NotFound(what)
        lock_environment(session, environment)
        if session.scalar(select(model.id).where(model.id == ident)) is None:
            raise NotFound(what)
    except (NotFound, ObjectDeletedError):
        session.rollback()
        raise NotFound(f"{what} {ident} does not exist.") from None
    session.refresh(row)
    return environment


def _serialised(write: Callable[..., T]) -> Callable[..., T]:
    """A write that takes _lock: a refusal rolls back, so the lock is not held until the session ends."""

    @functools.wraps(write)
    def run(**kwargs) -> T:
        try:
            return write(**kwargs)
        except FieldError:
            kwargs["session"].rollback()
            raise

    return run


# -- destinations --------------------------------------------------------------------------------
@_serialised
def create_destination(*, session: Session, environment: Environment, destination_in: DestinationCreate) -> Destination:
    """Add a destination after the others (the next position). Defaults: on Db2 HADR an auxiliary
    (SUPERASYNC) once the principal exists; elsewhere ASYNC."""
    lock_environment(session, environment)
    hadr, hadr_role = environment.platform is Platform.hadr, destination_in.hadr_role
    if hadr and hadr_role is None:
        has_principal = any(d.hadr_role is HadrRole.principal for d in environment.destinations)
        hadr_role = HadrRole.auxiliary if has_principal else HadrRole.principal
    auxiliary = hadr and hadr_role is HadrRole.auxiliary
    transport = destination_in.transport or (TransportMode.superasync if auxiliary else TransportMode.async_)
    values = destination_in.model_dump(exclude={"feeds_from", "transport", "hadr_role"})
    proposal = Proposal(**values, transport=transport, hadr_role=hadr_role, feeds_from_id=destination_in.feeds_from)
    check_destination(environment, None, proposal)
    position = max((d.position for d in environment.destinations), default=0) + 1
    destination = Destination(environment_id=environment.id, position=position, **vars(proposal))
    session.add(destination)
    session.flush()
    session.expire(environment, ["destinations"])
    mirror(environment=environment)
    _commit(session, environment, proposal.name, None, "destination")
    session.refresh(environment)
    return destination


@_serialised
def update_destination(*, session: Session, destination: Destination, destination_in: DestinationUpdate) -> Destination:
    """Change some fields (those left out keep their value); the result is checked whole."""
    environment = _lock_row(session, destination, "Destination")
    changes = destination_in.model_dump(exclude_unset=True)
    if "feeds_from" in changes:
        changes["feeds_from_id"] = changes.pop("feeds_from")
    if environment.platform is Platform.hadr and changes.get("hadr_role") is HadrRole.auxiliary:
        changes.setdefault("transport", TransportMode.superasync)  # an auxiliary's only mode
    for field in ("name", "kind", "transport", "notes"):  # null for these means "keep"
        if changes.get(field, "") is None:
            del changes[field]
    proposal = Proposal(**{**vars(Proposal.of(destination)), **changes})
    check_destination(environment, destination, proposal)
    for field, value in vars(proposal).items():
        setattr(destination, field, value)
    mirror(environment=environment)
    _commit(session, environment, proposal.name, destination.id, "destination")
    session.refresh(destination)
    return destination


@_serialised
def delete_destination(*, session: Session, destination: Destination) -> None:
    """Delete a destination no host, no other destination and no shared link (as its only hop) still
    needs; the ones after it move up a position. When it was the first, the next one becomes the first
    and the environment's transport and link follow it."""
    environment = _lock_row(session, destination, "Destination")
    destinations = environment.destinations
    if len(destinations) == 1:
        raise FieldError(
            "destination",
            f"'{destination.name}' is the only destination of '{environment.name}', and an environment has at least "
            "one: add another first, or delete the environment.",
        )
    fed = [d for d in destinations if d.feeds_from_id == destination.id]
    if fed:
        raise FieldError(
            "feeds_from",
            f"{named(fed)} {'is' if len(fed) == 1 else 'are'} fed from '{destination.name}': point feeds_from "
            "elsewhere (or delete them) first.",
        )
    hosts = [h for h in environment.hosts if h.destination_id == destination.id]
    if hosts:
        raise FieldError(
            "hosts",
            f"'{destination.name}' still has the host{'s' if len(hosts) > 1 else ''} {named(hosts)}: delete "
            "them or move them to another destination (their destination_id) first.",
        )
    if destination.hadr_role is HadrRole.principal:
        raise FieldError(
            "hadr_role",
            f"'{destination.name}' is the principal standby, and Db2 HADR has exactly one: delete the auxiliaries "
            f"({named(d for d in destinations if d.id != destination.id)}) first.",
        )
    alone = [link for link in environment.shared_links if [d.id for d in link.destinations] == [destination.id]]
    if alone:
        raise FieldError(
            "shared_links",
            f"'{destination.name}' is the only hop of the shared link {named(alone)}: delete the link, or add "
            "another hop to it, first.",
        )
    rest = [d for d in destinations if d.id != destination.id]
    if destination.id == destinations[0].id:
        if rest[0].feeds_from_id is not None:
            raise FieldError(
                "destination",
                f"Deleting '{destination.name}' would make '{rest[0].name}' the first destination, and the first "
                "receives redo from the primary: clear its feeds_from first.",
            )
        environment_accepts(environment, rest[0], 409)
    session.delete(destination)
    session.flush()
    for position, remaining in enumerate(rest, start=1):
        remaining.position = position
    session.expire(environment, ["destinations"])
    mirror(environment=environment)
    session.commit()


def host_destination_id(*, environment: Environment, role: HostRole, destination_id: int | None) -> int | None:
    """The destination a host belongs to: none for a primary; for a standby the one given (of this
    environment), by default the first."""
    if role is HostRole.primary:
        if destination_id is not None:
            raise FieldError(
                "destination_id",
                "A primary host belongs to no destination (destinations hold the standby side): leave "
                "destination_id empty.",
                422,
            )
        return None
    if destination_id is None:
        first = environment.first_destination
        return first.id if first is not None else None
    if destination_id not in {d.id for d in environment.destinations}:
        raise FieldError(
            "destination_id",
            f"Destination {destination_id} is not one of '{environment.name}': choose one of "
            + ", ".join(f"{d.id} ({d.name})" for d in environment.destinations)
            + ".",
            422,
        )
    return destination_id


# -- shared links --------------------------------------------------------------------------------
def _hops(environment: Environment, destination_ids: list[int]) -> list[Destination]:
    by_id = {d.id: d for d in environment.destinations}
    unknown = [i for i in dict.fromkeys(destination_ids) if i not in by_id]
    if unknown:
        raise FieldError(
            "destination_ids",
            f"Destination {', '.join(map(str, unknown))} is not one of '{environment.name}': a shared link's hops "
            "are its destinations, " + ", ".join(f"{d.id} ({d.name})" for d in environment.destinations) + ".",
            422,
        )
    return [by_id[i] for i in dict.fromkeys(destination_ids)]


@_serialised
def create_shared_link(*, session: Session, environment: Environment, link_in: SharedLinkCreate) -> SharedLink:
    """Declare that the hops into `destination_ids` cross one physical link (at least one hop)."""
    lock_environment(session, environment)
    check_name(environment, link_in.name, None, "shared link", environment.shared_links)
    if len(environment.shared_links) >= MAX_SHARED_LINKS:
        raise FieldError(
            "name", f"'{environment.name}' already has {MAX_SHARED_LINKS} shared links, the most it keeps."
        )
    link = SharedLink(
        environment_id=environment.id,
        name=link_in.name,
        bandwidth_bits_per_second=link_in.bandwidth_bits_per_second,
        notes=link_in.notes,
        destinations=_hops(environment, link_in.destination_ids),
    )
    session.add(link)
    _commit(session, environment, link_in.name, None, "shared link")
    session.refresh(environment)
    return link


@_serialised
def update_shared_link(*, session: Session, link: SharedLink, link_in: SharedLinkUpdate) -> SharedLink:
    """Change some fields; destination_ids, when given, replaces the hops."""
    environment = _lock_row(session, link, "Shared link")
    changes = link_in.model_dump(exclude_unset=True)
    for field in ("name", "destination_ids", "notes"):  # null for these means "keep"
        if changes.get(field, "") is None:
            del changes[field]
    if "name" in changes:
        check_name(environment, changes["name"], link.id, "shared link", environment.shared_links)
        link.name = changes["name"]
    if "destination_ids" in changes:
        link.destinations = _hops(environment, changes["destination_ids"])
    for field in ("bandwidth_bits_per_second", "notes"):
        if field in changes:
            setattr(link, field, changes[field])
    _commit(session, environment, link.name, link.id, "shared link")
    session.refresh(link)
    return link


def delete_shared_link(*, session: Session, link: SharedLink) -> None:
    _lock_row(session, link, "Shared link")
    session.delete(link)
    session.commit()
