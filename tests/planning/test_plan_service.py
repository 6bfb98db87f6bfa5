"""The plan from stored data: a redo import and real probe runs on "This machine", through the
API, the environment page and `redolab plan show`."""

import json
import os
import re
from pathlib import Path

import pytest

from redolab.core.config import get_settings
from redolab.planning.service import Selection, environment_plan
from redolab.redo import service as redo_service
from redolab.runs.models import RunStatus
from redolab.runs.parsers.redoprobe import run_metrics
from redolab.runs.service import run_lines
from tests.cli_runner import invoke
from tests.execution import captured_lines, execute_captured, execute_next, reload, request_run, write_captured
from tests.factories import make_environment, make_host

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"


# The three runs on this machine: a file name for their captured output, and what is requested.
RUNS = {
    "one-stream": {"conns": 1, "label": "one stream"},
    "two-streams": {"conns": 2, "label": "two streams"},
    "sync-write": {"mode": "sync", "message_bytes": 64 * 1024, "sync_write": True, "label": "sync write"},
}
CAPTURED = Path(__file__).parents[1] / "fixtures" / "probe_output" / "plan_on_this_machine"
RECAPTURE = os.environ.get("RECAPTURE_PROBE_OUTPUT") == "1"  # see tests/fixtures/probe_output/README


def requested(session, tmp_path):
    """An environment with the GV$ARCHIVED_LOG fixture imported and three runs on this machine, queued."""
    environment = make_environment(
        session,
        platform="dataguard",
        transport_mode="SYNC",
        database_size_bytes=2 * 1024**4,
        instantiation_goal_seconds=48 * 3600,
        link_rtt_seconds=0.025,
    )
    primary = make_host(session, environment, role="primary", name="here-p", transport="local")
    standby = make_host(session, environment, role="standby", name="here-s", transport="local")
    redo_service.import_file(
        session=session,
        environment=environment,
        path=FIXTURES / "gv_archived_log.csv",
        filename="gv_archived_log.csv",
        imported_by="alice",
    )
    # "This machine" writes only under REDOLAB_LOCAL_WRITE_ROOT (runs.queueing)
    write_dir = get_settings().resolved_local_write_root / f"standby-redo-{tmp_path.name}"
    write_dir.mkdir(parents=True, exist_ok=True)
    runs = []
    for fields in RUNS.values():
        if fields.get("sync_write"):
            fields = {**fields, "write_dir": str(write_dir)}
        runs.append(
            request_run(session, environment, primary, standby, **{"rate_bits_per_second": None, **fields})
        )  # as captured
    return environment, runs


def succeeded(session, runs):
    runs = [reload(session, run) for run in runs]
    assert [run.status for run in runs] == [RunStatus.succeeded] * 3, [run.failure_reason for run in runs]
    return runs


@pytest.fixture
def measured(session, engine, secret_key, tmp_path):
    """The environment and its three runs on this machine, executed by the worker as always but with
    the probes printing the output they printed when captured (tests/execution.py: execute_captured)."""
    environment, runs = requested(session, tmp_path)
    for name in RUNS:
        client, server = (CAPTURED / f"{name}.{role}.jsonl" for role in ("client", "server"))
        assert execute_captured(engine, secret_key, client, server)
    return environment, succeeded(session, runs)


@pytest.fixture
def measured_for_real(session, engine, secret_key, tmp_path):
    """The same three runs, measured by the real probe (with RECAPTURE_PROBE_OUTPUT=1, their output
    becomes the captured output the other tests use)."""
    environment, runs = requested(session, tmp_path)
    for _ in runs:
        assert execute_next(engine, secret_key)
    runs = succeeded(session, runs)
    if RECAPTURE:
        for name, run in zip(RUNS, runs, strict=True):
            for role, command in (("client", run.client_command), ("server", run.server_command)):
                lines = run_lines(session=session, run=run, role=role)
                write_captured(CAPTURED / f"{name}.{role}.jsonl", command, lines)
    return environment, runs


def shape(value):
    """What a probe line is made of, without its numbers: the keys, recursively."""
    if isinstance(value, dict):
        return tuple(sorted((key, shape(item)) for key, item in value.items()))
    if isinstance(value, list):
        return tuple(sorted({shape(item) for item in value}))
    return None


def event_shapes(lines: list[str]) -> set:
    return {(event["event"], shape(event["data"])) for event in map(json.loads, lines)}


