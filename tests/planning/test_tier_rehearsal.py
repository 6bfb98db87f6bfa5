"""A rehearsal capped at a link tier (issue 55, item 6): the model's worst lag for the replayed window
is rpo.at_rate's (the what-if's queue) at the tier's payload per connection, the card lists each tier
rehearsed with measured beside predicted and whether the RPO held, and the report prints it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.planning import rpo
from redolab.planning.plan import build_plan
from redolab.planning.rehearsal_model import predict_rehearsal, replayed_series
from redolab.planning.tier_rehearsal import TierDrain, tier_lag
from redolab.planning.tiers import DEFAULT_EFFICIENCY, efficiency
from redolab.planning.transport import as_pieces
from redolab.rehearsals.window import choose_window
from tests.planning.test_plan import facts
from tests.planning.test_rehearsal_card import fact, history
from tests.planning.test_requirement import row
from tests.rehearsals.history import histories, requirement_of

MBIT = 10**6
MIB = 1024 * 1024


def capped(fact_id: int, bits: int, *, max_lag: float, drained: bool = True, threads=(1,), label=None):
    """A finished rehearsal of the worst hour capped at `bits` (the fixture's window is that hour)."""
    base = fact(max_lag=max_lag, drained=drained)
    return replace(
        base,
        id=fact_id,
        threads=threads,
        cap_bits_per_second=bits,
        cap_label=label if label is not None else f"{bits // MBIT} Mbit/s",
    )


def test_the_prediction_is_rpo_at_rate_on_the_windows_pieces_at_the_tiers_payload():
    # the worst hour: 6,000 MiB a 10-minute log = 10 MiB/s (83.9 Mbit/s); the 50 Mbit/s tier carries
    # 50e6 x 0.9415 / 8 = 5.61 MiB/s of redo: the hour queues 3,600 x (10 - 5.61) MiB, 2,815 s behind
    req = history(worst_mib=6000)
    window = capped(8, 50 * MBIT, max_lag=2800.0).window()
    drain = TierDrain("50 Mbit/s", 50 * MBIT, 1, efficiency(None, None))
    assert drain.bytes_per_second == 50 * MBIT * DEFAULT_EFFICIENCY / 8
    lag = tier_lag(req, window, drain, rpo_seconds=30.0)
    pieces = as_pieces(replayed_series(req, window, 1))
    expected = rpo.at_rate(pieces, 50 * MBIT * DEFAULT_EFFICIENCY / 8, 30.0)
    assert lag.worst_lag_seconds == expected.worst_lag_seconds
    assert lag.worst_lag_seconds == pytest.approx(3600 * (10 * MIB - drain.bytes_per_second) / drain.bytes_per_second)
    assert lag.worst_lag_seconds == pytest.approx(2815.2, abs=0.1)
    # the lag replay the rest of the card draws (transport.replay_lag) gives the same queue
    same = predict_rehearsal(req, window, drain_bytes_per_second=drain.bytes_per_second)
    assert same.max_lag_seconds == pytest.approx(lag.worst_lag_seconds, rel=1e-9)


def test_two_threads_share_the_tier_one_queue_each_at_half_of_it():
    rows = [row(t, 600 * n, 600, (3000 if t == 1 else 1500) if 6 <= n < 12 else 60) for t in (1, 2) for n in range(18)]
    req = requirement_of(rows)
    window = choose_window(req, "worst-60m", zone="UTC")
    drain = TierDrain("100 Mbit/s", 100 * MBIT, 2, efficiency(None, None))
    assert drain.share_bits_per_second == 100 * MBIT * 1500 // 1538 // 2  # paced in IP bytes (rehearsals.pacing)
    lag = tier_lag(req, window, drain, rpo_seconds=30.0)
    per_thread = {
        t: rpo.at_rate(as_pieces(replayed_series(req, window, t)), 50 * MBIT * DEFAULT_EFFICIENCY / 8, 30.0)
        for t in (1, 2)
    }
    assert dict(lag.threads) == per_thread
    # each connection's half carries 5.61 MiB/s of redo: thread 1's 5 MiB/s and thread 2's 2.5 keep up
    assert lag.worst_lag_seconds == max(a.worst_lag_seconds for a in per_thread.values()) == 0
    # at 50 Mbit/s shared by two, thread 1's 5 MiB/s queues on its 2.81 MiB/s half: it is the worst
    slower = tier_lag(req, window, TierDrain("50 Mbit/s", 50 * MBIT, 2, efficiency(None, None)), rpo_seconds=30.0)
    assert slower.worst_thread == 1 and slower.worst_lag_seconds > 30


@settings(max_examples=40, deadline=None)
@given(rows=histories(max_threads=2), mbit=st.integers(1, 200))
def test_the_tier_prediction_and_the_lag_replay_agree_for_every_history(rows, mbit):
    req = requirement_of(rows)
    try:
        window = choose_window(req, "worst-15m", zone="UTC")
    except Exception:
        return  # no window in this history: nothing to predict
    drain = TierDrain("", mbit * MBIT, len(window.threads), efficiency(None, None))
    lag = tier_lag(req, window, drain, rpo_seconds=30.0)
    replayed = predict_rehearsal(req, window, drain_bytes_per_second=drain.bytes_per_second)
    assert lag.worst_lag_seconds == pytest.approx(replayed.max_lag_seconds, rel=1e-6, abs=1e-6)


def plan_with_tiers(rehearsals, goal=30.0):
    return build_plan(
        facts=facts(rpo_goal_seconds=goal, link_bits_per_second=10e9),
        requirement=history(worst_mib=6000),
        runs=[],
        rehearsals=list(rehearsals),
    )


def test_the_card_shows_each_tier_measured_beside_predicted_and_whether_the_rpo_held():
    below = capped(8, 50 * MBIT, max_lag=2790.0)  # queued first: the tier below
    tier = capped(9, 100 * MBIT, max_lag=0.4)  # the tier asked for: the newest, the card's own
    card = plan_with_tiers([below, tier]).card("rehearsal")
    rows = dict(card.rows)
    at_tier = rows["At the 100 Mbit/s tier (rehearsal #9)"]
    assert at_tier.startswith("measured worst lag 400 ms, predicted 0 s (the 100 Mbit/s tier, one connection: ")
    assert "MiB/s of redo at 94.1 % efficiency" in at_tier and at_tier.endswith("the 30 s RPO held")
    at_below = rows["At the 50 Mbit/s tier (rehearsal #8)"]
    assert at_below.startswith("measured worst lag 46.5 min, predicted 46.92 min (the 50 Mbit/s tier, one connection")
    assert "5.61 MiB/s of redo" in at_below
    assert at_below.endswith("the 30 s RPO broke")
    assert list(rows).index("At the 100 Mbit/s tier (rehearsal #9)") < list(rows).index(
        "At the 50 Mbit/s tier (rehearsal #8)"
    )
    # the card judges the tier asked for (the newest), not the tier below, which is meant to break
    assert card.status == "pass" and card.headline.startswith("Within the 30 s RPO goal")
    # the main prediction drains at the tier's payload too (not at the nominal 10 Gbit/s link)
    assert "the 100 Mbit/s tier" in rows["Model's prediction, same window"]
    tiers = {t["rehearsal_id"]: t for t in card.values["tiers"]}
    assert tiers[8]["rpo_held"] is False and tiers[9]["rpo_held"] is True
    assert tiers[8]["predicted_worst_lag_seconds"] == pytest.approx(2815.2, abs=0.1)
    assert tiers[8]["measured_worst_lag_seconds"] == 2790.0
    assert tiers[9]["per_connection_payload_bytes_per_second"] == 100 * MBIT * DEFAULT_EFFICIENCY / 8


def test_a_tier_not_drained_broke_the_rpo_and_the_model_is_said_when_it_disagrees():
    lost = capped(8, 100 * MBIT, max_lag=12.0, drained=False)
    rows = dict(plan_with_tiers([lost]).card("rehearsal").rows)
    said = rows["At the 100 Mbit/s tier (rehearsal #8)"]
    assert said.startswith("measured: the backlog had not drained when the replay stopped (worst lag 12 s by then)")
    assert said.endswith("the 30 s RPO broke (the model said it would hold)")


def test_without_a_goal_the_tier_is_shown_unjudged():
    rows = dict(plan_with_tiers([capped(8, 100 * MBIT, max_lag=0.4)], goal=None).card("rehearsal").rows)
    assert rows["At the 100 Mbit/s tier (rehearsal #8)"].endswith("no RPO goal to judge")
