"""The model's prediction for a rehearsal's window (planning.rehearsal_model: the lag replay is the
plan's), and how a measured lag is compared with it."""

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.planning.rehearsal_model import compare, predict_rehearsal
from redolab.rehearsals.window import choose_window
from tests.rehearsals.history import MIB, T0, histories, requirement_of, row


def burst_then_quiet():
    """Five minutes at 2 MiB/s, then ten at 0.5 MiB/s, in one-minute logs."""
    return [row(1, 60 * i, 60, 120 if i < 5 else 30) for i in range(15)]


def test_a_peak_above_the_drain_rate_lags_by_backlog_over_rate_and_drains_after():
    req = requirement_of(burst_then_quiet())
    window = choose_window(req, (T0, T0 + timedelta(minutes=15)))
    predicted = predict_rehearsal(req, window, drain_bytes_per_second=MIB)
    (thread,) = predicted.threads
    assert thread.thread == 1
    assert thread.max_backlog_bytes == pytest.approx(300 * MIB)  # (2 - 1) MiB/s for 300 s
    assert thread.max_lag_seconds == pytest.approx(thread.max_backlog_bytes / MIB) == pytest.approx(300)
    assert thread.max_at_seconds == pytest.approx(300)
    assert thread.drain_seconds == pytest.approx(600)  # 300 MiB at (1 - 0.5) MiB/s
    assert thread.drained and predicted.drained
    assert predicted.max_lag_seconds == pytest.approx(300) and predicted.drain_seconds == pytest.approx(600)
    assert max(lag for _, lag in predicted.lag_series) == pytest.approx(300)
    assert predicted.lag_series[0] == (0.0, 0.0) and predicted.lag_series[-1] == (900.0, 0.0)
    at = dict(predicted.lag_series)
    assert at[300.0] == pytest.approx(300) and at[900.0] == 0.0


def test_a_backlog_left_at_the_end_of_the_window_drains_in_the_quiet_after_it():
    req = requirement_of(burst_then_quiet())
    window = choose_window(req, (T0, T0 + timedelta(minutes=5)))
    predicted = predict_rehearsal(req, window, drain_bytes_per_second=MIB)
    assert predicted.max_lag_seconds == pytest.approx(300)
    assert not predicted.drained and predicted.drain_seconds == pytest.approx(300)  # at 1 MiB/s, nothing arriving
    assert predicted.lag_series[-1][1] == 0.0 and predicted.lag_series[-1][0] == pytest.approx(600)


def test_scale_and_speedup_replay_as_the_probe_does():
    req = requirement_of(burst_then_quiet())
    window = choose_window(req, (T0, T0 + timedelta(minutes=15)))
    doubled = predict_rehearsal(req, window, drain_bytes_per_second=MIB, scale=2)
    assert doubled.max_backlog_bytes == pytest.approx(900 * MIB)  # 4 MiB/s for 300 s, 1 MiB/s drained
    fast = predict_rehearsal(req, window, drain_bytes_per_second=10 * MIB, speedup=10)
    assert fast.seconds == 90 and fast.max_backlog_bytes == pytest.approx(300 * MIB)  # 20 MiB/s for 30 s
    assert fast.threads[0].max_at_seconds == pytest.approx(30) and fast.max_lag_seconds == pytest.approx(30)


def test_all_threads_add_their_backlogs_and_lag_as_the_worst_thread():
    rows = [row(t, 60 * i, 60, (120 if t == 1 else 90) if i < 5 else 30) for t in (1, 2) for i in range(15)]
    req = requirement_of(rows)
    window = choose_window(req, (T0, T0 + timedelta(minutes=15)))
    predicted = predict_rehearsal(req, window, drain_bytes_per_second=MIB)
    one, two = predicted.threads
    assert (one.thread, two.thread) == (1, 2)
    assert one.max_lag_seconds == pytest.approx(300) and two.max_lag_seconds == pytest.approx(150)
    assert predicted.max_lag_seconds == pytest.approx(300)
    assert predicted.max_backlog_bytes == pytest.approx(450 * MIB)  # both peak at minute 5
    assert predicted.drain_seconds == pytest.approx(600)  # thread 1 is the last to empty
    backlog = dict(predicted.backlog_series)
    assert backlog[300.0] == pytest.approx(450 * MIB)


@settings(max_examples=30, deadline=None)
@given(histories(), st.floats(0.05, 5))
def test_the_lag_is_always_the_backlog_over_the_drain_rate_and_always_drains(rows, drain_mib):
    req = requirement_of(rows)
    window = choose_window(req, (T0, T0 + timedelta(hours=1)))
    predicted = predict_rehearsal(req, window, drain_bytes_per_second=drain_mib * MIB)
    for thread in predicted.threads:
        assert thread.max_lag_seconds == pytest.approx(thread.max_backlog_bytes / (drain_mib * MIB))
        assert thread.lag_series[-1][1] == 0  # the quiet after the window empties every stream
        assert all(lag >= 0 for _, lag in thread.lag_series)
    assert predicted.max_lag_seconds == max(t.max_lag_seconds for t in predicted.threads)
    assert predicted.max_backlog_bytes >= max(t.max_backlog_bytes for t in predicted.threads) - 1e-6
    assert predicted.max_backlog_bytes <= sum(t.max_backlog_bytes for t in predicted.threads) + 1e-6
    offsets = [t for t, _ in predicted.lag_series]
    assert offsets == sorted(offsets) and offsets[0] == 0


def test_a_measured_lag_within_a_fifth_of_the_model_agrees():
    close = compare(11.0, 10.0)
    assert close.agrees and close.explanation == "" and close.ratio == pytest.approx(1.1)
    assert close.disagreement_ratio == pytest.approx(0.1)
    tiny = compare(0.15, 0.0)  # under a second both are no lag: compared against a second
    assert tiny.agrees and tiny.ratio is None


def test_a_disagreement_over_a_fifth_says_what_the_model_assumed():
    over = compare(15.0, 10.0, drain_bytes_per_second=MIB)
    assert not over.agrees and over.disagreement_ratio == pytest.approx(0.5)
    assert over.explanation.startswith("The link lagged more than the model: measured 15 s against a predicted 10 s")
    for assumed in ("spread evenly", "constant drain rate of 1 MiB/s per stream", "no TCP ramp-up",
                    "no per-message overhead"):  # fmt: skip
        assert assumed in over.explanation
    under = compare(5.0, 10.0)
    assert not under.agrees and under.explanation.startswith("The link lagged less than the model")
    with pytest.raises(ValueError, match="measured lag"):
        compare(-1, 10)
