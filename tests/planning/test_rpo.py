"""The link for the RPO (issue 55, items 1 and 3): known answers worked by hand, the same queue as the lag
replay, and the properties every history keeps (scaling, a larger RPO, a faster link)."""

from __future__ import annotations

import pickle
from dataclasses import fields
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.planning import rpo
from redolab.planning.facts import Capacity, Measurements
from redolab.planning.rpo_sizing import granularity_note, plan_rpo_sizing, size_for_rpo, sorted_union, summed_pieces
from redolab.planning.tiers import DEFAULT_EFFICIENCY, Efficiency
from redolab.planning.transport import as_pieces, backlog_ends, replay_lag
from redolab.runs.measured import Source

T0 = datetime(2024, 3, 1, tzinfo=UTC)
BASE, BURST, BURST_SECONDS, RPO = 1e6, 10e6, 60.0, 30.0  # bytes/s, bytes/s, seconds, seconds


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def burst_history(gap: float = 0.0):
    """An hour at 1 MB/s, a minute at 10 MB/s, an hour at 1 MB/s (after `gap` seconds without data)."""
    return [
        (at(0), at(3600), BASE),
        (at(3600), at(3660), BURST),
        (at(3660 + gap), at(7260 + gap), BASE),
    ]


def violation_by_hand(rate: float) -> float:
    """Seconds over the RPO of the burst history at `rate` (between the base and the burst rate): the
    backlog rises at (burst - rate) for the minute to W, then falls at (rate - base); redo waits longer
    than the RPO while the backlog is above rate x RPO."""
    peak = (BURST - rate) * BURST_SECONDS
    over = peak - rate * RPO
    return max(0.0, over / (BURST - rate) + over / (rate - BASE))


def share_by_hand(share: float) -> float:
    """The least rate with violation_by_hand <= (1 - share) x the history's 7,260 s, by bisection on the
    formula (the formula is the hand's; only its root is found numerically)."""
    allowed, low, high = (1 - share) * 7260, BASE * 1.0001, BURST * BURST_SECONDS / (BURST_SECONDS + RPO)
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (low, middle) if violation_by_hand(middle) <= allowed else (middle, high)
    return high


def test_the_burst_needs_its_volume_over_its_length_plus_the_rpo():
    pieces = as_pieces(burst_history())
    # the minute's 600 MB must leave within 60 s + 30 s: 6.667 MB/s; the base hours only dilute it
    exact = BURST * BURST_SECONDS / (BURST_SECONDS + RPO)
    assert rpo.least_for_every_moment(pieces, RPO) == pytest.approx(exact, rel=1e-9)
    for share in (0.999, 0.99):
        found = rpo.least_for_share(pieces, RPO, share, exact)
        assert found == pytest.approx(share_by_hand(share), rel=0.01)
        assert found == pytest.approx(share_by_hand(share), rel=2 * rpo.TOLERANCE)  # well within 1 %
        assert found < exact


def test_the_lag_at_a_rate_worked_by_hand():
    pieces = as_pieces(burst_history())
    exact = BURST * BURST_SECONDS / (BURST_SECONDS + RPO)
    held = rpo.at_rate(pieces, exact, RPO)
    assert held.worst_lag_seconds == pytest.approx(RPO)
    assert held.worst_generated_at == at(3660)  # the burst's last redo waits longest
    assert held.worst_at == at(3660 + RPO)  # the moment the oldest undelivered byte is one RPO old
    assert held.share_of_time_within_rpo == 1.0
    slower = rpo.at_rate(pieces, 5e6, RPO)
    assert slower.worst_lag_seconds == pytest.approx((BURST - 5e6) * BURST_SECONDS / 5e6)  # 60 s
    assert slower.violation_seconds == pytest.approx(violation_by_hand(5e6))
    assert slower.share_of_time_within_rpo == pytest.approx(1 - violation_by_hand(5e6) / 7260)


