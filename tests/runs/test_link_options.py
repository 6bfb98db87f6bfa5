"""redoprobe's link options through redolab: the form and the API take them, the probe command
carries them, the run page shows them, and a reverse run counts for the direction it measured."""

from __future__ import annotations

from pathlib import Path

from redolab.core.db import make_sessionmaker
from redolab.runs.command import ProbeParameters, client_argv
from redolab.runs.models import RunStatus
from redolab.runs.service import measured_runs
from tests.execution import execute_next, reload, request_run
from tests.web.test_runs import local_env

HTMX = {"HX-Request": "true"}


def test_client_argv_carries_the_options():
    parameters = ProbeParameters(
        mode="async",
        conns=2,
        message_bytes=1 << 20,
        sockbuf_bytes=None,
        duration_seconds=5,
        interval_seconds=1,
        congestion="bbr",
        fq_rate_bits_per_second=1_000_000_000,
        zerocopy=True,
        reverse=True,
    )
    argv = client_argv("/p/redoprobe", parameters, server_address="10.0.0.2", port=5201)
    assert argv[-6:] == ["--congestion", "bbr", "--fq-rate", "1000000000", "--zerocopy", "--reverse"]
    plain = client_argv("/p/redoprobe", ProbeParameters("async", 1, 1 << 20, None, 5, 1), server_address="h", port=1)
    assert not {"--congestion", "--fq-rate", "--zerocopy", "--reverse"} & set(plain)


def test_the_form_refuses_what_the_probe_would(browser_client, session):
    environment, primary, standby = local_env(session)
    base = {
        "client_host_id": primary.id,
        "server_host_id": standby.id,
        "duration_seconds": "2 s",
        "interval_seconds": "1 s",
    }
    for extra, field, message in [
        ({"congestion": "bbr; reboot"}, "congestion", "is not a congestion control name"),
        ({"reverse": "on", "mode": "sync"}, "reverse", "use ASYNC mode"),
        ({"reverse": "on", "rate_bits_per_second": "1 Gbit/s"}, "reverse", "leave pacing and delay empty"),
        ({"fq_rate_bits_per_second": "-5 Mbit/s"}, "fq_rate_bits_per_second", "is not a rate"),
    ]:
        response = browser_client.post(f"/environments/{environment.id}/runs", data={**base, **extra}, headers=HTMX)
        assert response.status_code == 422, (extra, response.status_code)
        assert f'id="e-r-{field}"' in response.text and message in response.text.replace("&#39;", "'"), extra


def test_a_reverse_zerocopy_run_measures_the_other_direction(session, engine, secret_key, browser_client):
    environment, primary, standby = local_env(session)
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    # the standby is the client: in reverse the primary (server) sends, the redo direction
    run = request_run(
        session,
        environment,
        standby,
        primary,
        duration_seconds=1.5,
        interval_seconds=0.5,
        reverse=True,
        zerocopy=True,
        congestion=available[0],
        fq_rate_bits_per_second=4_000_000_000,
    )
    assert execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.succeeded, run.failure_reason
    assert run.bytes_per_second > 0
    assert "--reverse" in run.client_command and "--zerocopy" in run.client_command
    assert f"--congestion {available[0]}" in run.client_command
    page = browser_client.get(f"/runs/{run.id}")
    assert "p → s (reverse: the server sent)" in page.text
    assert f"congestion control {available[0]}" in page.text and "zero copy (sendfile)" in page.text
    assert "paced to at most 4 Gbit/s per connection" in page.text
    with make_sessionmaker(engine)() as fresh:
        measured = measured_runs(session=fresh, environment=fresh.merge(environment))
    assert [m.id for m in measured] == [run.id]  # primary -> standby, though the primary was the server
    forward = request_run(session, environment, standby, primary, duration_seconds=1, interval_seconds=0.5)
    assert execute_next(engine, secret_key)
    assert reload(session, forward).status is RunStatus.succeeded
    with make_sessionmaker(engine)() as fresh:
        ids = [m.id for m in measured_runs(session=fresh, environment=fresh.merge(environment))]
    assert forward.id not in ids  # standby -> primary: not the redo direction
