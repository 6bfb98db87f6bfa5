"""What the plan reads from the database beside the environment's own fields: each host's kernel settings
as its latest run captured them; each host's encryption ceiling; a Db2 standby's replay as its db2pd
captures show it."""

from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, object_session

from redolab.collect.models import Collection
from redolab.environments.crypto import stored_crypto
from redolab.environments.models import Environment, Host
from redolab.environments.releases import stored_release
from redolab.hadr.replay import Replay, replay_of
from redolab.hadr.service import monitoring
from redolab.planning.card import show_time
from redolab.planning.copy_time import CopySettings, Datafile
from redolab.planning.encryption import HostCeiling, crypto_message_bytes
from redolab.planning.settings import HostKernel
from redolab.runs.models import Run

CAPTURES_LOOKED_AT = 5  # a host's latest runs searched for its captured settings
DATAFILE_COLLECTIONS_LOOKED_AT = 5  # the newest collections searched for a datafile list


def _in_order(environment: Environment) -> list[Host]:
    """Primary hosts first, then by node number and name."""
    return sorted(environment.hosts, key=lambda h: (h.role.value != "primary", h.node_number, h.name))


def _label(host: Host) -> str:
    return f"{host.name} ({host.role.value} {host.node_number})"


def host_ceilings(environment: Environment) -> tuple[HostCeiling, ...]:
    """Each host's encryption ceiling as last measured (remote.crypto), or not measured yet."""
    zone = environment.time_zone or "UTC"
    return tuple(
        HostCeiling(_label(host), stored_crypto(host), show_time(host.crypto_measured_at, zone))
        for host in _in_order(environment)
    )


def message_bytes_for(environment: Environment) -> tuple[int, str]:
    """The message size (bytes) to time the ciphers at on this environment's hosts, and why."""
    release = stored_release(environment.database_release)
    return crypto_message_bytes(release, environment.transport_mode.value, environment.platform.value)


def host_kernels(*, session: Session, environment: Environment) -> tuple[HostKernel, ...]:
    """Each host's kernel settings as its latest run captured them; a kernel-maximum sweep's runs are
    passed over (they set tcp_rmem/tcp_wmem for the test, not the host's own values)."""
    found = []
    for host in _in_order(environment):
        rows = session.execute(
            select(Run.id, Run.created_at, Run.client_host_id, Run.client_settings, Run.server_settings)
            .where(
                Run.environment_id == environment.id,
                Run.kernel_max_bytes.is_(None),
                or_(Run.client_host_id == host.id, Run.server_host_id == host.id),
            )
            .order_by(Run.id.desc())
            .limit(CAPTURES_LOOKED_AT)
        ).all()
        label = _label(host)
        captured, where = {}, "no run has captured its settings yet"
        for row in rows:
            settings = row.client_settings if row.client_host_id == host.id else row.server_settings
            if settings:
                captured = settings
                where = f"run #{row.id}, {show_time(row.created_at, environment.time_zone or 'UTC')}"
                break
        found.append(HostKernel(label, captured, where))
    return tuple(found)


def hadr_replay(*, session: Session, environment: Environment) -> Replay | None:
    """The standby's replay over the environment's db2pd captures (hadr.replay)."""
    watched = monitoring(session=session, environment=environment)
    return replay_of([(at, sample) for at, sample, _ in watched.samples]) if watched else None


def copy_settings(environment: Environment) -> CopySettings | None:
    """The instantiation copy as the team will run it (None: no channels set, the seed's estimate stands)."""
    if environment.copy_channels_per_node is None:
        return None
    return CopySettings(
        environment.copy_channels_per_node,
        environment.copy_nodes,
        environment.copy_section_bytes,
        environment.archive_free_bytes,
        collected_datafiles(object_session(environment), environment.id),
    )


def collected_datafiles(session: Session | None, environment_id: int) -> tuple[Datafile, ...]:
    """The datafiles (DBA_DATA_FILES) of the newest collection that listed them; () before one did (a
    file whose size the database did not give is left out)."""
    if session is None:
        return ()
    newest = session.scalars(
        select(Collection.facts)
        .where(Collection.environment_id == environment_id, Collection.facts.is_not(None))
        .order_by(Collection.id.desc())
        .limit(DATAFILE_COLLECTIONS_LOOKED_AT)
    )
    for facts in newest:
        rows = facts.get("datafiles") if isinstance(facts, dict) else None
        if rows:
            return tuple(Datafile(int(i), str(ts), int(size), bool(big)) for i, ts, size, big in rows if size)
    return ()