def test_gaps_drain_the_queue_but_are_not_time_of_the_history():
    pieces = as_pieces(burst_history(gap=86400))
    assert rpo.counted_seconds(pieces) == pytest.approx(7260)
    slower = rpo.at_rate(pieces, 5e6, RPO)
    # the burst queues 300 MB; its last 30 s wait longer than the RPO (above 5 MB/s x 30 s = 150 MB); the
    # queue then drains in the gap that follows, which is no time of the history: 30 s of 7,260 are over
    assert slower.violation_seconds == pytest.approx(30)
    assert slower.share_of_time_within_rpo == pytest.approx(1 - 30 / 7260)
    assert violation_by_hand(5e6) > 30  # without the gap the base hour keeps it queued longer


def test_the_array_queue_is_the_lag_replays_queue():
    history = [*burst_history(gap=600), (at(90000), at(90900), 3e6)]
    pieces = as_pieces(history)
    for rate in (1.5e6, 4e6, 6e6, 9e6):
        assert backlog_ends(pieces, rate).max() == pytest.approx(
            replay_lag(history, drain_bytes_per_second=rate).max_backlog_bytes, rel=1e-9
        )


def test_days_with_violations_on_the_database_clock():
    # the burst at 23:30 UTC is on the next day in Berlin (UTC+1 in March)
    history = [(at(0), at(84600), BASE), (at(84600), at(84660), BURST), (at(84660), at(88200), BASE)]
    pieces = as_pieces(history)
    utc = rpo.violation_days(pieces, 5e6, RPO, rpo.local_days(pieces, "UTC"))
    berlin = rpo.violation_days(pieces, 5e6, RPO, rpo.local_days(pieces, "Europe/Berlin"))
    assert utc[0] == berlin[0] == 1
    assert utc[1][0].day.isoformat() == "2024-03-01" and berlin[1][0].day.isoformat() == "2024-03-02"
    assert utc[1][0].violation_seconds == pytest.approx(violation_by_hand(5e6))
    assert rpo.violation_days(pieces, 9e6, RPO, rpo.local_days(pieces, "UTC")) == (0, [])


def test_the_outage_budget_at_a_constant_rate():
    pieces = as_pieces([(at(0), at(36000), 1e6)])  # 10 h at 1 MB/s
    assert rpo.fills_after(pieces, 3.6e9) == pytest.approx(3600, rel=0.005)  # 3.6 GB at 1 MB/s: an hour
    assert rpo.fills_after(pieces, 1e11) is None  # more than the whole history generates
    backlog, seconds = rpo.catch_up_seconds(pieces, 2e6, 3600)
    assert backlog == pytest.approx(3.6e9)
    assert seconds == pytest.approx(3600)  # 3.6 GB drained at 2 - 1 MB/s
    assert rpo.catch_up_seconds(pieces, 1e6, 3600)[1] is None  # a link at the redo rate never catches up


def test_an_outage_longer_than_the_history_says_so_rather_than_a_catch_up():
    pieces = as_pieces([(at(0), at(36000), 1e6)])  # 10 h at 1 MB/s
    link = Capacity(5e6, Source("environment: nominal link rate (not measured)"))
    efficiency = Efficiency(DEFAULT_EFFICIENCY, "default", False)
    common = {"rpo_seconds": RPO, "headroom_ratio": 0.3, "efficiency": efficiency, "link": link}
    inside = size_for_rpo(pieces, outage_seconds=3600, **common).outage
    assert inside.catch_up_seconds == pytest.approx(3.6e9 / (5e6 - 1e6))  # 900 s
    longer = size_for_rpo(pieces, outage_seconds=86400, **common).outage
    assert longer.catch_up_seconds is None
    assert "longer than the history (10 h" in longer.catch_up_note and "shorter outage" in longer.catch_up_note


