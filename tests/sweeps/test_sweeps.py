"""Sweeps over a real OpenSSH sshd on 127.0.0.1: the grid, the plateau stop, repetitions,
cancel and failure. Kernel-maximum sweeps change sysctls, so they run in the lab (tests/lab)."""

from __future__ import annotations

import statistics
import threading
import time

import pytest
from sqlalchemy import func, select

from redolab.runs.models import Run, RunStatus
from redolab.sweeps import service
from redolab.sweeps.grid import find_plateau
from redolab.sweeps.models import Sweep, SweepKind
from redolab.sweeps.schemas import SweepCreate
from tests.execution import execute_next
from tests.margins import measured_within


def request_sweep(session, environment, client, server, **fields) -> Sweep:
    values = {"client_host_id": client.id, "server_host_id": server.id, "interval_seconds": 0.25, **fields}
    return service.create_sweep(
        session=session, environment=environment, sweep_in=SweepCreate(**values), requested_by="alice"
    )


def reload_sweep(session, sweep: Sweep) -> Sweep:
    session.expire_all()
    return session.get(Sweep, sweep.id)


def test_connection_sweep_stops_at_its_plateau(session, engine, secret_key, ssh_env):
    """Paced to 400 Mbit/s in total, more connections cannot help: the seed's rule stops the
    sweep after three values that do not improve on one connection, and 1 is the best count."""
    environment, primary, standby = ssh_env

    def swept() -> Sweep:
        sweep = request_sweep(
            session,
            environment,
            primary,
            standby,
            kind="connections",
            conns_max=16,
            duration_seconds=1,
            rate_bits_per_second="400 Mbit/s",
            tags="paced, lo",
        )
        assert sweep.values == [1, 2, 4, 6, 8, 10, 12, 14, 16]
        assert execute_next(engine, secret_key)
        sweep = reload_sweep(session, sweep)
        assert sweep.status is RunStatus.succeeded, sweep.failure_reason
        assert all(run.status is RunStatus.succeeded for run in sweep.runs)
        assert all(run.tags == ["paced", "lo"] and run.rate_bits_per_second == 400_000_000 for run in sweep.runs)
        measured = [(run.conns, run.bytes_per_second) for run in sweep.runs]
        assert sweep.best_conns == find_plateau(measured).best  # the seed's rule on what was measured
        for run in sweep.runs:  # paced: no point carries more than 400 Mbit/s (and the intervals' edges)
            assert run.bytes_per_second < 1.1 * 50e6, (run.conns, run.bytes_per_second)
        return sweep

    # Every point carries about 400 Mbit/s, so the sweep stops after three values that do not improve on
    # one connection; a point starved of CPU carries less, and its neighbour seems to improve: then the
    # sweep is measured once more.
    def misses(sweep: Sweep) -> list[str]:
        measured = [(run.conns, run.bytes_per_second) for run in sweep.runs]
        missed = [
            f"{conns} connection(s): {rate / 1e6:.1f} MB/s (> 0.7 x 50 MB/s)"
            for conns, rate in measured
            if rate <= 0.7 * 50e6
        ]
        if [conns for conns, _ in measured] != [1, 2, 4, 6] or sweep.best_conns != 1:
            missed.append(f"stopped after {[conns for conns, _ in measured]} (1, 2, 4, 6), best {sweep.best_conns} (1)")
        if not find_plateau(measured).reached:
            missed.append("no plateau")
        return missed

    measured_within(swept, misses, "a connection sweep paced to 400 Mbit/s")


def test_buffer_sweep_runs_every_point_and_repetition(session, engine, secret_key, ssh_env):
    environment, primary, standby = ssh_env
    sweep = request_sweep(
        session,
        environment,
        primary,
        standby,
        kind="sockbuf",
        sizes="256K, 64K",
        conns_values="2",
        repetitions=2,
        duration_seconds=0.5,
    )
    assert sweep.values == [64 * 1024, 256 * 1024] and sweep.conns_values == [2]
    assert execute_next(engine, secret_key)
    sweep = reload_sweep(session, sweep)
    assert sweep.status is RunStatus.succeeded, sweep.failure_reason
    grid = [(run.sockbuf_bytes, run.conns, run.sweep_point, run.repetition) for run in sweep.runs]
    assert grid == [(65536, 2, 0, 0), (65536, 2, 0, 1), (262144, 2, 1, 0), (262144, 2, 1, 1)]
    for run in sweep.runs:  # the probe asked for the size; Linux grants double
        assert run.sndbuf_granted_bytes >= run.sockbuf_bytes
        assert "--sockbuf" in run.client_command
    points = service.sweep_points(sweep)
    for point in points:
        rates = [run.bytes_per_second for run in point["runs"]]
        assert point["result"].median == statistics.median(rates)
        assert point["result"].low == min(rates) and point["result"].count == 2
    table = service.seed_rows(sweep)
    assert [row.buffer_bytes for row in table] == [65536, 262144]
    assert table[0].parallelism == 2 and table[0].single_bytes_per_second is None


