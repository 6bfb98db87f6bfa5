"""The plan assembled from facts, a redo analysis and measured runs (no database)."""

from datetime import UTC, datetime, timedelta

import pytest

from redolab.planning.plan import FAIL, INFO, MISSING, PARTIAL, PASS, WARN, Facts, build_plan
from redolab.planning.settings import recommended_snippets
from redolab.redo.requirement import ImportSeries, requirement
from redolab.redo.schemas import RedoInterval
from redolab.runs.measured import MeasuredRun
from redolab.runs.parsers.redoprobe import RunMetrics

MIB = 1024 * 1024
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def facts(**overrides) -> Facts:
    values = dict(
        platform="dataguard",
        transport_mode="ASYNC",
        database_bytes=10 * 1024**4,
        primary_nodes=2,
        standby_nodes=2,
        instantiation_goal_seconds=24 * 3600,
        headroom_percent=30,
        apply_overhead_percent=30,
        link_bits_per_second=10e9,
        link_rtt_seconds=0.010,
        data_interface="ens3",
    )
    return Facts(**{**values, **overrides})


def log(thread, sequence, start_s, seconds, mib, writes=None):
    start = T0 + timedelta(seconds=start_s)
    return RedoInterval(
        line=sequence,
        thread=thread,
        start=start,
        end=start + timedelta(seconds=seconds),
        seconds=None,
        bytes=mib * MIB,
        kind="log",
        sequence=sequence,
        writes=writes,
    )


def history():
    """Thread 1 peaks at 40 MiB/s for 100 s; thread 2 runs at 10 MiB/s throughout."""
    logs = [log(1, 1, 0, 600, 600), log(1, 2, 600, 100, 4000), log(1, 3, 700, 600, 600)]
    logs += [log(2, 1, 0, 650, 6500), log(2, 2, 650, 650, 6500)]
    return requirement([ImportSeries(1, "arch.csv", logs)], headroom_ratio=0.3)


def run(id, node=1, mode="async", conns=1, rate_mib=100.0, **overrides):
    values = dict(
        id=id,
        label="",
        client_node=node,
        server_node=node,
        mode=mode,
        conns=conns,
        message_bytes=128 * 1024,
        bytes_per_second=rate_mib * MIB,
        sync_write=False,
        loopback=False,
        mtu_bytes=1500,
        metrics=RunMetrics(rtt_min_seconds=0.0102, ack_count=0, ack_avg_seconds=None, server_write_seconds=None),
        created_at=T0 + timedelta(days=1, minutes=id),
    )
    return MeasuredRun(**{**values, **overrides})


def test_nothing_measured_says_what_is_missing():
    plan = build_plan(facts=facts(link_bits_per_second=None, link_rtt_seconds=None), requirement=None, runs=[])
    assert {c.status for c in plan.cards} == {MISSING}
    assert "no redo history" in plan.card("transport").missing[0]
    assert any("connection sweep" in m for m in plan.card("instantiation").missing)
    assert plan.snippets == []
    json = plan.to_json()
    assert json["cards"]["buffers"]["missing"] and json["settings"] == []


def test_transport_verdict_per_thread_and_summed():
    runs = [run(1, node=1, rate_mib=60), run(2, node=2, rate_mib=12), run(3, node=1, conns=4, rate_mib=70)]
    plan = build_plan(facts=facts(), requirement=history(), runs=runs)
    card = plan.card("transport")
    threads = {t["thread"]: t for t in card.values["threads"]}
    # thread 1 peaks at 40 MiB/s: needs 52, run #1 gives 60; thread 2 needs 13, run #2 gives 12.
    assert threads[1]["required_bytes_per_second"] == pytest.approx(52 * MIB)
    assert threads[1]["passed"] and threads[1]["run_id"] == 1
    assert not threads[2]["passed"]
    assert threads[2]["margin_bytes_per_second"] == pytest.approx(-1 * MIB)
    # summed peak 50 MiB/s -> 65 required; the best aggregate run (#3, 70 MiB/s) carries it.
    assert card.values["summed"]["passed"] and card.values["summed"]["run_id"] == 3
    assert card.status == FAIL
    assert any("Thread 2" in r and "fall behind" in r for r in plan.risks)
    assert {s.url for s in card.sources} >= {"/runs/1", "/runs/2", "/runs/3"}
    assert "import #1 (arch.csv)" in {s.label for s in card.sources}


