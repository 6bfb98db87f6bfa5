"""Verdicts, the ASYNC lag replay and the SYNC commit model, on hand-computed cases."""

from datetime import UTC, datetime, timedelta

import pytest

from redolab.planning.transport import commit_impact, replay_lag, transport_verdict

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MIB = 1024 * 1024


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_verdict_pass_and_fail_with_margins():
    ok = transport_verdict(subject="t1", peak_bytes_per_second=100, headroom_ratio=0.3, available_bytes_per_second=150)
    assert ok.required_bytes_per_second == pytest.approx(130)
    assert ok.passed and ok.margin_bytes_per_second == pytest.approx(20)
    assert ok.margin_percent == pytest.approx(20 / 130 * 100)
    short = transport_verdict(
        subject="t1", peak_bytes_per_second=100, headroom_ratio=0.3, available_bytes_per_second=120
    )
    assert not short.passed and short.margin_bytes_per_second == pytest.approx(-10)


def test_lag_grows_while_redo_outruns_the_link_then_drains():
    # 100 s at 30 MiB/s through a 10 MiB/s stream: 2,000 MiB queued (200 s of lag), then 10 minutes
    # of 5 MiB/s: the backlog drains at 5 MiB/s net, empty after 400 s.
    segments = [(at(0), at(100), 30 * MIB), (at(100), at(700), 5 * MIB)]
    replay = replay_lag(segments, drain_bytes_per_second=10 * MIB)
    assert replay.max_backlog_bytes == pytest.approx(2000 * MIB)
    assert replay.max_lag_seconds == pytest.approx(200)
    assert replay.max_at == at(100)
    assert replay.drain_seconds == pytest.approx(400)
    assert replay.drained
    assert replay.lagging_seconds == pytest.approx(500)
    assert max(lag for _, lag in replay.series) == pytest.approx(200)


def test_gaps_between_logs_drain_the_backlog():
    segments = [(at(0), at(10), 20 * MIB), (at(1000), at(1010), 20 * MIB)]
    replay = replay_lag(segments, drain_bytes_per_second=10 * MIB)
    # 100 MiB queued after each burst; the gap of 990 s drains it in 10 s; the second burst is no worse.
    assert replay.max_backlog_bytes == pytest.approx(100 * MIB)
    assert replay.max_at == at(10)
    assert replay.drain_seconds == pytest.approx(10)


def test_history_that_ends_behind_is_not_drained():
    replay = replay_lag([(at(0), at(60), 50 * MIB)], drain_bytes_per_second=10 * MIB)
    assert replay.max_lag_seconds == pytest.approx(240)
    assert replay.drain_seconds is None and not replay.drained


def test_a_stream_that_keeps_up_never_lags():
    replay = replay_lag([(at(0), at(60), 5 * MIB), (at(60), at(120), 9.9 * MIB)], drain_bytes_per_second=10 * MIB)
    assert replay.max_backlog_bytes == 0 and replay.max_at is None and replay.drained


def test_lag_series_is_thinned_but_keeps_the_peak():
    segments = []
    for i in range(5000):  # alternate bursts and quiet logs
        rate = (15 if i % 2 else 5) * MIB
        segments.append((at(i * 10), at(i * 10 + 10), rate + (i == 2501) * 100 * MIB))
    replay = replay_lag(segments, drain_bytes_per_second=10 * MIB, max_points=300)
    assert len(replay.series) < 2 * 300
    assert max(lag for _, lag in replay.series) == pytest.approx(replay.max_lag_seconds)


def test_commit_model_per_mode():
    # 16 KiB writes, 1 ms disk write, 100 MiB/s stream (send 0.15625 ms), 10 ms RTT.
    impact = commit_impact(
        write_bytes=16384, write_seconds=0.001, throughput_bytes_per_second=100 * MIB, rtt_seconds=0.010
    )
    send = 16384 / (100 * MIB)
    assert impact.modes["SYNC"] == pytest.approx(2 * 0.001 + send + 0.010)
    assert impact.modes["NEARSYNC"] == pytest.approx(send + 0.010)
    assert impact.modes["ASYNC"] == pytest.approx(0.001)
    assert impact.added_seconds("ASYNC") == pytest.approx(0)
    assert impact.added_seconds("SYNC") == pytest.approx(0.001 + send + 0.010)
    assert impact.ceiling_bytes_per_second("SYNC") == pytest.approx(16384 / impact.modes["SYNC"])


def test_latency_not_bandwidth_dominates_sync():
    # Seed 002: ten times the bandwidth barely changes a SYNC commit over a 20 ms link.
    slow = commit_impact(write_bytes=8192, write_seconds=0.0005, throughput_bytes_per_second=50 * MIB, rtt_seconds=0.02)
    fast = commit_impact(
        write_bytes=8192, write_seconds=0.0005, throughput_bytes_per_second=500 * MIB, rtt_seconds=0.02
    )
    assert fast.modes["SYNC"] / slow.modes["SYNC"] > 0.99
    near = commit_impact(
        write_bytes=8192, write_seconds=0.0005, throughput_bytes_per_second=50 * MIB, rtt_seconds=0.002
    )
    assert near.modes["SYNC"] < slow.modes["SYNC"] / 5


def test_replay_with_redo_arriving_exactly_as_fast_as_it_drains_keeps_the_backlog():
    """A burst, then redo at exactly the drain rate (a hypothesis case of the report found a division
    by zero there): the backlog neither grows nor drains until the rate drops."""
    segments = [(at(0), at(60), 20 * MIB), (at(60), at(120), 10 * MIB), (at(120), at(180), 0.0)]
    replay = replay_lag(segments, drain_bytes_per_second=10 * MIB)
    assert replay.max_backlog_bytes == 600 * MIB
    assert replay.lagging_seconds == 60 + 60 + 60  # the burst, the plateau, then 600 MiB at 10 MiB/s
    assert replay.drain_seconds == 120