def test_the_sizing_applies_headroom_and_efficiency_exactly():
    pieces = as_pieces(burst_history())
    efficiency = Efficiency(DEFAULT_EFFICIENCY, "default", False)
    link = Capacity(5e6, Source("environment: nominal link rate (not measured)"))
    sizing = size_for_rpo(
        pieces, rpo_seconds=RPO, headroom_ratio=0.3, efficiency=efficiency, link=link,
        tiers=(("40 Mbit/s", 40e6), ("100 Mbit/s", 100e6)), archive_free_bytes=3.6e9,
    )  # fmt: skip
    first = sizing.targets[0]
    assert first.with_headroom_bytes_per_second == first.bytes_per_second * 1.3
    assert first.bits_per_second == pytest.approx(first.bytes_per_second * 1.3 * 8 / DEFAULT_EFFICIENCY)
    document = sizing.to_json()
    assert [t["share_of_time"] for t in document["targets"]] == [1.0, 0.999, 0.99]
    assert document["granularity_seconds"] == 3600 and document["rpo_seconds"] == RPO
    assert document["at_link"]["worst_lag_seconds"] == pytest.approx(60)
    small, large = document["tiers"]  # 40 Mbit/s carries 4.7 MB/s of redo: the burst breaks the RPO
    assert small["days_with_violations"] == 1 and small["share_of_time_within_rpo"] < 1
    assert large["days_with_violations"] == 0 and large["share_of_time_within_rpo"] == 1
    assert document["outage"]["rpo_lost_after_seconds"] == RPO
    assert document["outage"]["archive_full_after_seconds"] is not None
    assert "60-minute granularity: bursts inside a snapshot are not seen" in document["granularity_note"]
    assert granularity_note(60) is None and "15-minute granularity" in granularity_note(900)


# -- properties ---------------------------------------------------------------------------------------
pieces_strategy = st.lists(
    st.tuples(
        st.sampled_from([0, 0, 0, 30, 3600]),  # the gap before the piece, seconds
        st.integers(min_value=1, max_value=900),  # its length, seconds
        st.floats(min_value=0, max_value=1e7, allow_nan=False),  # its rate, bytes/s
    ),
    min_size=1,
    max_size=40,
).filter(lambda pieces: any(rate > 1 for _, _, rate in pieces))


def history_of(rows, scale: float = 1.0):
    found, clock = [], 0.0
    for gap, length, rate in rows:
        clock += gap
        found.append((at(clock), at(clock + length), rate * scale))
        clock += length
    return found


def figures(history, rpo_seconds: float) -> list[float]:
    pieces = as_pieces(history)
    every = rpo.least_for_every_moment(pieces, rpo_seconds)
    return [every, *(rpo.least_for_share(pieces, rpo_seconds, share, every) for share in rpo.SHARES[1:])]


@settings(max_examples=100, deadline=None)
@given(pieces_strategy, st.floats(min_value=1, max_value=600), st.sampled_from([0.25, 3.0, 1000.0]))
def test_scaling_a_history_scales_every_bandwidth_figure(rows, rpo_seconds, k):
    original, scaled = figures(history_of(rows), rpo_seconds), figures(history_of(rows, k), rpo_seconds)
    assert scaled[0] == pytest.approx(k * original[0], rel=1e-9)
    for a, b in zip(original[1:], scaled[1:], strict=True):
        assert b == pytest.approx(k * a, rel=2 * rpo.TOLERANCE)


@settings(max_examples=100, deadline=None)
@given(pieces_strategy, st.floats(min_value=1, max_value=600), st.floats(min_value=1, max_value=600))
def test_a_larger_rpo_never_needs_more_bandwidth(rows, first, second):
    small, large = sorted((first, second))
    history = history_of(rows)
    for tight, loose in zip(figures(history, small), figures(history, large), strict=True):
        assert loose <= tight * (1 + 2 * rpo.TOLERANCE)


