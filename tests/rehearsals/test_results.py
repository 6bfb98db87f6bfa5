"""A rehearsal's measured figures from its runs' probe lines, also when a run stopped before its end
event (cancelled, failed): the lag and bytes its intervals reported still count."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.rehearsals.results import RunReplay, measured


def interval(end: float, lag: float, generated: int, received: int, backlog: int) -> str:
    data = {
        "start_seconds": end - 1, "end_seconds": end, "bytes": received, "bytes_per_second": received,
        "streams": [], "bytes_generated": generated, "bytes_sent": generated, "bytes_received": received,
        "backlog_bytes": backlog, "lag_seconds": lag,
    }  # fmt: skip
    return json.dumps({"event": "interval", "data": data})


def end(max_lag: float, received: int) -> str:
    data = {"seconds": 2.0, "bytes_sent": received, "bytes_received": received, "max_lag_seconds": max_lag,
            "drained": True, "drain_seconds": 0.5, "streams": []}  # fmt: skip
    return json.dumps({"event": "end", "data": data})


INTERVALS = [interval(1, 0.5, 100, 50, 50), interval(2, 1.25, 100, 100, 50)]


def test_a_run_stopped_before_its_end_keeps_its_intervals_lag_and_bytes():
    result = measured([RunReplay(1, [1], INTERVALS)])
    assert result["max_lag_seconds"] == 1.25  # was 0: read from the end event only
    assert result["bytes_received"] == 150 and result["bytes_generated"] == 200
    assert result["drained"] is False and result["drain_seconds"] is None


def test_the_end_events_maximum_counts_when_it_is_larger_than_any_interval_end():
    """The probe keeps the maximum between interval ends; an interval's lag is its end's."""
    result = measured([RunReplay(1, [1], [*INTERVALS, end(3.5, 200)])])
    assert result["max_lag_seconds"] == 3.5 and result["bytes_received"] == 200 and result["drained"] is True


def test_two_runs_one_stopped_sum_their_bytes_and_take_the_larger_lag():
    finished = [interval(1, 0.2, 100, 100, 0), interval(2, 0.1, 100, 100, 0), end(0.4, 200)]
    result = measured([RunReplay(1, [1], finished), RunReplay(2, [2], INTERVALS)])
    assert result["max_lag_seconds"] == 1.25 and result["bytes_received"] == 350 and result["drained"] is False


def test_node_pairs_the_slower_drains_later_its_tail_is_in_the_series():
    """Two node pairs at once: the pair that drains later reports more intervals; the chart's series
    runs to its end (its peak is drawn, as the headline says), the other pair's totals held."""
    quick = [interval(1, 0.2, 100, 100, 0), end(0.2, 100)]
    slow = [interval(1, 0.5, 100, 50, 50), interval(2, 1.5, 100, 50, 100), interval(3, 0.0, 0, 100, 0),
            end(1.5, 200)]  # fmt: skip
    result = measured([RunReplay(1, [1], quick), RunReplay(2, [2], slow)])
    series = result["series"]
    assert series["end_seconds"] == [1, 2, 3]
    assert max(series["lag_seconds"]) == result["max_lag_seconds"] == 1.5
    assert series["received_bytes"] == [150, 200, 300] and series["generated_bytes"] == [200, 300, 300]
    assert series["backlog_bytes"] == [50, 100, 0]


def test_a_day_is_stored_thinned_with_its_peaks_and_its_figures_from_every_interval():
    """A finished rehearsal keeps its series for the chart: a day of one-second intervals is thinned to
    about two thousand moments (the lag's and the backlog's peaks among them) and says how many there
    were; the figures were computed from every interval before."""
    from redolab.rehearsals.results import STORED_POINTS, stored

    day = [interval(s, 300.0 if s == 1234 else 0.25, 100, 100, 900 if s == 50_000 else 1) for s in range(1, 86_401)]
    result = measured([RunReplay(1, [1], [*day, end(300.0, 8_640_000)])])
    kept = stored(result)
    series = kept["series"]
    assert kept["series_intervals"] == 86_400 and len(series["end_seconds"]) <= 2 * (STORED_POINTS + 2)
    assert max(series["lag_seconds"]) == 300.0 and max(series["backlog_bytes"]) == 900
    assert series["received_bytes"][-1] == 8_640_000  # the cumulative total's last moment kept
    assert {k: v for k, v in kept.items() if k not in ("series", "series_intervals")} == {
        k: v for k, v in result.items() if k != "series"
    }
    short = measured([RunReplay(1, [1], INTERVALS)])
    assert stored(short) is short  # nothing to thin


def start(schedule_seconds: float) -> str:
    """A replay's start event: its part of the schedule generates its last byte at `schedule_seconds`."""
    data = {"schedule": "part", "schedule_bytes": 100, "schedule_seconds": schedule_seconds, "speedup": 1.0}
    return json.dumps({"event": "start", "data": data})


