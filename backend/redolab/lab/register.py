"""Register the lab as an environment of redolab: hosts, a key credential and pinned host keys,
so a user goes straight to "New experiment". Runs and imports of an earlier lab are kept.

Each extra lab destination is a destination of the environment (found by name, else made: fed by the
primary, ASYNC), its bandwidth the lab's rate and its RTT its own; with any, the shared link "lab
uplink" (the lab's rate) covers the first destination and them, since the delay line shapes every
path through one rate per direction. A destination an earlier `lab up` made (its notes say so) that
the lab no longer has loses its lab hosts and is deleted, unless something else still needs it."""

from __future__ import annotations

import contextlib

import asyncssh
from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.errors import FieldError
from redolab.core.fields import name_key
from redolab.environments.credentials import CredentialCreate, create_credential
from redolab.environments.destinations import (
    create_destination,
    create_shared_link,
    delete_destination,
    delete_shared_link,
    update_destination,
    update_shared_link,
)
from redolab.environments.models import (
    Credential,
    CredentialKind,
    Destination,
    DestinationKind,
    Environment,
    Host,
    HostRole,
    Platform,
    SharedLink,
    TransportMode,
)
from redolab.environments.schemas import EnvironmentCreate, EnvironmentUpdate, HostCreate, HostUpdate
from redolab.environments.schemas_destinations import (
    DestinationCreate,
    DestinationUpdate,
    SharedLinkCreate,
    SharedLinkUpdate,
)
from redolab.environments.service import create_environment, create_host, update_environment, update_host
from redolab.lab.control import Paths, host_key_line
from redolab.lab.topology import DATA_DEVICE, Lab, LabDestination, LabError, LabHost

CREDENTIAL_NAME = "lab key"
LINK_NAME = "lab uplink"
LAB_NOTES = "Made by `redolab lab up`; the next `lab up` updates it, or deletes it when the lab no longer has it."


def _link_fields(lab: Lab) -> dict:
    return {
        "primary_rac_nodes": lab.primary_nodes,
        "standby_rac_nodes": lab.standby_nodes,
        "link_bandwidth_bits_per_second": lab.shape.rate_bits_per_second or None,
        "link_rtt_seconds": lab.shape.rtt_seconds or None,
    }


def register(*, session: Session, lab: Lab, paths: Paths, secret_key: str) -> Environment:
    """Create or update the lab's environment; a destination the environment refuses raises LabError."""
    environment = _lab_environment(session, lab)
    credential = _lab_credential(session, environment, paths, secret_key)
    destinations = {None: environment.first_destination}
    destinations |= {d.name: _lab_destination(session, environment, lab, d) for d in lab.destinations}
    kept = {d.id for d in destinations.values()}
    stale = [d for d in environment.destinations if d.notes == LAB_NOTES and d.id not in kept]
    # the lab's hosts: the primaries, the first destination's standbys and those of the lab's destinations
    # (and of the ones it no longer has); another destination's node 1 is not the lab's
    existing = {("primary", None, h.node_number): h for h in environment.hosts if h.role is HostRole.primary}
    for name, destination in [*destinations.items(), *((d.name, d) for d in stale)]:
        existing |= {("standby", name, h.node_number): h for h in environment.standby_hosts(destination)}
    for lab_host in lab.hosts:
        destination = destinations[lab_host.destination] if lab_host.role == "standby" else None
        host = existing.pop((lab_host.role, lab_host.destination, lab_host.node), None)
        host = _lab_host(session, environment, lab_host, host, credential, destination)
        line = host_key_line(paths, lab_host)
        host.host_key = line
        host.host_key_fingerprint = asyncssh.import_public_key(line).get_fingerprint("sha256")
    for host in existing.values():  # nodes of a bigger earlier lab, hosts of a destination it no longer has
        session.delete(host)
    session.commit()
    _uplink(session, environment, lab, list(destinations.values()))
    for destination in stale:
        with contextlib.suppress(FieldError):  # still needed (it feeds another, a link of the user's has only it)
            delete_destination(session=session, destination=destination)
    session.refresh(environment)
    return environment


def _lab_host(
    session: Session,
    environment: Environment,
    lab_host: LabHost,
    host: Host | None,
    credential: Credential,
    destination: Destination | None,
) -> Host:
    """The environment's host for `lab_host`: `host` brought up to date, or a new one."""
    fields = {
        "name": lab_host.name,
        "ssh_address": lab_host.management_address,
        "ssh_port": 22,
        "ssh_user": "root",
        "data_address": lab_host.data_address,
        "data_interface": DATA_DEVICE,
        "credential_id": credential.id,
        "destination_id": destination.id if destination is not None else None,
        # Each lab host is a namespace of its own: kernel-maximum sweeps may set its buffers.
        "allow_kernel_changes": True,
    }
    if host is not None:
        return update_host(session=session, host=host, host_in=HostUpdate(**fields))
    host_in = HostCreate(role=HostRole(lab_host.role), node_number=lab_host.node, **fields)
    return create_host(session=session, environment=environment, host_in=host_in)


