"""Cluster runs (seed 000, Task 3): every node pair at once, each pair a run, the sum reported;
reverse the roles with one click. The pairs' jobs are queued together and run concurrently, since
they share no host (the worker runs jobs on disjoint hosts at the same time).

A run across hops (issue 38) is a cluster run from the primary to every destination it feeds
directly, at once: each destination's node pairs (or its first host from the first primary node),
measuring the primary's uplink as production loads it, one copy of the redo per destination. Its
jobs share the primary hosts, so they are queued `together` (the worker lets them run at once)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.environments.models import Destination, Environment, Host, HostRole
from redolab.runs import service
from redolab.runs.models import Run, RunStatus
from redolab.runs.schemas import RunCreate
from redolab.sweeps.models import Cluster

# A cluster's template is one run's settings without its hosts (each node pair fills them in): the
# form is validated as a run with this stand-in pair, which create_cluster leaves out of the template.
TEMPLATE_PAIR = {"client_host_id": 1, "server_host_id": 1}


def node_pairs(
    environment: Environment, *, reverse: bool = False, destination: Destination | None = None
) -> list[tuple[Host, Host]]:
    """(client, server) for every node number both sides have: primary n -> standby n of `destination`
    (by default the first: another destination's node n is another standby)."""
    primaries = {h.node_number: h for h in environment.hosts if h.role is HostRole.primary}
    standbys = {h.node_number: h for h in environment.standby_hosts(destination)}
    pairs = [(primaries[n], standbys[n]) for n in sorted(primaries.keys() & standbys.keys())]
    return [(server, client) for client, server in pairs] if reverse else pairs


def hop_pairs(environment: Environment) -> list[tuple[Host, Host]]:
    """(client, server) for every destination the primary feeds: its node pairs, or, when node numbers
    do not match, the first primary node to the destination's first host."""
    primaries = sorted((h for h in environment.hosts if h.role is HostRole.primary), key=lambda h: h.node_number)
    pairs = []
    for destination in environment.destinations:
        if destination.feeds_from_id is not None or not primaries:
            continue
        mine = node_pairs(environment, destination=destination)
        standbys = sorted(environment.standby_hosts(destination), key=lambda h: h.node_number)
        pairs.extend(mine or ([(primaries[0], standbys[0])] if standbys else []))
    return pairs


def create_cluster(
    *,
    session: Session,
    environment: Environment,
    run_in: RunCreate,
    reverse: bool,
    requested_by: str,
    across_hops: bool = False,
) -> Cluster:
    pairs = hop_pairs(environment) if across_hops else node_pairs(environment, reverse=reverse)
    if across_hops and len({server.destination_id for _, server in pairs}) < 2:
        raise FieldError(
            "client_host_id",
            "A run across hops needs two or more destinations fed by the primary, each with a standby host "
            "(add them on the Destinations page).",
            422,
        )
    if not pairs:
        raise FieldError(
            "client_host_id",
            "A cluster run needs primary and standby hosts with the same node numbers (node 1 and node 1, ...).",
            422,
        )
    template = run_in.model_dump(mode="json", exclude={"client_host_id", "server_host_id"})
    cluster = Cluster(
        environment_id=environment.id, reverse=reverse and not across_hops, across_hops=across_hops,
        template=template, label=run_in.label, requested_by=requested_by,
    )  # fmt: skip
    session.add(cluster)
    session.flush()
    for client, server in pairs:
        pair_in = RunCreate(**template, client_host_id=client.id, server_host_id=server.id)
        run = service.create_run(
            session=session, environment=environment, run_in=pair_in, requested_by=requested_by, commit=False,
            together=f"cluster:{cluster.id}" if across_hops else None,
        )  # fmt: skip
        run.cluster_id = cluster.id
    session.commit()
    return cluster


def get_cluster(*, session: Session, cluster_id: int) -> Cluster:
    return get_or_404(session, Cluster, cluster_id, what="Cluster run")


def summary(cluster: Cluster, environment: Environment) -> dict:
    """The sum over the pairs (and, across hops, per destination), and whether they really ran at the
    same time."""
    runs: list[Run] = cluster.runs
    done = all(run.status.finished for run in runs)
    succeeded = [run for run in runs if run.status is RunStatus.succeeded and run.bytes_per_second]
    starts = [run.started_at for run in runs if run.started_at]
    duration = runs[0].duration_seconds if runs else 0
    spread = (max(starts) - min(starts)).total_seconds() if len(starts) == len(runs) and runs else None
    return {
        "hops": _per_hop(cluster, environment) if cluster.across_hops else [],
        "finished": done,
        "total_bytes_per_second": sum(run.bytes_per_second for run in succeeded) if succeeded else None,
        "complete": done and len(succeeded) == len(runs),
        "start_spread_seconds": spread,
        "overlapped": spread is not None and spread <= 0.1 * duration,
    }


def _per_hop(cluster: Cluster, environment: Environment) -> list[dict]:
    """A run across hops: each destination's pairs and their sum, in the destinations' order."""
    hosts = {host.id: host for host in environment.hosts}
    hops = []
    for destination in environment.destinations:
        runs = [run for run in cluster.runs if getattr(hosts.get(run.server_host_id), "destination_id", None)
                == destination.id]  # fmt: skip
        if not runs:
            continue
        rates = [run.bytes_per_second for run in runs if run.status is RunStatus.succeeded and run.bytes_per_second]
        hops.append({"destination": destination, "runs": runs, "bytes_per_second": sum(rates) if rates else None})
    return hops