def ended(drain: float | None, max_backlog: int = 0, max_backlog_at: float = 0.0, streams: list | None = None) -> str:
    data = {"seconds": 2.0, "bytes_sent": 100, "bytes_received": 100, "max_lag_seconds": 0.5,
            "max_backlog_bytes": max_backlog, "max_backlog_at_seconds": max_backlog_at,
            "drained": drain is not None, "drain_seconds": drain, "streams": streams or []}  # fmt: skip
    return json.dumps({"event": "end", "data": data})


DONE = interval(1, 0.0, 100, 100, 0)


def test_node_pairs_drain_from_the_schedules_last_byte_not_each_parts_own():
    """Thread 1's part ends at 3599 s and drains 1 s later; thread 2's ends at 1800 s and drains by 2400 s
    (600 s after its own last byte). The schedule's last byte was released at 3599 s and every byte was
    in by 3600 s: the rehearsal drained in 1 s (was 600 s, the largest of the runs' own drains)."""
    late = [start(3599.0), DONE, ended(1.0)]
    early = [start(1800.0), DONE, ended(600.0)]
    result = measured([RunReplay(1, [1], late), RunReplay(2, [2], early)])
    assert result["drained"] is True and result["drain_seconds"] == 1.0
    # the early part still in flight after the late one drained: its end counts, from 3599 s
    slow = measured([RunReplay(1, [1], late), RunReplay(2, [2], [start(1800.0), DONE, ended(1900.0)])])
    assert slow["drain_seconds"] == 101.0  # all in at 3700 s
    undrained = measured([RunReplay(1, [1], late), RunReplay(2, [2], [start(1800.0), DONE, ended(None)])])
    assert undrained["drained"] is False and undrained["drain_seconds"] is None


def test_one_run_drains_as_its_probe_says():
    result = measured([RunReplay(1, [1, 2], [start(60.0), DONE, ended(2.5)])])
    assert result["drain_seconds"] == 2.5


MIB = 1 << 20


def test_two_threads_bursting_together_mid_interval_count_the_runs_summed_peak():
    """One pair carries two threads; both burst mid-interval (100 MiB each) and are back to 0 by the
    interval's end. The probe's end event holds the summed peak, 200 MiB at 1.5 s: reported (was 100 MiB,
    the larger thread's own peak)."""
    streams = [{"id": 0, "max_backlog_bytes": 100 * MIB}, {"id": 1, "max_backlog_bytes": 100 * MIB}]
    lines = [start(2.0), interval(1, 0.1, 10, 10, 0), interval(2, 0.1, 10, 10, 0), ended(0.2, 200 * MIB, 1.5, streams)]
    result = measured([RunReplay(1, [1, 2], lines)])
    assert result["max_backlog_bytes"] == 200 * MIB and result["max_backlog_at_seconds"] == 1.5


def test_runs_peaks_at_different_moments_are_not_added():
    """Two pairs peak at 150 and 120 bytes at different moments: the rehearsal's figure is the larger run
    peak or interval-end sum (a lower bound), not 270 bytes that no moment had."""
    first = [start(3.0), interval(1, 0.1, 100, 50, 50), interval(2, 0.1, 100, 100, 0), ended(0.1, 150, 0.5)]
    second = [start(3.0), interval(1, 0.1, 100, 40, 60), interval(2, 0.1, 100, 100, 0), ended(0.1, 120, 1.5)]
    result = measured([RunReplay(1, [1], first), RunReplay(2, [2], second)])
    assert result["max_backlog_bytes"] == 150 and result["max_backlog_at_seconds"] == 0.5
    both = [start(3.0), interval(1, 0.1, 100, 0, 100), ended(0.1, 100, 1.0)]
    summed = measured([RunReplay(1, [1], both), RunReplay(2, [2], [start(3.0), interval(1, 0.1, 100, 0, 100)])])
    assert summed["max_backlog_bytes"] == 200 and summed["max_backlog_at_seconds"] == 1  # the interval-end sum


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda runs: st.integers(0, 30).flatmap(
            lambda n: st.lists(
                st.lists(st.one_of(st.integers(0, 2**62), st.floats(0, 1e15)), min_size=n, max_size=n),
                min_size=runs,
                max_size=runs,
            )
        )
    )
)
def test_runs_combined_pairwise_are_what_sum_and_max_make_of_them(columns):
    """The summed series (a live poll's, 86,400 intervals a run) combined run after run, not interval by
    interval: the same numbers, to the bit and the type, as sum() and max() over each interval's."""
    import operator

    from redolab.rehearsals.results import _across

    count = len(columns[0])
    added = _across(columns, operator.add)
    expected = [sum(column[i] for column in columns) for i in range(count)]
    assert [(type(v), v) for v in added] == [(type(v), v) for v in expected]
    assert _across(columns, max) == [max(column[i] for column in columns) for i in range(count)]
