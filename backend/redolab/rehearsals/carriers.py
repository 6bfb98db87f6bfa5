"""Which host pairs carry a rehearsal's threads, and whether they may: a pair asked for carries every
thread; else thread n replays from primary node n to standby node n where every thread has its node
pair, or over node 1's pair (said in the rehearsal's notes); across hops, the same into every
destination the primary feeds. Admitted when every host is free (409) and each pair within the queue
caps (429)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.errors import FieldError
from redolab.environments.models import Environment, Host
from redolab.jobs.admission import QueueCaps
from redolab.jobs.models import Job, JobStatus
from redolab.runs.models import Run, RunStatus
from redolab.runs.queueing import admit
from redolab.runs.service import host_in
from redolab.sweeps.clusters import node_pairs

Carrier = tuple[Host, Host, list[int]]  # client, server, the threads its connections carry


def carriers(
    environment: Environment,
    threads: list[int],
    *,
    client_host_id: int | None = None,
    server_host_id: int | None = None,
    across_hops: bool = False,
) -> list[Carrier]:
    """(client, server, threads it carries): a given pair carries every thread; with node pairs for
    every thread, thread n goes from primary node n to standby node n; else node 1's pair. Across hops:
    the same for every destination the primary feeds, each carrying every thread (one copy of the redo each)."""
    if across_hops:
        if client_host_id is not None or server_host_id is not None:
            raise FieldError("client_host_id", "To every destination at once: leave the host pair empty.", 422)
        direct = [d for d in environment.destinations if d.feeds_from_id is None and environment.standby_hosts(d)]
        if len(direct) < 2:
            raise FieldError(
                "across_hops",
                "To every destination at once needs two or more destinations fed by the primary, each with a "
                "standby host (add them on the Destinations page).",
                422,
            )
        return [carrier for d in direct for carrier in _destination_pairs(environment, threads, d)]
    if client_host_id is not None or server_host_id is not None:
        if client_host_id is None or server_host_id is None:
            raise FieldError("client_host_id", "Give both hosts of the pair (client and server), or neither.", 422)
        client = host_in(environment, client_host_id, "client_host_id")
        server = host_in(environment, server_host_id, "server_host_id")
        return [(client, server, threads)]
    return _destination_pairs(environment, threads, None)


def _destination_pairs(environment: Environment, threads: list[int], destination) -> list[Carrier]:
    """The carriers into one destination (None: the first): thread n over node pair n, else node 1's pair."""
    pairs = {
        client.node_number: (client, server) for client, server in node_pairs(environment, destination=destination)
    }
    if not pairs and destination is not None:
        primaries = sorted((h for h in environment.hosts if h.role.value == "primary"), key=lambda h: h.node_number)
        standbys = sorted(environment.standby_hosts(destination), key=lambda h: h.node_number)
        pairs = {1: (primaries[0], standbys[0])} if primaries and standbys else {}
    if not pairs:
        raise FieldError(
            "client_host_id",
            "A rehearsal needs a primary and a standby host with the same node number: add them first.",
            422,
        )
    if all(t in pairs for t in threads):  # thread n over node pair n (thread 2 alone: pair 2)
        return [(*pairs[t], [t]) for t in threads]
    first = pairs[min(pairs)]  # a thread without its pair: node 1's carries every thread (said in the notes)
    return [(*first, threads)]


def carrier_notes(environment: Environment, pairs: list[Carrier], threads: list[int]) -> list[str]:
    """What the rehearsal's notes say of one host pair carrying every thread because some thread has no
    node pair (a primary and a standby host with its node number) of its own."""
    notes = []
    for client, server, carried in pairs:
        if len(threads) < 2 or len(carried) != len(threads):
            continue
        destination = next((d for d in environment.destinations if d.id == server.destination_id), None)
        paired = {c.node_number for c, _ in node_pairs(environment, destination=destination)}
        missing = [t for t in carried if t not in paired]
        if missing:
            many = len(missing) > 1
            notes.append(
                f"every thread replays from {client.name} to {server.name}: thread{'s' if many else ''} "
                f"{', '.join(map(str, missing))} {'have' if many else 'has'} no node pair (a primary and a "
                "standby host with that node number); add them to replay each thread from its own node"
            )
    return notes


def _busy(session: Session, hosts: list[Host], behind: set[int]) -> None:
    """409 when a host of the rehearsal already has a run queued or running: its threads must start
    together, so it does not wait in the queue behind other work (but for the runs `behind`: a rehearsal
    queued with it, as a tier's and the tier below's are). A job whose run has ended is not busy: the
    worker marks the job a moment after the run, and a `--wait` that saw the run end must find the
    hosts free."""
    ids = {host.id for host in hosts}
    ended = (RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled)
    query = (
        select(Job)
        .outerjoin(Run, Run.id == Job.run_id)
        .where(
            Job.status.in_((JobStatus.queued, JobStatus.running)),
            (Job.client_host_id.in_(ids)) | (Job.server_host_id.in_(ids)),
            Run.id.is_(None) | Run.status.not_in(ended),
        )
    )
    if behind:
        query = query.where(Job.run_id.is_(None) | Job.run_id.not_in(behind))
    job = session.scalars(query).first()
    if job is not None:
        host = next(h for h in hosts if h.id in (job.client_host_id, job.server_host_id))
        what = f"run #{job.run_id}" if job.run_id else f"sweep #{job.sweep_id}" if job.sweep_id else f"job #{job.id}"
        raise FieldError(
            "client_host_id",
            f"Host '{host.name}' is busy with {what} ({job.status.value}); a rehearsal's threads replay at the "
            "same moment, so its hosts must be free. Start it when that ends, or cancel it.",
            409,
        )


def admit_pairs(
    session: Session, pairs: list[Carrier], *, requested_by: str, caps: QueueCaps | None, behind: set[int] = frozenset()
) -> None:
    """Under the queue lock (held until the caller's commit or rollback): every host free (409) and each
    pair within its owner's and its own queue cap (429). One step with the rows written after it, so two
    rehearsals asked for at once cannot both find the same hosts free."""
    try:
        for client, server, _ in pairs:  # the owner's cap counts every run of the rehearsal
            admit(session, requested_by=requested_by, client=client, server=server, caps=caps, adding=len(pairs))
        _busy(session, [host for client, server, _ in pairs for host in (client, server)], set(behind))
    except Exception:
        session.rollback()
        raise