def _lab_destination(session: Session, environment: Environment, lab: Lab, wanted: LabDestination) -> Destination:
    """The environment's destination named as `wanted`, its kind, bandwidth and RTT the lab's (made,
    fed by the primary and ASYNC, when missing; an existing one keeps its transport and feeds_from)."""
    found = next((d for d in environment.destinations if name_key(d.name) == name_key(wanted.name)), None)
    if found is not None and found.id == environment.first_destination.id:
        raise LabError(
            f"{wanted.option}: '{found.name}' is the first destination of '{environment.name}', the one --rtt "
            "describes: pick another name"
        )
    fields = {
        "kind": DestinationKind(wanted.kind),
        "link_bandwidth_bits_per_second": lab.shape.rate_bits_per_second or None,
        "link_rtt_seconds": wanted.rtt_seconds or None,
    }
    try:
        if found is not None:
            return update_destination(session=session, destination=found, destination_in=DestinationUpdate(**fields))
        # on Db2 HADR, left out: an auxiliary standby in SUPERASYNC (its only mode)
        transport = TransportMode.async_ if environment.platform is Platform.dataguard else None
        destination_in = DestinationCreate(name=wanted.name, transport=transport, notes=LAB_NOTES, **fields)
        return create_destination(session=session, environment=environment, destination_in=destination_in)
    except FieldError as error:
        raise LabError(f"{wanted.option}: environment '{environment.name}' refused it: {error.message}") from None


def _uplink(session: Session, environment: Environment, lab: Lab, destinations: list[Destination]) -> None:
    """The shared link "lab uplink" over every lab destination when there are several; none otherwise."""
    session.refresh(environment)
    link = _lab_link(environment)
    bandwidth = lab.shape.rate_bits_per_second or None
    if len(destinations) < 2:
        if link is not None:
            delete_shared_link(session=session, link=link)
        return
    hops = [d.id for d in destinations]
    if link is None:
        link_in = SharedLinkCreate(
            name=LINK_NAME, destination_ids=hops, bandwidth_bits_per_second=bandwidth, notes=LAB_NOTES
        )
        create_shared_link(session=session, environment=environment, link_in=link_in)
    else:
        link_in = SharedLinkUpdate(destination_ids=hops, bandwidth_bits_per_second=bandwidth)
        update_shared_link(session=session, link=link, link_in=link_in)


def _lab_link(environment: Environment) -> SharedLink | None:
    return next((link for link in environment.shared_links if name_key(link.name) == name_key(LINK_NAME)), None)


def _lab_environment(session: Session, lab: Lab) -> Environment:
    """The lab's environment, created or brought up to date with the lab's link."""
    environment = session.scalar(select(Environment).where(Environment.name == lab.environment_name))
    description = f"redolab lab on this machine: {lab.describe()}"[:500]
    if environment is None:
        return create_environment(
            session=session,
            env_in=EnvironmentCreate(name=lab.environment_name, description=description, **_link_fields(lab)),
        )
    return update_environment(
        session=session,
        environment=environment,
        env_in=EnvironmentUpdate(description=description, **_link_fields(lab)),
    )


def _lab_credential(session: Session, environment: Environment, paths: Paths, secret_key: str) -> Credential:
    """The credential naming the lab's client key; replaced when the key moved."""
    credential = session.scalar(
        select(Credential).where(Credential.environment_id == environment.id, Credential.name == CREDENTIAL_NAME)
    )
    if credential is not None and credential.key_path == str(paths.client_key):
        return credential
    if credential is not None:
        session.delete(credential)
        session.flush()
    return create_credential(
        session=session,
        environment=environment,
        credential_in=CredentialCreate(
            name=CREDENTIAL_NAME, kind=CredentialKind.key_path, key_path=str(paths.client_key)
        ),
        secret_key=secret_key,
    )


def update_link(*, session: Session, lab: Lab) -> None:
    """After `lab set`: the environment's RTT and bandwidth follow the lab's, and the bandwidth of the
    lab's other destinations and of its shared uplink the lab's rate."""
    environment = session.scalar(select(Environment).where(Environment.name == lab.environment_name))
    if environment is None:
        return
    description = f"redolab lab on this machine: {lab.describe()}"[:500]
    update_environment(
        session=session, environment=environment, env_in=EnvironmentUpdate(description=description, **_link_fields(lab))
    )
    bandwidth = lab.shape.rate_bits_per_second or None
    names = {name_key(d.name) for d in lab.destinations}
    for destination in list(environment.destinations):
        if name_key(destination.name) in names:
            update_destination(
                session=session,
                destination=destination,
                destination_in=DestinationUpdate(link_bandwidth_bits_per_second=bandwidth),
            )
    link = _lab_link(environment)
    if link is not None:
        update_shared_link(session=session, link=link, link_in=SharedLinkUpdate(bandwidth_bits_per_second=bandwidth))
