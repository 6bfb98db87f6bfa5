"""Judging a watch: each check's verdict against the requirement with its margin, and the state that
moves only when M of the last N judged checks agree (skipped checks are not verdicts)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from redolab.core.units import MIB
from redolab.watches.judge import next_state, required_for, verdict_of
from redolab.watches.models import Verdict, WatchState

OK, RISK, FAIL, SKIP = Verdict.ok, Verdict.at_risk, Verdict.failing, Verdict.skipped


def test_verdicts_at_the_boundaries():
    assert verdict_of(100 * MIB, 100 * MIB, 0.10) is RISK  # exactly the requirement: keeps up, no headroom
    assert verdict_of(100 * MIB - 1, 100 * MIB, 0.10) is FAIL
    assert verdict_of(110 * MIB, 100 * MIB, 0.10) is OK  # the margin reached
    assert verdict_of(109.9 * MIB, 100 * MIB, 0.10) is RISK
    assert verdict_of(None, 100 * MIB, 0.10) is SKIP and verdict_of(5.0, None, 0.10) is SKIP


def test_the_requirement_per_thread_for_one_pair_summed_for_all_and_the_threshold_first():
    threads = [(1, 30 * MIB), (2, 50 * MIB)]
    one = required_for(thread_required=threads, summed_required=70 * MIB, all_node_pairs=False, threshold=None)
    assert one.bytes_per_second == 50 * MIB and "thread 2" in one.basis
    every = required_for(thread_required=threads, summed_required=70 * MIB, all_node_pairs=True, threshold=None)
    assert every.bytes_per_second == 70 * MIB and "summed" in every.basis
    fixed = required_for(thread_required=threads, summed_required=70 * MIB, all_node_pairs=True, threshold=8 * MIB)
    assert fixed.bytes_per_second == 8 * MIB and "8 MiB/s" in fixed.basis
    assert required_for(thread_required=[], summed_required=None, all_node_pairs=False, threshold=None) is None


def test_two_of_three_fail_then_recover():
    state = WatchState.ok
    history: list[Verdict] = []
    states = []
    for verdict in (OK, FAIL, OK, FAIL, FAIL, SKIP, FAIL, OK, OK):
        history.append(verdict)
        state = next_state(state, history, agree_m=2, of_n=3)
        states.append(state)
    # one failure is noise; the second within three makes it FAILING; a skip changes nothing; two OKs recover
    assert states == [
        WatchState.ok,
        WatchState.ok,
        WatchState.ok,
        WatchState.failing,
        WatchState.failing,
        WatchState.failing,
        WatchState.failing,
        WatchState.failing,
        WatchState.ok,
    ]


def test_unknown_until_m_verdicts():
    assert next_state(WatchState.unknown, [SKIP, OK], agree_m=2, of_n=3) is WatchState.unknown
    assert next_state(WatchState.unknown, [OK, SKIP, OK], agree_m=2, of_n=3) is WatchState.ok


@hypothesis_settings(max_examples=300, deadline=None)
@given(
    verdicts=st.lists(st.sampled_from([OK, RISK, FAIL, SKIP]), max_size=30),
    start=st.sampled_from(list(WatchState)),
    n=st.integers(1, 6),
    m_less=st.integers(0, 5),
)
def test_a_state_change_is_backed_by_m_of_the_last_n(verdicts, start, n, m_less):
    m = max(1, n - m_less)
    new = next_state(start, verdicts, agree_m=m, of_n=n)
    window = [v for v in verdicts if v is not SKIP][-n:]
    if new is start:
        return
    backing = {WatchState.failing: {FAIL}, WatchState.at_risk: {RISK, FAIL}, WatchState.ok: {OK}}[new]
    assert sum(1 for v in window if v in backing) >= m
    # and never a milder state while M of them were failures
    if sum(1 for v in window if v is FAIL) >= m:
        assert new is WatchState.failing
    # skips never count: removing them changes nothing
    assert next_state(start, [v for v in verdicts if v is not SKIP], agree_m=m, of_n=n) is new
