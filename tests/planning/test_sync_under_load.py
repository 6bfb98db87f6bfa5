"""SYNC under load (issue 59, item 4): the commit card sets one SYNC connection's acknowledgement p50
and p99 on an idle path beside those under a load on the same path (runs.loaded); the runs are queued
together on the same hosts."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from redolab.jobs.models import Job
from redolab.planning.commit import ack_under_load
from redolab.planning.facts import Measurements
from redolab.planning.plan import build_plan
from redolab.runs import loaded
from redolab.runs.models import Run
from redolab.runs.parsers.redoprobe import RunMetrics
from redolab.runs.schemas import RunCreate
from tests.factories import make_environment, make_host
from tests.planning.test_plan import facts, history, run


def sync(id, p50, p99, *tags, **overrides):
    metrics = RunMetrics(0.02, 1000, p50, 0.5, ack_p50_seconds=p50, ack_p99_seconds=p99)
    return run(id, mode="sync", message_bytes=8192, metrics=metrics, tags=tags, sync_write=True, **overrides)


def test_the_card_sets_idle_beside_under_load():
    runs = [sync(1, 0.0201, 0.0209), sync(2, 0.0205, 0.0312, loaded.UNDER_LOAD, "load-run:3"), run(3, conns=4), run(4)]
    plan = build_plan(facts=facts(transport_mode="SYNC"), requirement=history(), runs=runs)
    card = plan.card("commit")
    row = dict(card.rows)["SYNC acknowledgement idle / under load"]
    assert row.startswith("p50 20.1 ms / 20.5 ms; p99 20.9 ms / 31.2 ms (+10.3 ms at p99) per 8 KiB message")
    assert row.endswith("idle run #1, under load run #2, loaded by run #3")
    assert card.values["ack_under_load"]["loaded_ack_p99_seconds"] == 0.0312


def test_without_both_runs_there_is_no_comparison():
    alone = Measurements.of(facts(), [sync(2, 0.02, 0.03, loaded.UNDER_LOAD)])
    assert ack_under_load(alone) is None
    assert ack_under_load(Measurements.of(facts(), [sync(1, 0.02, 0.021)])) is None
    both = ack_under_load(Measurements.of(facts(), [sync(1, 0.02, 0.021), sync(2, 0.02, 0.03, loaded.UNDER_LOAD)]))
    assert both.added_p99_seconds == pytest.approx(0.009) and both.load_run is None


def test_the_sync_run_and_its_load_are_queued_together_on_the_same_hosts(session):
    environment = make_environment(session, name="loaded")
    client = make_host(session, environment, role="primary", name="p1")
    server = make_host(session, environment, role="standby", name="s1")
    sync_in = RunCreate(client_host_id=client.id, server_host_id=server.id, mode="sync", message_bytes=8192,
                        duration_seconds=4, interval_seconds=1, label="commits")  # fmt: skip
    made, load = loaded.create_sync_under_load(
        session=session, environment=environment, sync_in=sync_in, load_conns=4, requested_by="alice"
    )
    assert (load.mode, load.conns, load.duration_seconds, load.message_bytes) == ("async", 4, 6.0, 1024 * 1024)
    assert (made.server_host_name, load.server_host_name) == ("s1", "s1")
    assert loaded.load_run_id(session.get(Run, made.id).tags) == load.id and loaded.UNDER_LOAD in made.tags
    groups = {
        job.run_id: job.together for job in session.scalars(select(Job).where(Job.run_id.in_([made.id, load.id])))
    }
    assert groups[made.id] == groups[load.id] is not None and groups[made.id].startswith("load:")
    with pytest.raises(Exception, match="one SYNC connection"):
        loaded.create_sync_under_load(session=session, environment=environment,
                                      sync_in=sync_in.model_copy(update={"conns": 2}), load_conns=4,
                                      requested_by="alice")  # fmt: skip


def test_the_api_queues_both_and_keeps_the_bounds(api_client, session):
    environment = make_environment(session, name="loaded api")
    client = make_host(session, environment, role="primary", name="p2")
    server = make_host(session, environment, role="standby", name="s2")
    url = f"/api/v1/environments/{environment.id}/runs/under-load"
    pair = {"client_host_id": client.id, "server_host_id": server.id, "duration_seconds": "5 s"}
    assert api_client.post(url, json={**pair, "load_conns": 65}).status_code == 422
    too_long = api_client.post(url, json={**pair, "duration_seconds": 3599})
    assert too_long.status_code == 422 and "59 min 58 s" in too_long.text
    response = api_client.post(url, json={**pair, "load_conns": 8})
    assert response.status_code == 201
    sync_run, load_run = response.json()["data"]
    assert (sync_run["mode"], sync_run["conns"], sync_run["message_bytes"]) == ("sync", 1, 8192)
    assert (load_run["mode"], load_run["conns"]) == ("async", 8) and loaded.UNDER_LOAD in sync_run["tags"]


def test_the_cdf_sets_both_runs_from_their_stored_histograms(session):
    import json

    from redolab.charts.plan import ack_cdf_figure
    from redolab.runs.models import RunEvent

    environment = make_environment(session, name="cdf")
    client = make_host(session, environment, role="primary", name="p3")
    server = make_host(session, environment, role="standby", name="s3")
    made, _ = loaded.create_sync_under_load(
        session=session,
        environment=environment,
        sync_in=RunCreate(client_host_id=client.id, server_host_id=server.id, mode="sync", duration_seconds=6),
        load_conns=2,
        requested_by="alice",
    )
    buckets = [{"from_us": 16384, "to_us": 32768, "count": 90}, {"from_us": 262144, "to_us": 524288, "count": 10}]
    end = {"event": "end", "data": {"ack_latency_us": {"histogram": buckets}}}
    session.add(RunEvent(run_id=made.id, seq=1, role="client", event="end", line=json.dumps(end)))
    session.commit()
    assert loaded.ack_histogram(session, made.id) == buckets
    assert loaded.ack_histogram(session, made.id + 1000) == []
    figure = json.loads(ack_cdf_figure([("idle", buckets[:1]), ("under load", buckets)]))
    idle, under = figure["data"]
    assert idle["y"] == [100.0] and under["y"] == [90.0, 100.0]
    assert under["x"] == [32.768, 524.288] and figure["layout"]["xaxis"]["type"] == "log"
