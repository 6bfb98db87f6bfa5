"""Register the lab as an environment of redolab: hosts, a key credential and pinned host keys,
so a user goes straight to "New experiment". Runs and imports of an earlier lab are kept."""

from __future__ import annotations

import asyncssh
from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.environments.credentials import CredentialCreate, create_credential
from redolab.environments.models import Credential, CredentialKind, Environment, HostRole
from redolab.environments.schemas import EnvironmentCreate, EnvironmentUpdate, HostCreate, HostUpdate
from redolab.environments.service import create_environment, create_host, update_environment, update_host
from redolab.lab.control import Paths, host_key_line
from redolab.lab.topology import DATA_DEVICE, Lab

CREDENTIAL_NAME = "lab key"


def _link_fields(lab: Lab) -> dict:
    return {
        "primary_rac_nodes": lab.primary_nodes,
        "standby_rac_nodes": lab.standby_nodes,
        "link_bandwidth_bits_per_second": lab.shape.rate_bits_per_second or None,
        "link_rtt_seconds": lab.shape.rtt_seconds or None,
    }


def register(*, session: Session, lab: Lab, paths: Paths, secret_key: str) -> Environment:
    environment = _lab_environment(session, lab)
    credential = _lab_credential(session, environment, paths, secret_key)
    # the lab's standbys are the first destination's (another destination's node 1 is not the lab's)
    existing = {(h.role, h.node_number): h for h in environment.hosts if h.role is HostRole.primary}
    existing |= {(h.role, h.node_number): h for h in environment.standby_hosts()}
    for lab_host in lab.hosts:
        fields = {
            "name": lab_host.name,
            "ssh_address": lab_host.management_address,
            "ssh_port": 22,
            "ssh_user": "root",
            "data_address": lab_host.data_address,
            "data_interface": DATA_DEVICE,
            "credential_id": credential.id,
            # Each lab host is a namespace of its own: kernel-maximum sweeps may set its buffers.
            "allow_kernel_changes": True,
        }
        host = existing.pop((HostRole(lab_host.role), lab_host.node), None)
        if host is None:
            host = create_host(
                session=session,
                environment=environment,
                host_in=HostCreate(role=HostRole(lab_host.role), node_number=lab_host.node, **fields),
            )
        else:
            host = update_host(session=session, host=host, host_in=HostUpdate(**fields))
        line = host_key_line(paths, lab_host)
        host.host_key = line
        host.host_key_fingerprint = asyncssh.import_public_key(line).get_fingerprint("sha256")
    for host in existing.values():  # nodes of a bigger earlier lab
        session.delete(host)
    session.commit()
    session.refresh(environment)
    return environment


def _lab_environment(session: Session, lab: Lab) -> Environment:
    """The lab's environment, created or brought up to date with the lab's link."""
    environment = session.scalar(select(Environment).where(Environment.name == lab.environment_name))
    description = f"redolab lab on this machine: {lab.shape.describe()}"[:500]
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
    """After `lab set`: the environment's RTT and bandwidth follow the lab's."""
    environment = session.scalar(select(Environment).where(Environment.name == lab.environment_name))
    if environment is None:
        return
    description = f"redolab lab on this machine: {lab.shape.describe()}"[:500]
    update_environment(
        session=session, environment=environment, env_in=EnvironmentUpdate(description=description, **_link_fields(lab))
    )