@settings(max_examples=100, deadline=None)
@given(pieces_strategy, st.floats(min_value=1, max_value=600), st.floats(min_value=1e3, max_value=2e7),
       st.floats(min_value=1e3, max_value=2e7))  # fmt: skip
def test_the_share_within_the_rpo_never_falls_as_bandwidth_grows(rows, rpo_seconds, first, second):
    slow, fast = sorted((first, second))
    pieces = as_pieces(history_of(rows))
    low, high = rpo.at_rate(pieces, slow, rpo_seconds), rpo.at_rate(pieces, fast, rpo_seconds)
    assert high.share_of_time_within_rpo >= low.share_of_time_within_rpo - 1e-12
    assert high.worst_lag_seconds <= low.worst_lag_seconds * (1 + 1e-9) + 1e-9


@settings(max_examples=100, deadline=None)
@given(pieces_strategy, st.floats(min_value=1e3, max_value=2e7))
def test_the_array_queue_agrees_with_the_lag_replay_on_any_history(rows, rate):
    history = history_of(rows)
    replayed = replay_lag(history, drain_bytes_per_second=rate).max_backlog_bytes
    assert backlog_ends(as_pieces(history), rate).max() == pytest.approx(replayed, rel=1e-9, abs=1e-3)


@settings(max_examples=100, deadline=None)
@given(pieces_strategy, st.floats(min_value=1, max_value=600))
def test_the_least_rate_for_every_moment_holds_and_one_percent_less_does_not(rows, rpo_seconds):
    pieces = as_pieces(history_of(rows))
    every = rpo.least_for_every_moment(pieces, rpo_seconds)
    assert rpo.at_rate(pieces, every, rpo_seconds).worst_lag_seconds <= rpo_seconds * (1 + 1e-9)
    assert rpo.at_rate(pieces, every * 0.99, rpo_seconds).worst_lag_seconds > rpo_seconds


# -- from the requirement: the summed series and each thread's own stream ------------------------------
@settings(max_examples=100, deadline=None)
@given(pieces_strategy, st.floats(min_value=1, max_value=600), st.floats(min_value=1, max_value=3))
def test_at_or_above_the_peak_nothing_waits_as_the_queue_says(rows, rpo_seconds, above):
    """drained() answers 0 without draining at or above the highest rate: the queue's own answer."""
    pieces = as_pieces(history_of(rows))
    rate = pieces.peak_rate * above
    ends, over = rpo.drained(pieces, rate, rpo_seconds)
    assert ends.tolist() == backlog_ends(pieces, rate).tolist() == [0.0] * len(pieces.rates)
    assert over.tolist() == [0.0] * len(pieces.rates)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(min_value=0, max_value=50), max_size=30), min_size=1, max_size=6))
def test_the_union_of_the_threads_cuts_is_np_unique(parts):
    sorted_parts = [np.sort(np.array(p, dtype=float)) for p in parts]
    runs = [np.concatenate((a, a)) for a in sorted_parts] + sorted_parts  # two sorted runs, as a thread with gaps
    assert sorted_union(runs).tolist() == np.unique(np.concatenate(runs)).tolist()


@settings(max_examples=100, deadline=None)
@given(pieces_strategy)
def test_a_stored_threads_series_reads_back_as_it_was(rows):
    """Stored, a thread's series is pickled as arrays and its times made again when first read."""
    from redolab.redo.requirement import Basis, ThreadNeed
    from redolab.redo.stored import StoredThreadNeed, stored_need

    history = history_of(rows)
    basis = Basis("per-log rate", ("a.csv",), None, None, None)
    need = ThreadNeed(1, 1.0, None, 1.3, basis, history, basis)
    kept = pickle.loads(pickle.dumps(stored_need(need)))  # noqa: S301 (our own bytes, just written)
    assert isinstance(kept, StoredThreadNeed) and "replay" not in kept.__dict__
    assert kept.timed and "replay" not in kept.__dict__  # answered from the arrays
    assert kept.replay == history and all(t.tzinfo is UTC for s, e, _ in kept.replay for t in (s, e))
    same = [f.name for f in fields(ThreadNeed) if f.compare]  # all but the arrays
    assert [getattr(kept, name) for name in same] == [getattr(need, name) for name in same]


