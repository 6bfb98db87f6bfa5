"""Load what the plan is computed from (environment, redo history, runs) and build it."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.environments.models import Environment, HostRole, HostTransport
from redolab.planning.plan import Facts, MeasuredRun, Plan, Source, build_plan
from redolab.probes.models import Run, RunEvent, RunStatus
from redolab.probes.parser import ProbeOutputError, run_metrics
from redolab.redo import service as redo_service

MAX_RUNS = 500  # the newest succeeded runs are enough to find the best of each kind


def environment_facts(environment: Environment) -> Facts:
    primary = next((h for h in environment.hosts if h.role is HostRole.primary and h.data_interface), None)
    return Facts(
        platform=environment.platform.value,
        transport_mode=environment.transport_mode.value,
        database_bytes=environment.database_size_bytes,
        primary_nodes=environment.primary_rac_nodes,
        standby_nodes=environment.standby_rac_nodes,
        instantiation_goal_seconds=environment.instantiation_goal_seconds,
        headroom_percent=environment.headroom_percent,
        apply_overhead_percent=environment.apply_overhead_percent,
        link_bits_per_second=environment.link_bandwidth_bits_per_second,
        link_rtt_seconds=environment.link_rtt_seconds,
        data_interface=primary.data_interface if primary else None,
    )


def measured_runs(*, session: Session, environment: Environment) -> list[MeasuredRun]:
    """Succeeded runs from a primary node to a standby node, with the numbers planning needs."""
    runs = list(
        session.scalars(
            select(Run)
            .where(Run.environment_id == environment.id, Run.status == RunStatus.succeeded, Run.bytes_per_second > 0)
            .order_by(Run.id.desc())
            .limit(MAX_RUNS)
        )
    )
    lines: dict[int, list[str]] = {}
    if runs:
        query = (
            select(RunEvent.run_id, RunEvent.line)
            .where(
                RunEvent.run_id.in_([r.id for r in runs]),
                RunEvent.role == "client",
                RunEvent.event.in_(("interval", "end")),
            )
            .order_by(RunEvent.run_id, RunEvent.seq)
        )
        for run_id, line in session.execute(query):
            lines.setdefault(run_id, []).append(line)
    measured = []
    for run in runs:
        client, server = run.client_host, run.server_host
        if (
            client is None
            or server is None
            or client.role is not HostRole.primary
            or server.role is not HostRole.standby
        ):
            continue
        try:
            metrics = run_metrics(lines.get(run.id, []))
        except ProbeOutputError:
            continue  # stored lines were parsed when they arrived; a damaged row is left out, not guessed
        measured.append(
            MeasuredRun(
                id=run.id,
                label=run.label,
                client_node=client.node_number,
                server_node=server.node_number,
                mode=run.mode.value,
                conns=run.conns,
                message_bytes=run.message_bytes,
                bytes_per_second=run.bytes_per_second,
                sync_write=run.sync_write and bool(run.write_dir),
                loopback=client.transport is HostTransport.local and server.transport is HostTransport.local,
                mtu_bytes=(run.client_settings or {}).get("mtu_bytes"),
                metrics=metrics,
                created_at=run.created_at,
            )
        )
    return measured


def environment_plan(*, session: Session, environment: Environment) -> Plan:
    """The plan from everything stored for the environment."""
    result = redo_service.environment_analysis(session=session, environment=environment)
    analysis = result[0] if result else None
    imports = [
        Source(f"import #{i.id} ({i.filename})", f"/environments/{environment.id}#redo-imports")
        for i in redo_service.list_imports(session=session, environment=environment)
    ]
    return build_plan(
        facts=environment_facts(environment),
        analysis=analysis,
        imports=imports,
        runs=measured_runs(session=session, environment=environment),
    )