def test_loopback_runs_are_evidence_but_not_the_link_by_default(session, measured):
    environment, runs = measured
    plan = environment_plan(session=session, environment=environment)
    notes = {e.id: e for e in plan.evidence if e.kind == "run"}
    assert all(not notes[r.id].chosen and "not the link" in notes[r.id].note for r in runs)
    assert not any(s.url and s.url.startswith("/runs/") for c in plan.cards for s in c.sources)
    assert plan.card("commit").status == "missing"  # the SYNC run on loopback is not used
    # the environment has no nominal link rate: thread verdicts wait for a run over the link
    assert plan.card("transport").status == "missing"
    nothing = environment_plan(
        session=session, environment=environment, selection=Selection.parse(chosen=True, imports=[], runs=[])
    )
    assert nothing.card("transport").headline == (
        "Missing: no redo import is chosen: tick one in the evidence list (or use the default evidence)"
    )
    assert not any(e.chosen for e in nothing.evidence)


def test_plan_is_computed_from_the_stored_runs_and_import(session, measured_for_real):
    """The real probe runs, once per database; the other tests read the same runs' captured output,
    which must still be what the probe prints: the same events with the same fields."""
    environment, (single, double, sync) = measured_for_real
    for name, run in zip(RUNS, (single, double, sync), strict=True):
        for role in ("client", "server"):
            _, captured = captured_lines(CAPTURED / f"{name}.{role}.jsonl")
            assert event_shapes(run_lines(session=session, run=run, role=role)) == event_shapes(captured), (
                f"the {role} of '{name}' prints other events or fields than captured: capture again "
                "(tests/fixtures/probe_output/README)"
            )
    chosen = Selection(runs=frozenset(r.id for r in (single, double, sync)))  # loopback: only when named
    plan = environment_plan(session=session, environment=environment, selection=chosen)
    transport = plan.card("transport")
    thread1 = next(t for t in transport.values["threads"] if t["thread"] == 1)
    assert thread1["run_id"] == single.id
    assert thread1["available_bytes_per_second"] == pytest.approx(single.bytes_per_second)
    assert any("primary node 2" in m for m in transport.missing)  # the fixture has two threads, one node here
    best = max(single, double, key=lambda r: r.bytes_per_second)
    assert transport.values["summed"]["run_id"] == best.id

    commit = plan.card("commit")
    metrics = run_metrics(run_lines(session=session, run=sync, role="client"))
    assert metrics.ack_count > 0 and metrics.server_write_seconds > 0
    assert commit.values["write_seconds"] == pytest.approx(metrics.server_write_seconds / metrics.ack_count)
    assert commit.values["environment_mode"] == "SYNC"
    assert commit.values["rtt_seconds"] == pytest.approx(0.025)  # the environment's RTT wins over loopback

    buffers = plan.card("buffers")
    assert buffers.values["bandwidth_bits_per_second"] == pytest.approx(best.bytes_per_second * 8)
    assert buffers.values["socket_buffer_bytes"] == 3 * buffers.values["bdp_bytes"]
    instantiation = plan.card("instantiation")
    assert instantiation.values["copy_seconds"] == pytest.approx(2 * 1024**4 / best.bytes_per_second)
    assert plan.card("lag").values["threads"][0]["run_id"] == single.id
    assert any("loopback" in risk for risk in plan.risks)
    kernel = plan.snippets[0].text
    assert re.search(rf"net.ipv4.tcp_rmem = \d+ \d+ {buffers.values['socket_buffer_bytes']}\b", kernel), kernel
    assert "# not set: RECV_BUF_SIZE" in plan.snippets[2].text  # loopback runs are no evidence for explicit buffers