def test_a_thread_without_its_own_run_is_named_missing():
    plan = build_plan(facts=facts(link_bits_per_second=None), requirement=history(), runs=[run(1, node=1, rate_mib=70)])
    card = plan.card("transport")
    assert card.status == PARTIAL  # what was measured passes, but thread 2 has no verdict
    assert card.headline.startswith("Partly measured: keeps up")
    assert any("primary node 2" in m for m in card.missing)


def test_instantiation_uses_slowest_measured_pair_and_compares_with_goal():
    runs = [run(1, node=1, conns=8, rate_mib=300), run(2, node=2, conns=8, rate_mib=200)]
    plan = build_plan(facts=facts(), requirement=None, runs=runs)
    card = plan.card("instantiation")
    expected_copy = 10 * 1024**4 / (200 * MIB * 2)
    assert card.values["copy_seconds"] == pytest.approx(expected_copy)
    assert card.values["total_seconds"] == pytest.approx(expected_copy * 1.3)
    assert card.status == PASS  # 9.1 h copy, 11.8 h total: within 24 h
    slow = build_plan(facts=facts(instantiation_goal_seconds=3600), requirement=None, runs=runs)
    assert slow.card("instantiation").status == FAIL
    assert any("Instantiation" in r for r in slow.risks)


def test_instantiation_is_capped_by_the_link():
    runs = [run(1, node=1, conns=8, rate_mib=1000)]
    plan = build_plan(facts=facts(link_bits_per_second=1e9), requirement=None, runs=runs)
    card = plan.card("instantiation")
    assert card.values["throughput_per_pair_bytes_per_second"] == pytest.approx(1e9 / 8 / 2)
    assert any("capped" in w for w in card.working)


def test_single_connection_runs_only_ask_for_a_sweep():
    plan = build_plan(facts=facts(instantiation_goal_seconds=None), requirement=None, runs=[run(1)])
    card = plan.card("instantiation")
    assert card.status == INFO and not card.missing  # the estimate stands; a sweep would only shorten it
    assert any("only single-connection runs" in w for w in card.working)


def test_buffers_from_environment_or_from_runs():
    plan = build_plan(facts=facts(link_bits_per_second=1e9, link_rtt_seconds=0.025), requirement=None, runs=[])
    assert plan.card("buffers").values["socket_buffer_bytes"] == 9_375_000
    measured = build_plan(
        facts=facts(link_bits_per_second=None, link_rtt_seconds=None),
        requirement=None,
        runs=[run(1, rate_mib=100), run(2, conns=4, rate_mib=200)],
    )
    values = measured.card("buffers").values
    assert values["bandwidth_bits_per_second"] == pytest.approx(200 * MIB * 8)
    assert values["rtt_seconds"] == pytest.approx(0.0102)
    assert values["measured_window_bytes"] == round(100 * MIB * 0.0102)
    oracle_net = measured.snippets[2].text
    assert "TCP.NODELAY=YES" in oracle_net and "# not set: RECV_BUF_SIZE" in oracle_net  # no run beat autotuning


def test_lag_replay_per_thread():
    runs = [run(1, node=1, rate_mib=20), run(2, node=2, rate_mib=12)]
    plan = build_plan(facts=facts(), requirement=history(), runs=runs)
    card = plan.card("lag")
    threads = {t["thread"]: t for t in card.values["threads"]}
    # thread 1: 100 s at 40 MiB/s through 20 MiB/s -> 2,000 MiB queued = 100 s of lag, then the
    # 1 MiB/s log drains it at 19 MiB/s net: 105.3 s.
    assert threads[1]["max_lag_seconds"] == pytest.approx(100)
    assert threads[1]["drain_seconds"] == pytest.approx(2000 / 19)
    assert threads[2]["max_lag_seconds"] == 0
    # thread 2 never queues at its 10 MiB/s logs, but 12 MiB/s is short of its 13 MiB/s requirement
    assert threads[1]["state"] == "behind" and threads[2]["state"] == "short"
    assert card.status == WARN
    assert card.lag_series[1]


