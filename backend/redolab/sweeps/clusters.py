"""Cluster runs (seed 000, Task 3): every node pair at once, each pair a run, the sum reported;
reverse the roles with one click. The pairs' jobs are queued together and run concurrently, since
they share no host (the worker runs jobs on disjoint hosts at the same time).

A run across hops (issue 38) is a cluster run from the primary to every destination it feeds
directly, at once: each destination's node pairs (or its first host from the first primary node),
measuring the primary's uplink as production loads it, one copy of the redo per destination. Its
jobs share the primary hosts, so they are queued `together` (the worker lets them run at once)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.environments.models import Destination, Environment, Host, HostRole
from redolab.runs import service
from redolab.runs.models import Run, RunEvent, RunStatus, new_mark
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
        environment_id=environment.id,
        reverse=reverse and not across_hops,
        across_hops=across_hops,
        template=template,
        label=run_in.label,
        requested_by=requested_by,
    )
    session.add(cluster)
    session.flush()
    for client, server in pairs:
        pair_in = RunCreate(**template, client_host_id=client.id, server_host_id=server.id)
        run = service.create_run(
            session=session,
            environment=environment,
            run_in=pair_in,
            requested_by=requested_by,
            commit=False,
            together=f"cluster:{cluster.id}" if across_hops else None,
        )
        run.cluster_id = cluster.id
    session.commit()
    return cluster


def get_cluster(*, session: Session, cluster_id: int) -> Cluster:
    return get_or_404(session, Cluster, cluster_id, what="Cluster run")


def summary(cluster: Cluster, environment: Environment) -> dict:
    """The sum over the pairs (and, across hops, per destination), and whether they really ran at the
    same time. Once every pair has ended, the sum is what they carried at once (`together`): pairs that
    started apart each had the link to themselves for a while, and their own averages would add up to
    more than it carried. Until then (and for pairs whose intervals could not be read) it is the sum of
    the finished pairs' own averages, said as such (`basis`)."""
    runs: list[Run] = cluster.runs
    done = all(run.status.finished for run in runs)
    succeeded = [run for run in runs if run.status is RunStatus.succeeded and run.bytes_per_second]
    starts = [run.started_at for run in runs if run.started_at]
    duration = runs[0].duration_seconds if runs else 0
    spread = (max(starts) - min(starts)).total_seconds() if len(starts) == len(runs) and runs else None
    at_once = cluster.together if done else None
    return {
        "hops": _per_hop(cluster, environment, at_once) if cluster.across_hops else [],
        "finished": done,
        "total_bytes_per_second": at_once_rate(at_once, succeeded) if at_once else _averages(succeeded),
        "basis": "at once" if at_once else "averages",
        "together_seconds": at_once["seconds"] if at_once else None,
        "complete": done and len(succeeded) == len(runs),
        "succeeded_pairs": len(succeeded),
        "pairs": len(runs),
        "start_spread_seconds": spread,
        "overlapped": spread is not None and spread <= 0.1 * duration,
    }


def _averages(runs: list[Run]) -> float | None:
    return sum(run.bytes_per_second for run in runs) if runs else None


def at_once_rate(at_once: Mapping, runs: Iterable) -> float | None:
    """What `runs` (of a cluster whose `together` is `at_once`) carried at once, in bytes/s; None when
    none of them was measured over the common span."""
    counted = [at_once["bytes"][str(run.id)] for run in runs if str(run.id) in at_once["bytes"]]
    return sum(counted) / at_once["seconds"] if counted else None


def together(series: Mapping[int, list[tuple[float, float, float, int]]]) -> dict | None:
    """What the pairs carried at once: the span every pair was measuring, and each pair's bytes within
    it. `series`: run id -> its intervals as (arrived, start, end, bytes), `arrived` the wall clock
    (epoch seconds) its line reached redolab, start and end seconds from its probe's zero. A probe's
    zero on the wall clock is the least of arrived - end over its lines (a line never arrives before
    its interval ends; the quickest is the closest). An interval partly inside the span counts its
    share of bytes (even within it). None when a pair has no interval or the pairs never overlapped."""
    placed = {}
    for run_id, rows in series.items():
        rows = [row for row in rows if row[2] > row[1]]
        if not rows:
            return None
        zero = min(arrived - end for arrived, _, end, _ in rows)
        placed[run_id] = [(zero + start, zero + end, size) for _, start, end, size in rows]
    if not placed:
        return None
    begin = max(min(start for start, _, _ in rows) for rows in placed.values())
    end = min(max(stop for _, stop, _ in rows) for rows in placed.values())
    if end <= begin:
        return None
    inside = {
        str(run_id): round(
            sum(size * max(0.0, min(stop, end) - max(start, begin)) / (stop - start) for start, stop, size in rows)
        )
        for run_id, rows in placed.items()
    }
    return {"seconds": end - begin, "bytes": inside}


def interval_series(rows: Iterable[tuple[int, str, object, str]]) -> dict[int, list[tuple[float, float, float, int]]]:
    """together()'s input from stored interval events (run id, role, received at, line): the server's
    (the receiver's count is the truth) where a run has them, else the client's. Lines that cannot be
    read are left out (the run's summary says it is damaged)."""
    by_role: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for run_id, role, received_at, line in rows:
        try:
            data = json.loads(line)["data"]
            start, end, size = float(data["start_seconds"]), float(data["end_seconds"]), int(data["bytes"])
        except (ValueError, KeyError, TypeError):
            continue
        if all(math.isfinite(value) for value in (start, end)) and size >= 0:
            by_role[run_id][role].append((received_at.timestamp(), start, end, size))
    return {run_id: roles.get("server") or roles.get("client", []) for run_id, roles in by_role.items()}


def record_together(*, session: Session, cluster_id: int | None) -> None:
    """Once every pair of the cluster has ended: store what the succeeded ones carried at once (a run
    ending calls it; the last one's call stores it). Marks the pairs changed, so cached plans see it."""
    cluster = session.get(Cluster, cluster_id) if cluster_id is not None else None
    if cluster is None:
        return
    # read afresh (a session that saw an earlier pair end holds its list and statuses)
    pairs = session.execute(select(Run.id, Run.status).where(Run.cluster_id == cluster.id)).all()
    if not all(status.finished for _, status in pairs):
        return
    succeeded = [run_id for run_id, status in pairs if status is RunStatus.succeeded]
    rows = session.execute(
        select(RunEvent.run_id, RunEvent.role, RunEvent.received_at, RunEvent.line)
        .where(RunEvent.run_id.in_(succeeded), RunEvent.event == "interval")
        .order_by(RunEvent.run_id, RunEvent.seq)
    ).all()
    series = interval_series(rows)
    cluster.together = together({run_id: series.get(run_id, []) for run_id in succeeded}) if succeeded else None
    session.execute(update(Run).where(Run.cluster_id == cluster.id).values(change_mark=new_mark()))
    session.commit()


def _per_hop(cluster: Cluster, environment: Environment, at_once: Mapping | None) -> list[dict]:
    """A run across hops: each destination's pairs and their sum (at once, when known), in the
    destinations' order."""
    hosts = {host.id: host for host in environment.hosts}
    hops = []
    for destination in environment.destinations:
        runs = [
            run
            for run in cluster.runs
            if getattr(hosts.get(run.server_host_id), "destination_id", None) == destination.id
        ]
        if not runs:
            continue
        succeeded = [run for run in runs if run.status is RunStatus.succeeded and run.bytes_per_second]
        rate = at_once_rate(at_once, succeeded) if at_once else _averages(succeeded)
        hops.append({"destination": destination, "runs": runs, "bytes_per_second": rate})
    return hops