def test_plan_api_page_and_cli_agree(session, measured, api_client, browser_client, tmp_path, database_url):
    environment, runs = measured
    query = "&".join(f"run={r.id}" for r in runs)
    response = api_client.get(f"/api/v1/environments/{environment.id}/plan?{query}")
    assert response.status_code == 200
    body = response.json()
    assert set(body["cards"]) == {"transport", "instantiation", "buffers", "lag", "commit", "rehearsal", "apply"}
    socket_buffer = body["cards"]["buffers"]["values"]["socket_buffer_bytes"]
    # one answer to "what must the link carry": the redo analytics and the plan's requirement agree
    analytics = api_client.get(f"/api/v1/environments/{environment.id}/redo/analytics").json()
    summed = body["requirement"]["summed"]
    assert analytics["required_bytes_per_second"] == pytest.approx(summed["required_bytes_per_second"])
    assert [t["required_bytes_per_second"] for t in analytics["threads"]] == pytest.approx(
        [t["required_bytes_per_second"] for t in body["requirement"]["threads"]]
    )
    assert analytics["summed"]["peak_bytes_per_second"] == pytest.approx(summed["peak_bytes_per_second"])
    assert {s["url"] for s in body["cards"]["transport"]["sources"]} >= {f"/runs/{runs[0].id}"}

    page = browser_client.get(f"/environments/{environment.id}?{query}")
    assert page.status_code == 200
    for key in body["cards"]:
        assert f'id="plan-{key}"' in page.text
    assert re.search(rf"net.ipv4.tcp_rmem = \d+ \d+ {socket_buffer}\b", page.text) and "TCP.NODELAY=YES" in page.text
    assert "never behind" in page.text and 'id="lag-chart"' not in page.text  # loopback outruns every log

    result = invoke(
        tmp_path,
        "plan",
        "show",
        "--env",
        environment.name,
        "--json",
        *[f"--run={r.id}" for r in runs],
        REDOLAB_DATABASE_URL=database_url,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["cards"]["buffers"]["values"]["socket_buffer_bytes"] == socket_buffer


def test_plan_of_an_unknown_environment_is_404(api_client):
    assert api_client.get("/api/v1/environments/999999/plan").status_code == 404


def stored_run(session, environment, client, server, *, conns, bytes_per_second):
    """A finished run as the worker leaves it (summary columns), without its events."""
    from redolab.runs.models import ProbeMode, Run

    run = Run(
        environment_id=environment.id,
        client_host_id=client.id,
        server_host_id=server.id,
        client_host_name=client.name,
        server_host_name=server.name,
        mode=ProbeMode.async_,
        conns=conns,
        message_bytes=1024 * 1024,
        duration_seconds=60,
        interval_seconds=1,
        status=RunStatus.succeeded,
        requested_by="alice",
        bytes_per_second=bytes_per_second,
    )
    session.add(run)
    session.commit()
    return run


def test_the_seeds_worked_examples_on_the_page(session, browser_client, tmp_path, database_url):
    """Seed 000 (100 TB, 2 node pairs at 300 MB/s; its archived logs: the highest log + 30 %), seed 001
    (2.02 MB/s x 27.7 ms) and seed 003 (1 Gbit/s, 25 ms) as an environment page and `redolab plan show
    --json` show them."""
    mib = 1024 * 1024
    environment = make_environment(
        session,
        database_size_bytes=100 * 1024**4,
        primary_rac_nodes=2,
        standby_rac_nodes=2,
        apply_overhead_percent=30,
        link_rtt_seconds=0.0277,
    )
    hosts = {
        (role, node): make_host(session, environment, role=role, node_number=node, name=f"{role}{node}")
        for role in ("primary", "standby")
        for node in (1, 2)
    }
    for node in (1, 2):
        stored_run(
            session, environment, hosts["primary", node], hosts["standby", node], conns=8, bytes_per_second=300 * mib
        )
    stored_run(session, environment, hosts["primary", 1], hosts["standby", 1], conns=1, bytes_per_second=2.02 * mib)

    redo_service.import_file(
        session=session,
        environment=environment,
        path=FIXTURES / "seed000.csv",
        filename="seed000.csv",
        imported_by="alice",
    )
    page = browser_client.get(f"/environments/{environment.id}").text
    assert "48.55 h" in page and "63.11 h" in page  # seed 000: "about 50 hours", then +30 %
    assert "58,672 bytes" in page  # seed 001: the single stream's window
    # seed 000: "the highest rate was about 52MB/s ... the maximum rate plus 30%": thread 2's 54.67 MiB/s log
    assert "54.67 MiB/s" in page and "71.07 MiB/s" in page
    result = invoke(tmp_path, "plan", "show", "--env", environment.name, "--json", REDOLAB_DATABASE_URL=database_url)
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["requirement"]["summed"]["required_bytes_per_second"] == pytest.approx(54.672887 * 1.3 * mib, rel=1e-6)
    assert body["cards"]["instantiation"]["values"]["copy_seconds"] == pytest.approx(100 * 1024**4 / (600 * mib))
    assert body["cards"]["buffers"]["values"]["measured_window_bytes"] == 58_672
    text = invoke(tmp_path, "plan", "show", "--env", environment.name, REDOLAB_DATABASE_URL=database_url).stdout
    assert "all threads: 71.07 MiB/s (peak 54.67 MiB/s; " in text and "per-log rate from import #" in text
    assert "[x] import #" in text and "seed000.csv" in text

    environment.link_bandwidth_bits_per_second, environment.link_rtt_seconds = 10**9, 0.025
    session.commit()
    page = browser_client.get(f"/environments/{environment.id}").text
    assert "3,125,000 bytes" in page and "9,375,000 bytes" in page  # seed 003


def test_sync_numbers_on_the_run_page_and_in_exports(session, measured, browser_client):
    """A SYNC run with a standby write directory: p50/p95/p99 acknowledgement latency and the standby
    write time per message on its page, in the CSV and JSON exports and in the plan's SYNC card."""
    import csv
    import io

    from redolab.core.units import format_duration

    environment, (single, double, sync) = measured
    metrics = run_metrics(run_lines(session=session, run=sync, role="client"))
    assert 0 < metrics.ack_p50_seconds <= metrics.ack_p95_seconds <= metrics.ack_p99_seconds
    assert metrics.write_seconds_per_message == pytest.approx(metrics.server_write_seconds / metrics.ack_count)
    page = browser_client.get(f"/runs/{sync.id}").text
    for value in (metrics.ack_p50_seconds, metrics.ack_p95_seconds, metrics.ack_p99_seconds):
        assert format_duration(value) in page
    assert format_duration(metrics.write_seconds_per_message) in page

    exported = browser_client.get(f"/environments/{environment.id}/runs/export.csv").text
    rows = {int(r["id"]): r for r in csv.DictReader(io.StringIO(exported))}
    assert float(rows[sync.id]["ack_p99_seconds"]) == pytest.approx(metrics.ack_p99_seconds)
    assert float(rows[sync.id]["standby_write_seconds_per_message"]) == pytest.approx(metrics.write_seconds_per_message)
    assert rows[single.id]["ack_p50_seconds"] == ""  # an ASYNC run has no acknowledgements
    document = browser_client.get(f"/environments/{environment.id}/runs/export.json").json()
    numbers = next(r["sync"] for r in document["runs"] if r["id"] == sync.id)
    assert numbers["ack_p95_seconds"] == pytest.approx(metrics.ack_p95_seconds)

    chosen = Selection(runs=frozenset(r.id for r in (single, double, sync)))
    commit = environment_plan(session=session, environment=environment, selection=chosen).card("commit")
    assert commit.values["ack_p99_seconds"] == pytest.approx(metrics.ack_p99_seconds)
    assert any("ceiling = " in line for line in commit.working)


def test_the_report_without_chromium_is_a_clear_503_and_the_json_still_works(
    session, browser_client, monkeypatch, request
):
    environment = make_environment(session, link_bandwidth_bits_per_second=10**9, link_rtt_seconds=0.025)
    monkeypatch.setenv("REDOLAB_CHROMIUM", "/nonexistent/chromium")
    # Settings read while the variable is set would keep the dead path for this worker's later tests
    request.addfinalizer(get_settings.cache_clear)
    response = browser_client.get(f"/environments/{environment.id}/plan/report.pdf")
    assert response.status_code == 503
    assert "/nonexistent/chromium" in response.text and "REDOLAB_CHROMIUM" in response.text
    report = browser_client.get(f"/environments/{environment.id}/plan/report.json").json()
    assert report["title"] == f"Standby build plan: {environment.name}" and report["redolab_version"]
    assert report["cards"]["buffers"]["values"]["socket_buffer_bytes"] == 9_375_000
    page = browser_client.get(f"/environments/{environment.id}/plan/report")
    assert page.status_code == 200 and "9,375,000 bytes" in page.text


def test_a_load_run_is_shown_but_left_out_of_the_link_by_default(session):
    """A run tagged `load` (the ASYNC streams beside a SYNC run under load) shared its path: by default the
    plan lists it and leaves it out, and a card it would fill says why; ticked out of the tags, it counts."""
    environment = make_environment(session, platform="dataguard", transport_mode="ASYNC", link_rtt_seconds=0.025)
    primary = make_host(session, environment, role="primary", name="p1")
    standby = make_host(session, environment, role="standby", name="s1")
    redo_service.import_file(session=session, environment=environment, path=FIXTURES / "gv_archived_log.csv",
                             filename="gv_archived_log.csv", imported_by="alice")  # fmt: skip
    load = stored_run(session, environment, primary, standby, conns=2, bytes_per_second=50 * 1024**2)
    load.tags = ["load"]
    session.commit()
    plan = environment_plan(session=session, environment=environment)
    (item,) = [e for e in plan.evidence if e.kind == "run"]
    assert not item.chosen and item.note.startswith("left out: tagged load (a load beside a SYNC run")
    transport = plan.card("transport")
    said = " ".join([transport.headline, *transport.missing, *(value for _, value in transport.rows)])
    assert f"1 ASYNC run (#{load.id}) exists but is left out: tagged load (a load beside a SYNC run" in said
    assert "untick load under 'Leave out runs tagged'" in said
    # the form sends the complete choice: with the load tag unticked the run counts as any ASYNC run
    chosen = Selection.parse(chosen=True, imports=[i.id for i in redo_service.list_imports(
        session=session, environment=environment)], runs=[load.id], exclude_tags=[])  # fmt: skip
    used = environment_plan(session=session, environment=environment, selection=chosen)
    assert [e.chosen for e in used.evidence if e.kind == "run"] == [True]
    default = Selection.parse(chosen=False, imports=[], runs=[])
    assert default.exclude_tags == {"load"} and default.query == "" and default == Selection()
    assert Selection.parse(chosen=True, imports=[], runs=[], exclude_tags=["load"]).query == "chosen=1&exclude_tag=load"
    assert Selection.parse(chosen=True, imports=[], runs=[], exclude_tags=["x"]).exclude_tags == {"x"}
