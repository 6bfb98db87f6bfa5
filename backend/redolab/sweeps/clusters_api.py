"""JSON API: cluster runs (node n -> node n at once) and runs across hops (the primary to every
destination it feeds at once), each pair an ordinary run, with the sum and, across hops, each hop's."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status
from pydantic import BaseModel, Field

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.core.deps import SessionDep
from redolab.core.openapi import error_responses
from redolab.environments.service import get_environment
from redolab.jobs.queue import wake_local_worker
from redolab.runs import service as run_service
from redolab.runs.schemas import RunCreate, RunPublic
from redolab.sweeps import clusters

router = APIRouter(prefix="/api/v1", tags=["sweeps"], dependencies=[Depends(current_api_user)])


class ClusterCreate(RunCreate):
    """One run's settings for every pair; the pairs come from the environment's hosts."""

    client_host_id: int | None = Field(None, description="Not used: each pair fills in its hosts.")
    server_host_id: int | None = Field(None, description="Not used: each pair fills in its hosts.")
    across_hops: bool = Field(False, description="The primary to every destination it feeds, at once.")


class HopSum(BaseModel):
    destination_id: int
    destination: str
    run_ids: list[int]
    bytes_per_second: float | None


class ClusterPublic(BaseModel):
    id: int
    environment_id: int
    across_hops: bool
    reverse: bool
    label: str
    finished: bool
    complete: bool
    total_bytes_per_second: float | None
    # "at once": received over the span every pair ran (together_seconds); "averages": the finished
    # pairs' own averages added up, until every pair has ended
    basis: str
    together_seconds: float | None
    start_spread_seconds: float | None
    overlapped: bool
    hops: list[HopSum]
    runs: list[RunPublic]


def cluster_public(cluster, environment) -> ClusterPublic:
    summary = clusters.summary(cluster, environment)
    hops = [
        HopSum(
            destination_id=hop["destination"].id,
            destination=hop["destination"].name,
            run_ids=[run.id for run in hop["runs"]],
            bytes_per_second=hop["bytes_per_second"],
        )
        for hop in summary["hops"]
    ]
    return ClusterPublic(
        id=cluster.id,
        environment_id=cluster.environment_id,
        across_hops=cluster.across_hops,
        reverse=cluster.reverse,
        label=cluster.label,
        finished=summary["finished"],
        complete=summary["complete"],
        total_bytes_per_second=summary["total_bytes_per_second"],
        basis=summary["basis"],
        together_seconds=summary["together_seconds"],
        start_spread_seconds=summary["start_spread_seconds"],
        overlapped=summary["overlapped"],
        hops=hops,
        runs=[RunPublic.model_validate(run) for run in cluster.runs],
    )


@router.post(
    "/environments/{environment_id}/clusters", status_code=status.HTTP_201_CREATED, responses=error_responses(429)
)
def create_cluster(
    request: Request, session: SessionDep, user: ApiOperator, environment_id: int, cluster_in: ClusterCreate
) -> ClusterPublic:
    """Queue a cluster run (every node pair of the first destination at once) or, with `across_hops`,
    a run from the primary to every destination it feeds at once (operator role). 422 when the
    environment has no such pairs (or, across hops, fewer than two destinations with a host)."""
    environment = get_environment(session=session, environment_id=environment_id)
    run_in = RunCreate.model_validate(
        {
            **cluster_in.model_dump(mode="json", exclude={"across_hops", "client_host_id", "server_host_id"}),
            **clusters.TEMPLATE_PAIR,
        }
    )
    cluster = clusters.create_cluster(
        session=session,
        environment=environment,
        run_in=run_in,
        reverse=False,
        requested_by=user.username,
        across_hops=cluster_in.across_hops,
    )
    wake_local_worker(request.app)
    return cluster_public(cluster, environment)


@router.get("/clusters/{cluster_id}")
def read_cluster(session: SessionDep, cluster_id: int) -> ClusterPublic:
    """A cluster run or run across hops: its runs, the sum, each hop's sum, and whether they overlapped."""
    cluster = clusters.get_cluster(session=session, cluster_id=cluster_id)
    return cluster_public(cluster, get_environment(session=session, environment_id=cluster.environment_id))


@router.post("/clusters/{cluster_id}/cancel")
def cancel_cluster(session: SessionDep, user: ApiOperator, cluster_id: int) -> ClusterPublic:
    """Cancel every pair still queued or running (operator role); samples already received are kept."""
    cluster = clusters.get_cluster(session=session, cluster_id=cluster_id)
    for run in cluster.runs:
        run_service.cancel_run(session=session, run=run)
    session.expire_all()
    return cluster_public(cluster, get_environment(session=session, environment_id=cluster.environment_id))