def test_cancel_stops_the_remaining_runs(session, engine, secret_key, ssh_env):
    environment, primary, standby = ssh_env
    sweep = request_sweep(session, environment, primary, standby, kind="connections", conns_max=6, duration_seconds=4)
    worker = threading.Thread(target=execute_next, args=(engine, secret_key), daemon=True)
    worker.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        session.expire_all()
        running = session.scalar(select(Run).where(Run.sweep_id == sweep.id, Run.status == RunStatus.running))
        if running is not None and running.client_command:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the sweep's first run did not start")
    service.cancel_sweep(session=session, sweep=reload_sweep(session, sweep))
    worker.join(30)
    sweep = reload_sweep(session, sweep)
    assert sweep.status is RunStatus.cancelled, sweep.failure_reason
    assert "cancelled by the user" in sweep.failure_reason
    assert [run.status for run in sweep.runs] == [RunStatus.cancelled]  # nothing ran after it
    assert sweep.runs[0].seconds is None or sweep.runs[0].seconds < 4


def test_cancel_queued_sweep(session, ssh_env):
    environment, primary, standby = ssh_env
    sweep = request_sweep(session, environment, primary, standby)
    service.cancel_sweep(session=session, sweep=sweep)
    sweep = reload_sweep(session, sweep)
    assert sweep.status is RunStatus.cancelled and sweep.runs == []


def test_a_failed_run_fails_the_sweep_and_keeps_what_ran(session, engine, secret_key, ssh_env, tmp_path):
    """The standby cannot write to a directory that does not exist: the first run fails, the
    sweep says which run and why, and runs nothing more."""
    environment, primary, standby = ssh_env
    sweep = request_sweep(
        session,
        environment,
        primary,
        standby,
        kind="sockbuf",
        sizes="64K, 128K",
        duration_seconds=0.5,
        write_dir=str(tmp_path / "missing"),
    )
    assert execute_next(engine, secret_key)
    sweep = reload_sweep(session, sweep)
    assert sweep.status is RunStatus.failed
    run = sweep.runs[0]
    assert len(sweep.runs) == 1 and run.status is RunStatus.failed
    assert f"run #{run.id} (socket buffer 64 KiB, 1 connection) failed" in sweep.failure_reason
    assert "missing" in sweep.failure_reason


def test_kernel_sweep_needs_the_admins_permission(session, ssh_env):
    """Without "may change kernel settings" nothing is stored and the commands to run by hand
    are given instead."""
    environment, primary, standby = ssh_env
    before = session.scalar(select(func.count()).select_from(Sweep))
    with pytest.raises(service.KernelChangesNotAllowed) as refused:
        request_sweep(session, environment, primary, standby, kind="kernel_max", sizes="1M, 16M")
    assert primary.name in refused.value.message and standby.name in refused.value.message
    assert (
        refused.value.commands[1]
        == "sysctl -w 'net.ipv4.tcp_rmem=4096 131072 1048576' 'net.ipv4.tcp_wmem=4096 16384 1048576'"
    )
    assert "16777216" in refused.value.commands[2]
    session.rollback()
    assert session.scalar(select(func.count()).select_from(Sweep)) == before


def test_sweep_grid_limits():
    with pytest.raises(ValueError, match="too many"):
        SweepCreate(
            client_host_id=1,
            server_host_id=2,
            kind="sockbuf",
            sizes=",".join(f"{k}K" for k in range(4, 70)),
            conns_values="1, 2",
        )
    with pytest.raises(ValueError, match="autotuning"):
        SweepCreate(client_host_id=1, server_host_id=2, kind=SweepKind.kernel_max, sizes="1M", sockbuf_bytes="1M")
    with pytest.raises(ValueError, match="not a tag"):
        SweepCreate(client_host_id=1, server_host_id=2, tags="ok, $(reboot)")


@pytest.mark.parametrize(
    "fields",
    [{"conns_values": True}, {"conns_values": 8}, {"sizes": 65536}, {"sizes": False}, {"tags": 3}],
    ids=["conns-bool", "conns-int", "sizes-int", "sizes-bool", "tags-int"],
)
def test_a_list_field_given_a_scalar_is_a_422_not_a_500(api_client, session, fields):
    """Schemathesis sent conns_values true and 8: the validator iterated them (TypeError, 500)."""
    from tests.factories import make_environment, make_host

    environment = make_environment(session)
    client = make_host(session, environment, role="primary")
    server = make_host(session, environment, role="standby")
    body = {"client_host_id": client.id, "server_host_id": server.id, "kind": "sockbuf", "sizes": "64K", **fields}
    response = api_client.post(f"/api/v1/environments/{environment.id}/sweeps", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"][-1] == next(iter(fields))


@pytest.mark.parametrize("path", ["sweeps", "clusters", "runs"])
@pytest.mark.parametrize("field", ["duration_seconds", "message_bytes"])
def test_a_blank_duration_or_message_size_is_a_422_not_a_500(api_client, session, path, field):
    """Schemathesis sent duration_seconds "" and message_bytes "" (read as not given): the run's
    arithmetic met None, a TypeError answered 500."""
    from tests.factories import make_environment, make_host

    environment = make_environment(session)
    client = make_host(session, environment, role="primary")
    server = make_host(session, environment, role="standby")
    body = {"client_host_id": client.id, "server_host_id": server.id, field: ""}
    if path == "clusters":
        body = {field: ""}
    response = api_client.post(f"/api/v1/environments/{environment.id}/{path}", json=body)
    assert response.status_code == 422, response.text
    assert any(error["loc"][-1] == field for error in response.json()["detail"]), response.text
