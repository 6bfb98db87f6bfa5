"""A rehearsal's measured figures from its runs' probe lines, also when a run stopped before its end
event (cancelled, failed): the lag and bytes its intervals reported still count."""

from __future__ import annotations

import json

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
