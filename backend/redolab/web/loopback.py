"""Pages of "This machine" measurements say so: a run, sweep, cluster run, rehearsal, watch or comparison whose
both ends are local hosts measured the probe on the redolab server, not a network path (issue 58)."""

from __future__ import annotations

from sqlalchemy import select

from redolab.environments.models import Host, HostTransport


def on_this_machine(session, pairs) -> bool:
    """Whether every (client host id, server host id) pair has both ends on this machine (at least one
    pair; a removed host counts as not local)."""
    pairs = [(client, server) for client, server in pairs]
    ids = {host_id for pair in pairs for host_id in pair if host_id is not None}
    if not pairs or not ids:
        return False
    local = set(session.scalars(select(Host.id).where(Host.id.in_(ids), Host.transport == HostTransport.local)))
    return all(client in local and server in local for client, server in pairs)


def runs_on_this_machine(session, runs) -> bool:
    return on_this_machine(session, [(run.client_host_id, run.server_host_id) for run in runs])
