"""The apply side (issue 56, item 3): transport and apply judged apart, the apply lag through the same
queue model as the transport lag, the failover time against the RTO goal, FastStartFailoverLagLimit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.planning.apply import fsfo_lag_limit, lags
from redolab.planning.plan import FAIL, MISSING, PASS, WARN, build_plan
from redolab.planning.transport import pieces_of
from tests.planning.test_plan import MIB, facts, history, run


def apply_card(**overrides):
    plan = build_plan(facts=facts(**overrides), requirement=history(), runs=[run(1, rate_mib=100)])
    return plan.card("apply"), plan


def test_transport_keeps_up_and_apply_does_not():
    card, plan = apply_card(apply_rate_bytes_per_second=30 * MIB, rto_goal_seconds=30)
    assert plan.card("transport").status == PASS  # the 10 Gbit/s link carries the 50 MiB/s summed peak
    assert card.status == FAIL
    assert card.headline.startswith("Transport keeps up; apply does not: 30 MiB/s applied against a 50 MiB/s peak")
    # 100 s at 50 MiB/s into a 30 MiB/s apply: 2,000 MiB waits, 66.7 s of apply, over the 30 s RTO goal
    assert card.values["apply_lag_seconds"] == pytest.approx(2000 / 30)
    assert card.values["apply_backlog_seconds"] == pytest.approx(2000 / 30)
    assert card.values["transport_lag_seconds"] == 0 and card.values["rto_met"] is False
    rows = dict(card.rows)
    assert rows["Worst apply lag"] == "66.67 s" and rows["RTO goal"] == "30 s", rows
    assert any("below the peak redo" in risk for risk in plan.risks)


def test_an_apply_rate_above_the_peak_passes_and_the_rto_holds():
    card, _ = apply_card(apply_rate_bytes_per_second=200 * MIB, rto_goal_seconds=600)
    assert card.status == PASS and card.values["apply_lag_seconds"] == 0 and card.values["rto_met"] is True
    within, _ = apply_card(apply_rate_bytes_per_second=55 * MIB, rto_goal_seconds=600)
    assert within.status == WARN  # keeps up with the 50 MiB/s peak, not with 30 % headroom (65 MiB/s)


def test_no_apply_rate_says_where_to_find_one():
    card, _ = apply_card()
    assert card.status == MISSING and "V$RECOVERY_PROGRESS" in card.headline
    db2, _ = apply_card(platform="hadr", transport_mode="NEARSYNC")
    assert db2.title == "Replay (standby)" and "db2pd -hadr" in db2.headline


def test_fast_start_failover_lands_the_rpo_goal_on_its_lag_limit():
    card, _ = apply_card(apply_rate_bytes_per_second=30 * MIB, fast_start_failover=True, rpo_goal_seconds=30)
    assert dict(card.rows)["FastStartFailoverLagLimit"] == "30 s (the RPO goal)"
    assert any("FastStartFailoverLagLimit = 30" in line for line in card.working)
    assert fsfo_lag_limit(2) == 5 and fsfo_lag_limit(None) is None  # the Broker's minimum is 5 s
    quick, _ = apply_card(apply_rate_bytes_per_second=60 * MIB, fast_start_failover=True, rpo_goal_seconds=5)
    assert quick.status == WARN  # keeps up, but the observer would not fail over at the worst moment


@settings(max_examples=120, deadline=None)
@given(
    rates=st.lists(st.floats(min_value=0, max_value=500e6), min_size=1, max_size=40),
    widths=st.lists(st.floats(min_value=1, max_value=3600), min_size=40, max_size=40),
    gaps=st.lists(st.booleans(), min_size=40, max_size=40),
    link=st.floats(min_value=1e6, max_value=1e9),
    apply=st.floats(min_value=1e6, max_value=1e9),
)
def test_apply_lag_is_never_below_transport_lag(rates, widths, gaps, link, apply):
    bounds = np.concatenate([[0.0], np.cumsum(widths[: len(rates)])])
    counted = np.array([not g for g in gaps[: len(rates)]])
    if not counted.any():
        counted[0] = True
    pieces = pieces_of(bounds, np.array(rates), counted)
    found = lags(pieces, link_bytes_per_second=link, apply_bytes_per_second=apply)
    assert found.apply_seconds >= found.transport_seconds - 1e-9
    assert found.apply_backlog_seconds >= 0
    if apply >= link:  # apply faster than the link: nothing waits for apply
        assert found.apply_seconds == pytest.approx(found.transport_seconds)