def test_the_summed_series_is_the_requirements_and_survives_storing():
    from redolab.redo.stored import requirement_blob, unpickled_requirement
    from tests.planning.test_plan import history

    requirement = history()
    own = as_pieces(sorted(p for span in requirement.spans for p in span.segments))
    stored = unpickled_requirement(requirement_blob(requirement))
    for kept in (requirement, stored):  # the stored requirement keeps the threads, not the sum
        rebuilt = summed_pieces(kept)
        assert rebuilt.origin == own.origin
        assert rebuilt.bounds.tolist() == pytest.approx(own.bounds.tolist())
        assert rebuilt.rates.tolist() == pytest.approx(own.rates.tolist())
        assert rpo.least_for_every_moment(rebuilt, RPO) == pytest.approx(rpo.least_for_every_moment(own, RPO))


def test_a_thread_one_stream_cannot_carry_says_so_and_why():
    from tests.planning.test_plan import facts, history, run

    requirement = history()  # thread 1 peaks at 40 MiB/s for 100 s
    measured = Measurements.of(facts(rpo_goal_seconds=RPO), [run(1, node=1, rate_mib=20), run(2, node=2, rate_mib=20)])
    sizing = plan_rpo_sizing(facts(rpo_goal_seconds=RPO), requirement, measured)
    one, two = sizing.threads
    assert not one.holds and "no larger link fixes it" in one.why and "thread 1 alone needs" in one.why
    assert one.needed_bytes_per_second == pytest.approx(4000 * 2**20 / (100 + RPO), rel=0.01)  # its 100 s burst
    assert two.holds and two.why == ""  # 10 MiB/s through a 20 MiB/s stream
    assert sizing.to_json()["threads"][0]["holds_rpo"] is False
    assert sizing.at_link.bytes_per_second == pytest.approx(20 * 2**20)  # the best aggregate run, as the card judges


def test_lag_figures_from_coarse_pieces_say_their_granularity():
    from redolab.planning.plan import build_plan
    from redolab.redo.requirement import ImportSeries, requirement
    from tests.planning.test_plan import facts, log

    coarse = requirement(
        [ImportSeries(1, "awr.csv", [log(1, n, 900 * n, 900, 900) for n in range(8)])], headroom_ratio=0.3
    )
    lag = build_plan(facts=facts(primary_nodes=1), requirement=coarse, runs=[]).card("lag")
    assert "at 15-minute granularity: bursts inside a snapshot are not seen" in lag.headline
    assert any("import V$ARCHIVED_LOG or AWR SYSMETRIC history" in value for _, value in lag.rows)
    fine = requirement([ImportSeries(1, "a.csv", [log(1, n, 60 * n, 60, 60) for n in range(8)])], headroom_ratio=0.3)
    assert "granularity" not in build_plan(facts=facts(primary_nodes=1), requirement=fine, runs=[]).card("lag").headline


@settings(max_examples=100, deadline=None)
@given(pieces_strategy, st.floats(min_value=1, max_value=600))
def test_the_rate_for_every_moment_is_the_exact_maximum_over_every_stretch(rows, rpo_seconds):
    pieces = as_pieces(history_of(rows))
    bounds, generated = pieces.bounds, pieces.generated
    exact = max(
        (generated[j] - generated[i]) / (bounds[j] - bounds[i] + rpo_seconds)
        for i in range(len(bounds))
        for j in range(i + 1, len(bounds))
    )  # by brute force: every stretch between two bounds (a stretch's best ends lie on bounds)
    assert rpo.least_for_every_moment(pieces, rpo_seconds) == pytest.approx(exact, rel=1e-9)
