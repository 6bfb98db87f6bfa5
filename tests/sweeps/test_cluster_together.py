"""What a cluster's pairs carried at once (clusters.together): the bytes each received over the span
they all ran, placed on the wall clock by the moments their interval lines arrived. Pairs that started
apart each had the link alone for a while; their own averages added up overstate it, this does not."""

import json
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.sweeps.clusters import interval_series, together

STEP = 0.1  # the simulated link's grid, seconds
INTERVAL = 1.0
CAPACITY = 1000.0  # bytes/s through the shared link


@st.composite
def shared_link(draw, aligned: bool = False, whole: bool = False):
    """Pairs of one duration through one link whose total never exceeds CAPACITY: each pair's interval
    lines (arrived, start, end, bytes), arriving late by a drawn delay (one line of each on time). The
    pairs start together (`aligned`), whole intervals apart (`whole`), or any number of STEPs apart."""
    n = draw(st.integers(1, 4))
    duration = draw(st.integers(8, 20))  # whole intervals
    spread = [draw(st.integers(0, 3)) * round(INTERVAL / STEP) if whole else draw(st.integers(0, 30)) for _ in range(n)]
    offsets = [0] * n if aligned else spread  # in STEPs
    steps = max(offsets) + round(duration / STEP)
    sent = [[0.0] * steps for _ in range(n)]
    for k in range(steps):
        active = [i for i in range(n) if offsets[i] <= k < offsets[i] + round(duration / STEP)]
        weights = [draw(st.integers(0, 10)) for _ in active]
        carried = draw(st.floats(0.0, 1.0)) * CAPACITY * STEP
        for i, weight in zip(active, weights, strict=True):
            sent[i][k] = carried * weight / sum(weights) if sum(weights) else 0.0
    series = {}
    for i in range(n):
        rows = []
        per_interval = round(INTERVAL / STEP)
        on_time = draw(st.integers(0, duration - 1))
        for j in range(duration):
            first = offsets[i] + j * per_interval
            size = round(sum(sent[i][first : first + per_interval]))
            delay = 0.0 if j == on_time else draw(st.floats(0.0, 0.2))
            end_on_clock = 1_000_000.0 + (first + per_interval) * STEP
            rows.append((end_on_clock + delay, j * INTERVAL, (j + 1) * INTERVAL, size))
        series[100 + i] = rows
    return series, duration


def _total(result) -> float:
    return sum(result["bytes"].values()) / result["seconds"]


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_link(whole=True))
def test_the_sum_at_once_never_exceeds_the_link(case):
    """Whatever the start spread and the shares, what the pairs carried at once is at most what the link
    can carry (their own averages added up are not: a pair alone at either end had all of it)."""
    series, _duration = case
    result = together(series)
    assert result is not None and result["seconds"] > 0
    assert _total(result) <= CAPACITY + len(series) / result["seconds"]  # + rounding to whole bytes


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_link())
def test_intervals_cut_by_the_span_count_their_share(case):
    """Pairs started a fraction of an interval apart: an interval the span cuts counts its share of
    bytes, even within it, so the sum may exceed the link by at most one interval's bytes per pair
    and end of the span."""
    series, _duration = case
    result = together(series)
    assert result is not None and result["seconds"] > 0
    slack = 2 * len(series) * INTERVAL * CAPACITY / result["seconds"]
    assert _total(result) <= CAPACITY + slack + len(series) / result["seconds"]


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_link(aligned=True), st.floats(0.0, 5.0))
def test_pairs_that_ran_together_sum_to_their_own_averages(case, latency):
    """Started together, the span is the whole run and the sum is the pairs' averages added up; a delay
    every line shares (the SSH channel's) moves nothing."""
    series, duration = case
    averages = sum(sum(row[3] for row in rows) / duration for rows in series.values())
    late = {run_id: [(arrived + latency, *rest) for arrived, *rest in rows] for run_id, rows in series.items()}
    for each in (series, late):
        result = together(each)
        assert abs(result["seconds"] - duration) < 1e-6
        assert abs(_total(result) - averages) <= 1e-6 * max(averages, 1.0) + len(series) / duration


def test_pairs_that_never_overlapped_have_no_sum_at_once():
    first = [(10.0 + k, k, k + 1.0, 100) for k in range(5)]
    second = [(20.0 + k, k, k + 1.0, 100) for k in range(5)]
    assert together({1: first, 2: second}) is None
    assert together({1: first, 2: []}) is None  # a pair without a single interval: nothing to place


def test_the_servers_count_is_read_and_unreadable_lines_are_left_out():
    moment = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)

    def line(start, size):
        data = {"start_seconds": start, "end_seconds": start + 1, "bytes": size}
        return json.dumps({"event": "interval", "data": data})

    rows = [
        (1, "client", moment, line(0, 999)),
        (1, "server", moment, line(0, 500)),
        (1, "server", moment + timedelta(seconds=1), "{not json"),
        (1, "server", moment + timedelta(seconds=1), line(1, -5)),
        (2, "client", moment, line(0, 700)),
    ]
    series = interval_series(rows)
    assert series == {1: [(moment.timestamp(), 0.0, 1.0, 500)], 2: [(moment.timestamp(), 0.0, 1.0, 700)]}
