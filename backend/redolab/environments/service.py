"""Environments and hosts: the operations the HTML views, the API and the CLI share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from redolab.auth.models import Role
from redolab.core.db import Base, get_or_404
from redolab.core.errors import FieldError
from redolab.core.fields import name_key
from redolab.core.security import encrypt_secret
from redolab.core.units import format_count
from redolab.environments.destination_rules import check_platform_change
from redolab.environments.destinations import first_destination, host_destination_id, lock_environment, mirror
from redolab.environments.models import Credential, Environment, Host, HostRole, same_or_new_key, stored_name_key
from redolab.environments.schemas import (
    DatabaseAccessUpdate,
    EnvironmentCreate,
    EnvironmentUpdate,
    HostCreate,
    HostUpdate,
)

T = TypeVar("T")


def list_environments(*, session: Session, limit: int | None = None, offset: int = 0) -> list[Environment]:
    """Environments by name (`limit` of them from `offset`, or all), each with its hosts and destinations."""
    query = (
        select(Environment)
        # the hosts and destinations in one query each, not one per environment
        .options(selectinload(Environment.hosts), selectinload(Environment.destinations))
        .order_by(func.lower(Environment.name), Environment.id)
        .limit(limit)
        .offset(offset)
    )
    return list(session.scalars(query))


def count_environments(*, session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Environment)) or 0


def get_environment(*, session: Session, environment_id: int) -> Environment:
    return get_or_404(session, Environment, environment_id, what="Environment")


_LOOK_ALIKE = " (names that differ only in case, width or invisible characters are the same name)"


def _check_name_free(session: Session, name: str, environment_id: int | None) -> None:
    """Names are compared by name_key: 'PROD', 'prod' and PROD in fullwidth letters are one name
    (the stored key of each environment's name, under a unique index)."""
    taken = session.execute(
        select(Environment.id, Environment.name).where(
            Environment.name_key == stored_name_key(name), Environment.id != (environment_id or 0)
        )
    ).first()
    if taken is not None:
        alike = "" if taken.name == name else _LOOK_ALIKE
        raise FieldError("name", f"An environment named '{taken.name}' already exists{alike}.")


def _commit(session: Session, field: str, message: str, recheck=lambda: None) -> None:
    """Commit; a unique index that refuses it (a simultaneous request took the name or the slot)
    is answered as the check before would have answered: `recheck` runs after the rollback."""
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        recheck()
        raise FieldError(field, message) from None


def create_environment(*, session: Session, env_in: EnvironmentCreate) -> Environment:
    """Create an environment with its first destination, "standby", whose transport and link its own
    fields mirror from then on (destinations.mirror)."""
    _check_name_free(session, env_in.name, None)
    environment = Environment(**env_in.model_dump())
    environment.destinations.append(first_destination(environment))
    session.add(environment)
    _commit(
        session,
        "name",
        f"An environment named '{env_in.name}' already exists.",
        lambda: _check_name_free(session, env_in.name, None),
    )
    return environment


def merged_environment(environment: Environment, env_in: EnvironmentUpdate) -> EnvironmentCreate:
    """Validate the environment as it would be after the update (cross-field rules included).

    Raises pydantic.ValidationError naming the offending field.
    """
    current = {field: getattr(environment, field) for field in EnvironmentCreate.model_fields}
    changes = env_in.model_dump(exclude_unset=True)
    return EnvironmentCreate.model_validate({**current, **changes})


def update_environment(*, session: Session, environment: Environment, env_in: EnvironmentUpdate) -> Environment:
    """Change some fields; the transport mode and link go to the first destination as well (the
    mirror rule, destinations.mirror)."""
    merged = merged_environment(environment, env_in)
    renamed = same_or_new_key(environment.name_key, merged.name) != environment.name_key
    if renamed:
        _check_name_free(session, merged.name, environment.id)
    check_platform_change(environment, merged.platform)
    for field, value in merged.model_dump().items():
        setattr(environment, field, value)
    mirror(environment=environment, from_environment=True)
    _commit(
        session,
        "name",
        f"An environment named '{merged.name}' already exists.",
        lambda: _check_name_free(session, merged.name, environment.id),
    )
    return environment


@dataclass(frozen=True)
class Kind:
    """One kind of row deleting an environment takes with it, as its table's `info["contents"]` names it:
    (order on the page, noun, an admin's to delete[, how many every environment has as its settings])."""

    noun: str
    count: int
    admin: bool
    with_settings: int = 0  # the first destination: made with the environment, its fields mirrored

    def __str__(self) -> str:
        return format_count(self.count, self.noun)


@dataclass(frozen=True)
class Contents:
    """What deleting an environment takes with it, per kind of row. Each feature's table names its rows
    in its `info["contents"]` (this layer imports no feature); a table whose rows belong to a kind
    named elsewhere says which in `info["deleted_with"]`."""

    kinds: tuple[Kind, ...]

    @property
    def needs_admin(self) -> bool:
        """SSH credentials or measured runs: an admin's to destroy, as deleting a credential is."""
        return any(kind.count and kind.admin for kind in self.kinds)

    @property
    def empty(self) -> bool:
        """Nothing but the environment's own settings (and the destination made with it)."""
        return all(kind.count <= kind.with_settings for kind in self.kinds)

    def describe(self) -> str:
        named = [str(kind) for kind in self.kinds if kind.count]
        if len(named) > 1:  # "1 destination, 3 hosts, 3 runs and 1 watch"
            named[-2:] = [f"{named[-2]} and {named[-1]}"]
        return ", ".join(named) if named else "nothing but its settings"


def contents(*, session: Session, environment: Environment) -> Contents:
    """Rows per table that belongs to an environment and says what its rows are called."""
    kinds = []
    for table in Base.metadata.sorted_tables:
        if "contents" not in table.info or "environment_id" not in table.c:
            continue
        order, noun, admin, *with_settings = table.info["contents"]
        query = select(func.count()).select_from(table).where(table.c.environment_id == environment.id)
        kinds.append((order, Kind(noun, session.scalar(query) or 0, admin, *with_settings)))
    return Contents(tuple(kind for _, kind in sorted(kinds, key=lambda pair: (pair[0], pair[1].noun))))


def delete_environment(
    *, session: Session, environment: Environment, role: Role = Role.admin, confirm: str | None = None
) -> Contents:
    """Delete an environment and everything in it. One holding credentials or runs needs the admin
    role (PermissionError); `confirm`, when given (the page asks for it), must be its name."""
    held = contents(session=session, environment=environment)
    if held.needs_admin and not role.allows(Role.admin):
        raise PermissionError(
            f"Deleting '{environment.name}' needs the admin role: it holds {held.describe()}. "
            "Ask an admin, or delete what you may (hosts, imports) one by one."
        )
    if confirm is not None and confirm.strip() != environment.name:
        raise FieldError("confirm", f"Type the environment's name, {environment.name}, to delete it.", 422)
    session.delete(environment)
    session.commit()
    return held


def get_host(*, session: Session, environment: Environment, host_id: int) -> Host:
    return get_or_404(session, Host, host_id, what="Host", environment=environment)


def _slot_message(environment: Environment, host: HostCreate) -> str:
    """A primary's node number is unique in its environment, a standby's in its destination."""
    where = "in this environment"
    destination = next((d for d in environment.destinations if d.id == host.destination_id), None)
    if destination is not None:
        where = f"in the destination '{destination.name}'"
    return (
        f"There is already a {host.role.value} host with node number {host.node_number} {where}: "
        "pick another node number."
    )


def _check_slot_free(session: Session, environment: Environment, host: HostCreate, host_id):
    taken = session.scalar(
        select(Host.id).where(
            Host.environment_id == environment.id,
            Host.role == host.role,
            Host.destination_id == host.destination_id if host.destination_id else Host.destination_id.is_(None),
            Host.node_number == host.node_number,
        )
    )
    if taken is not None and taken != host_id:
        raise FieldError("node_number", _slot_message(environment, host))


def _check_credential(session: Session, environment: Environment, credential_id: int | None) -> None:
    if credential_id is None:
        return
    found = session.scalar(
        select(Credential.id).where(Credential.id == credential_id, Credential.environment_id == environment.id)
    )
    if found is None:
        raise FieldError("credential_id", f"Credential {credential_id} is not one of this environment's.")


def _check_host_name_free(environment: Environment, name: str, host_id: int | None) -> None:
    key = name_key(name)
    taken = next((h.name for h in environment.hosts if h.id != host_id and name_key(h.name) == key), None)
    if taken is not None:
        alike = "" if taken == name else _LOOK_ALIKE
        raise FieldError("name", f"This environment already has a host named '{taken}'{alike}: pick another name.")


def _recheck_host(session: Session, environment: Environment, host: HostCreate, host_id: int | None) -> None:
    """After a refused commit (everything expired by the rollback): which rule a simultaneous request
    broke, the name or the slot."""
    _check_host_name_free(environment, host.name, host_id)
    _check_slot_free(session, environment, host, host_id)


def _in_destination(environment: Environment, host: HostCreate) -> HostCreate:
    """`host` with its destination: none for a primary, the first for a standby that names none."""
    destination_id = host_destination_id(environment=environment, role=host.role, destination_id=host.destination_id)
    return host.model_copy(update={"destination_id": destination_id})


def _locked_checks(session: Session, environment: Environment, checks: Callable[[], T]) -> T:
    """Run a host write's checks under the environment's lock (destinations.lock_environment, held to the
    commit): a destination deleted at the same moment either sees the host, or the host sees it gone."""
    lock_environment(session, environment)
    try:
        return checks()
    except Exception:
        session.rollback()  # releases the lock
        raise


def create_host(*, session: Session, environment: Environment, host_in: HostCreate) -> Host:
    def checks() -> HostCreate:
        checked = _in_destination(environment, host_in)
        _check_slot_free(session, environment, checked, None)
        _check_host_name_free(environment, checked.name, None)
        _check_credential(session, environment, checked.credential_id)
        return checked

    host_in = _locked_checks(session, environment, checks)
    taken = _slot_message(environment, host_in)  # read before the host is added (a read would flush it)
    host = Host(environment_id=environment.id, **host_in.model_dump())
    session.add(host)
    _commit(session, "node_number", taken, lambda: _recheck_host(session, environment, host_in, None))
    session.refresh(environment)
    return host


def update_host(*, session: Session, host: Host, host_in: HostUpdate) -> Host:
    current = {field: getattr(host, field) for field in HostCreate.model_fields}
    changes = host_in.model_dump(exclude_unset=True)
    if changes.get("role", host.role) is not host.role and "destination_id" not in changes:
        current["destination_id"] = None  # a primary has none; a standby goes to the first destination

    def checks() -> HostCreate:
        checked = _in_destination(host.environment, HostCreate.model_validate({**current, **changes}))
        _check_slot_free(session, host.environment, checked, host.id)
        if same_or_new_key(host.name_key, checked.name) != host.name_key:  # renamed, as people read it
            _check_host_name_free(host.environment, checked.name, host.id)
        _check_credential(session, host.environment, checked.credential_id)
        return checked

    merged = _locked_checks(session, host.environment, checks)
    if (merged.ssh_address, merged.ssh_port) != (host.ssh_address, host.ssh_port):
        host.host_key = host.host_key_fingerprint = None  # a new address needs its key verified
    environment = host.environment
    taken = _slot_message(environment, merged)  # read before the host changes (a read would flush it)
    for field, value in merged.model_dump().items():
        setattr(host, field, value)
    _commit(session, "node_number", taken, lambda: _recheck_host(session, environment, merged, host.id))
    return host


def delete_host(*, session: Session, host: Host) -> None:
    session.delete(host)
    session.commit()


def set_database_access(*, session: Session, host: Host, access_in: DatabaseAccessUpdate, secret_key: str) -> Host:
    """Replace how collections reach the database on `host` (a primary). The password is encrypted
    like an SSH key; without a new one the stored one is kept (clear_password removes it)."""
    if access_in.db_kind is not None and host.role is not HostRole.primary:
        raise FieldError("db_kind", "Collections read the primary's database: set this on a primary host.", 422)
    for field in (
        "db_kind",
        "db_os_user",
        "oracle_home",
        "oracle_sid",
        "db_connect",
        "db_user",
        "db2_sqllib",
        "db2_database",
    ):
        setattr(host, field, getattr(access_in, field))
    if access_in.clear_password or access_in.db_kind is None:
        host.db_encrypted_password = None
    elif access_in.password is not None:
        host.db_encrypted_password = encrypt_secret(access_in.password.get_secret_value(), secret_key=secret_key)
    session.commit()
    return host