def test_commit_impact_needs_a_standby_write_measurement():
    runs = [run(1)]
    assert plan_status(runs, "commit") == MISSING
    no_messages = run(
        3,
        mode="sync",
        sync_write=True,
        metrics=RunMetrics(rtt_min_seconds=0.01, ack_count=0, ack_avg_seconds=None, server_write_seconds=0.5),
    )
    assert plan_status([*runs, no_messages], "commit") == MISSING  # no acknowledged write: no write time
    sync = run(
        2,
        mode="sync",
        sync_write=True,
        message_bytes=16384,
        created_at=T0 + timedelta(days=2),
        metrics=RunMetrics(rtt_min_seconds=0.0101, ack_count=1000, ack_avg_seconds=0.0125, server_write_seconds=2.0),
    )
    plan = build_plan(facts=facts(transport_mode="SYNC"), requirement=history(), runs=[*runs, sync])
    card = plan.card("commit")
    assert card.values["write_seconds"] == pytest.approx(0.002)
    assert card.values["write_bytes"] == 16384  # no AWR write counts: the message size stands in
    sync_mode = card.values["modes"]["SYNC"]
    assert sync_mode["commit_seconds"] == pytest.approx(2 * 0.002 + 16384 / (100 * MIB) + 0.010)
    assert card.values["environment_mode"] == "SYNC"
    # one writer at ~14.2 ms per 16 KiB write reaches ~1.1 MiB/s, below the 50 MiB/s peak
    assert card.status == FAIL and any("tops out" in r for r in plan.risks)


def plan_status(runs, key):
    return build_plan(facts=facts(), requirement=history(), runs=runs).card(key).status


def test_loopback_runs_are_a_risk():
    plan = build_plan(facts=facts(), requirement=None, runs=[run(1, loopback=True)])
    assert any("loopback" in r for r in plan.risks)


def test_snippets_follow_the_platform_and_the_queue_rule():
    oracle = recommended_snippets(platform="dataguard", socket_buffer_bytes=9_375_000, bdp_bytes=3_125_000)
    text = "\n".join(s.text for s in oracle)
    assert "net.core.rmem_max = 9375000" in text and "net.ipv4.tcp_rmem = 4096 87380 9375000" in text
    assert "TCP.NODELAY=YES" in text and "\nRECV_BUF_SIZE=" not in text  # the sockets autotune up to the maximum
    assert "DB2_HADR" not in text and "mtu 9000" not in text
    assert "txqueuelen 3000" in text  # 2,084 packets of 1500 bytes, rounded up to thousands
    db2 = recommended_snippets(
        platform="hadr", socket_buffer_bytes=58672, bdp_bytes=20000, interface="eth1", avg_redo_write_bytes=20000
    )
    text = "\n".join(s.text for s in db2)
    assert "DB2_HADR_SOSNDBUF=58672" in text and "RECV_BUF_SIZE" not in text
    assert "ip link set dev eth1 mtu 9000" in text
    assert "txqueuelen 1000" in text  # never below the default
    assert all(line.why for s in db2 for line in s.lines)


def test_ack_percentiles_from_the_probe_histogram():
    from redolab.runs.parsers.redoprobe import histogram_percentile

    buckets = [{"from_us": 100, "to_us": 200, "count": 50}, {"from_us": 200, "to_us": 400, "count": 50}]
    assert histogram_percentile(buckets, 50) == pytest.approx(200)
    assert histogram_percentile(buckets, 75) == pytest.approx(300)
    assert histogram_percentile(buckets, 99, low=120, high=350) == pytest.approx(350)  # kept within the max
    assert histogram_percentile([], 50) is None
