"""Cluster runs (seed 000, Task 3): every node pair at once, each pair a run, the sum reported;
reverse the roles with one click. The pairs' jobs are queued together and run concurrently, since
they share no host (the worker runs jobs on disjoint hosts at the same time)."""

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


def create_cluster(
    *, session: Session, environment: Environment, run_in: RunCreate, reverse: bool, requested_by: str
) -> Cluster:
    pairs = node_pairs(environment, reverse=reverse)
    if not pairs:
        raise FieldError(
            "client_host_id",
            "A cluster run needs primary and standby hosts with the same node numbers (node 1 and node 1, ...).",
            422,
        )
    template = run_in.model_dump(mode="json", exclude={"client_host_id", "server_host_id"})
    cluster = Cluster(
        environment_id=environment.id, reverse=reverse, template=template, label=run_in.label, requested_by=requested_by
    )
    session.add(cluster)
    session.flush()
    for client, server in pairs:
        pair_in = RunCreate(**template, client_host_id=client.id, server_host_id=server.id)
        run = service.create_run(session=session, environment=environment, run_in=pair_in, requested_by=requested_by)
        run.cluster_id = cluster.id
    session.commit()
    return cluster


def get_cluster(*, session: Session, cluster_id: int) -> Cluster:
    return get_or_404(session, Cluster, cluster_id, what="Cluster run")


def summary(cluster: Cluster) -> dict:
    """The sum over the pairs, and whether they really ran at the same time."""
    runs: list[Run] = cluster.runs
    done = all(run.status.finished for run in runs)
    succeeded = [run for run in runs if run.status is RunStatus.succeeded and run.bytes_per_second]
    starts = [run.started_at for run in runs if run.started_at]
    duration = runs[0].duration_seconds if runs else 0
    spread = (max(starts) - min(starts)).total_seconds() if len(starts) == len(runs) and runs else None
    return {
        "finished": done,
        "total_bytes_per_second": sum(run.bytes_per_second for run in succeeded) if succeeded else None,
        "complete": done and len(succeeded) == len(runs),
        "start_spread_seconds": spread,
        "overlapped": spread is not None and spread <= 0.1 * duration,
    }
