"""The redo-growth forecast (issue 37): weekly and monthly peaks, the Theil-Sen trend, the crossing date
and its interval, checked against generated histories whose growth is known. Pure: no database."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.watches.forecast import (
    ALREADY_SHORT,
    BEYOND_HORIZON,
    CROSSING,
    INSUFFICIENT,
    MAX_HORIZON_DAYS,
    NO_GROWTH,
    forecast_growth,
    peaks_by_period,
)

MIB = 1024 * 1024
MONDAY = datetime(2025, 1, 6, tzinfo=UTC)  # an ISO week's first day
WATCH = "the watch's 5th percentile over 24 h"
PLAN = "the plan's measured single stream"


def weekly(rates, start=MONDAY):
    return [(start + timedelta(weeks=k), rate) for k, rate in enumerate(rates)]


def forecast(peaks, capacity, *, headroom=0.3, basis=WATCH, now=None, **options):
    now = now or peaks[-1][0] + timedelta(days=7)
    return forecast_growth(
        peaks, capacity_bytes_per_second=capacity, headroom_ratio=headroom, capacity_basis=basis, now=now, **options
    )


def days_after(origin, moment):
    return (moment - origin).total_seconds() / 86400


# --- peaks_by_period ---------------------------------------------------------------------------------


def test_weekly_peaks_are_the_highest_rate_of_each_iso_week_in_utc():
    points = [
        (datetime(2025, 1, 6, 0, 0), 5.0),  # naive: read as UTC, Monday of ISO week 2
        (datetime(2025, 1, 12, 23, 59, tzinfo=UTC), 9.0),  # Sunday, same week
        (datetime(2025, 1, 13, 0, 30, tzinfo=timezone(timedelta(hours=2))), 7.0),  # Sunday 22:30 UTC
        (datetime(2025, 1, 13, 0, 0, tzinfo=UTC), 3.0),  # the next week
        (datetime(2025, 1, 27, 12, 0, tzinfo=UTC), 4.0),  # a week without samples is absent, not zero
    ]
    assert peaks_by_period(points) == [
        (datetime(2025, 1, 6, tzinfo=UTC), 9.0),
        (datetime(2025, 1, 13, tzinfo=UTC), 3.0),
        (datetime(2025, 1, 27, tzinfo=UTC), 4.0),
    ]


def test_monthly_peaks_start_on_the_first_of_the_month():
    points = [(datetime(2024, 12, 31, 23, tzinfo=UTC), 2.0), (datetime(2025, 1, 1, tzinfo=UTC), 1.0),
              (datetime(2025, 1, 31, 23, tzinfo=UTC), 6.0), (datetime(2024, 12, 1, tzinfo=UTC), 8.0)]  # fmt: skip
    assert peaks_by_period(points, period="month") == [
        (datetime(2024, 12, 1, tzinfo=UTC), 8.0),
        (datetime(2025, 1, 1, tzinfo=UTC), 6.0),
    ]


def test_complete_only_leaves_out_partial_first_and_last_periods():
    hours = [MONDAY + timedelta(days=2, hours=h) for h in range(0, 24 * 19, 6)]  # Wednesday to Sunday+2 weeks
    points = [(moment, 1.0 + index) for index, moment in enumerate(hours)]
    every = peaks_by_period(points)
    whole = peaks_by_period(points, complete_only=True)
    assert [start for start, _ in every] == [MONDAY + timedelta(weeks=k) for k in range(3)]
    # the first week starts on a Wednesday (partial); the third ends on Sunday 18:00 (within a day)
    assert [start for start, _ in whole] == [MONDAY + timedelta(weeks=1), MONDAY + timedelta(weeks=2)]
    assert peaks_by_period(points[:3], complete_only=True) == []


@pytest.mark.parametrize("rate", [math.nan, math.inf, -1.0, "fast", None])
def test_a_rate_that_is_not_a_finite_non_negative_number_names_the_point(rate):
    points = [(MONDAY, 1.0), (MONDAY + timedelta(hours=1), rate)]
    with pytest.raises(ValueError, match=r"sample 1 \(2025-01-06T01:00:00\+00:00\)"):
        peaks_by_period(points)
    with pytest.raises(ValueError, match=r"peak 1 \(2025-01-13T00:00:00\+00:00\)"):
        forecast(weekly([1.0, rate, *[1.0] * 8]), 100.0)


def test_bad_arguments_are_refused_with_a_reason():
    peaks = weekly([MIB] * 10)
    with pytest.raises(ValueError, match="before the last peak"):
        forecast(peaks, 10 * MIB, now=MONDAY)
    with pytest.raises(ValueError, match="two peaks at"):
        forecast([*peaks, peaks[-1]], 10 * MIB)
    with pytest.raises(ValueError, match="basis is missing"):
        forecast(peaks, 10 * MIB, basis=" ")
    with pytest.raises(ValueError, match="period 'day'"):
        forecast(peaks, 10 * MIB, period="day")
    with pytest.raises(ValueError, match="the capacity"):
        forecast(peaks, -1.0)
    with pytest.raises(ValueError, match="headroom"):
        forecast(peaks, 10 * MIB, headroom=math.nan)
    with pytest.raises(ValueError, match="confidence"):
        forecast(peaks, 10 * MIB, confidence=90)


# --- examples -----------------------------------------------------------------------------------------


def test_fewer_peaks_than_required_is_insufficient():
    result = forecast(weekly([20 * MIB] * 7), 100 * MIB)
    assert result.status == INSUFFICIENT
    assert result.message == "Needs at least 8 weeks of history; there are 7."
    assert (result.periods, result.slope_bytes_per_second_per_day, result.crossing) == (7, None, None)
    months = [(datetime(2025, m, 1, tzinfo=UTC), 20 * MIB) for m in (1, 2, 3)]
    result = forecast(months, None, basis=PLAN, period="month")
    assert result.message == (
        "Needs at least 8 months of history; there are 3. "
        "The link's capacity (the plan's measured single stream) is not measured yet either."
    )


def test_a_flat_noisy_history_shows_no_growth():
    rng = np.random.default_rng(37)
    peaks = weekly(20 * MIB * (1 + rng.uniform(-0.1, 0.1, 30)))
    result = forecast(peaks, 100 * MIB)
    assert result.status == NO_GROWTH
    assert result.slope_low <= 0 <= result.slope_high
    assert (result.crossing, result.crossing_earliest, result.crossing_latest) == (None, None, None)
    assert result.message.startswith("No growth detected: the peak redo rate's trend is ")
    assert "at 90 % confidence, from 30 weekly peaks" in result.message
    assert result.message.endswith(", within 100 MiB/s, the watch's 5th percentile over 24 h.")


def test_exact_linear_growth_crosses_on_the_known_date():
    # 20 MiB/s growing 1 MiB/s a week; 1.3 x (20 + 80) MiB/s is reached in week 80
    peaks = weekly([(20 + k) * MIB for k in range(20)])
    result = forecast(peaks, 130 * MIB)
    assert result.status == CROSSING
    assert result.slope_bytes_per_second_per_day == pytest.approx(MIB / 7)
    expected = MONDAY + timedelta(weeks=80)
    assert abs(days_after(expected, result.crossing)) < 1e-6
    assert result.crossing_earliest == result.crossing == result.crossing_latest  # no noise, no spread
    assert result.message == (
        "At the present growth the link stops sufficing around 2026-07 (between 2026-07 and 2026-07): "
        "the required rate, now 52 MiB/s (trend 40 MiB/s + 30 % headroom), reaches 130 MiB/s, the watch's "
        "5th percentile over 24 h; the peak redo rate grows 4.35 MiB/s per month (between 4.35 MiB/s per "
        "month and 4.35 MiB/s per month at 90 % confidence, from 20 weekly peaks)."
    )


def test_noisy_linear_growth_brackets_the_true_crossing():
    rng = np.random.default_rng(2027)
    level, growth = 20 * MIB, 0.5 * MIB  # per week
    peaks = weekly([(level + growth * k) * (1 + rng.uniform(-0.1, 0.1)) for k in range(40)])
    result = forecast(peaks, 1.3 * 100 * MIB)  # the true line reaches 100 MiB/s in week 160
    true = MONDAY + timedelta(weeks=160)
    assert result.status == CROSSING
    assert 0 < result.slope_low < result.slope_bytes_per_second_per_day < result.slope_high
    assert result.crossing_earliest < result.crossing < result.crossing_latest
    assert result.crossing_earliest <= true <= result.crossing_latest
    assert result.message.startswith(
        f"At the present growth the link stops sufficing around {result.crossing:%Y-%m} "
        f"(between {result.crossing_earliest:%Y-%m} and {result.crossing_latest:%Y-%m}): "
    )


def test_a_requirement_above_the_capacity_is_already_short():
    peaks = weekly([(60 + k) * MIB for k in range(10)])
    result = forecast(peaks, 80 * MIB, basis=PLAN)
    assert result.status == ALREADY_SHORT
    assert result.required_now_bytes_per_second == pytest.approx(1.3 * 70 * MIB)
    assert result.message == (
        "The link is already short: the required rate now, 91 MiB/s (trend 70 MiB/s + 30 % headroom), is "
        "above 80 MiB/s, the plan's measured single stream; the peak redo rate's trend changes by 4.35 MiB/s "
        "per month (between 4.35 MiB/s per month and 4.35 MiB/s per month at 90 % confidence, from 10 weekly "
        "peaks)."
    )
    shrinking = forecast(weekly([(90 - k) * MIB for k in range(10)]), 80 * MIB)
    assert shrinking.status == ALREADY_SHORT  # short now, whatever the trend


def test_without_a_capacity_the_message_names_the_missing_one():
    growing = forecast(weekly([(20 + k) * MIB for k in range(10)]), None)
    assert growing.status == INSUFFICIENT
    assert growing.slope_bytes_per_second_per_day == pytest.approx(MIB / 7)
    assert growing.message.startswith(
        "No forecast: the link's capacity (the watch's 5th percentile over 24 h) is not measured yet. "
        "The peak redo rate grows 4.35 MiB/s per month"
    )
    flat = forecast(weekly([20 * MIB] * 10), None, basis=PLAN)
    assert flat.status == NO_GROWTH
    assert flat.message.endswith("; the link's capacity (the plan's measured single stream) is not measured yet.")


def test_a_crossing_past_the_horizon_is_not_dated():
    peaks = weekly([(20 + 0.01 * k) * MIB for k in range(10)])
    result = forecast(peaks, 1000 * MIB, horizon_days=365)
    assert result.status == BEYOND_HORIZON
    assert (result.crossing, result.crossing_latest) == (None, None)
    assert result.message.startswith("At the present growth the link suffices past the horizon (2026-03): ")
    zigzag = weekly([(20 + k) * MIB * (1.1 if k % 2 else 0.9) for k in range(8)])  # a wide interval
    late = forecast(zigzag, 120 * MIB, horizon_days=450)  # the horizon ends between central and latest
    assert late.status == CROSSING and late.crossing_latest is None
    assert late.message.startswith(
        "At the present growth the link stops sufficing around 2026-04 (between 2025-08 and past the horizon, "
        "2026-05): "
    )
    fast_only = forecast(zigzag, 300 * MIB, horizon_days=700)  # only the fastest growth crosses in time
    assert fast_only.status == BEYOND_HORIZON and fast_only.crossing_earliest is not None
    assert fast_only.message.endswith(
        "from 8 weekly peaks). At the fastest growth in that interval it stops sufficing around 2026-09."
    )


def test_an_earliest_crossing_before_now_reads_now():
    zigzag = weekly([(20 + k) * MIB * (1.1 if k % 2 else 0.9) for k in range(8)])
    now = MONDAY + timedelta(weeks=8)
    result = forecast(zigzag, 40 * MIB, now=now)  # the fastest growth in the interval is past 40 MiB/s now
    assert result.status == CROSSING and result.crossing_earliest == now < result.crossing
    assert result.message.startswith("At the present growth the link stops sufficing around 2025-03 (between now and ")


def test_the_interval_covers_the_true_crossing_about_as_often_as_it_says():
    """Independent noise, seeded (so it is the same every run): the 90 % interval is not decorative.
    It covers about 88 % here (it leaves out the level's own uncertainty); 80 % is 3 standard errors
    below, and an interval of zero width covers next to nothing."""
    rng = np.random.default_rng(20270901)
    covered = dated = 0
    for _ in range(200):
        count = int(rng.integers(8, 61))
        level = rng.uniform(5, 200) * MIB
        growth = level * rng.uniform(0.02, 0.05)  # per week
        peaks = weekly([(level + growth * k) * (1 + rng.uniform(-0.1, 0.1)) for k in range(count)])
        capacity = 1.3 * (level + growth * count) * rng.uniform(1.2, 5)
        result = forecast(peaks, capacity, horizon_days=MAX_HORIZON_DAYS)
        if result.status != CROSSING:
            continue
        dated += 1
        true_day = (capacity / 1.3 - level) / growth * 7
        latest = math.inf if result.crossing_latest is None else days_after(MONDAY, result.crossing_latest)
        covered += days_after(MONDAY, result.crossing_earliest) <= true_day <= latest
    assert dated >= 190
    assert covered / dated >= 0.80


# --- properties ---------------------------------------------------------------------------------------


@st.composite
def mirrored_histories(draw):
    """A weekly history on a known line with bounded noise that is the same on weeks mirrored about
    the middle (week i and week n-1-i). The pairwise slopes then come in pairs s + d and s - d, so the
    Theil-Sen slope is the true one and its interval contains it, whatever the noise: the property
    cannot fail by chance. The noise moves the median point by at most 10 % of the line there."""
    count = draw(st.integers(8, 60))
    level = draw(st.floats(1, 2000)) * MIB  # bytes/s in the first week
    growth = level * draw(st.floats(0.02, 0.10))  # bytes/s per week, clearly positive
    line = [level + growth * k for k in range(count)]
    half = draw(st.lists(st.floats(-1, 1), min_size=(count + 1) // 2, max_size=(count + 1) // 2))
    noise = [half[min(k, count - 1 - k)] * 0.10 * line[min(k, count - 1 - k)] for k in range(count)]
    headroom = draw(st.floats(0, 1))
    now_days = 7 * (count - 1) + draw(st.floats(0, 14))
    true_now = level + growth * now_days / 7
    capacity = true_now * (1 + headroom) * draw(st.floats(1.15, 8))  # above the 10 % the noise can add
    peaks = weekly([value + offset for value, offset in zip(line, noise, strict=True)])
    return peaks, level, growth, headroom, capacity, MONDAY + timedelta(days=now_days)


@settings(max_examples=60, deadline=None)
@given(mirrored_histories())
def test_the_predicted_crossing_is_within_the_stated_interval(history):
    peaks, level, growth, headroom, capacity, now = history
    result = forecast(peaks, capacity, headroom=headroom, now=now, horizon_days=MAX_HORIZON_DAYS)
    true_slope = growth / 7  # bytes/s per day
    assert result.slope_bytes_per_second_per_day == pytest.approx(true_slope, rel=1e-9)
    assert result.slope_low <= true_slope * (1 + 1e-9) and true_slope <= result.slope_high * (1 + 1e-9)
    assert result.status in (CROSSING, NO_GROWTH)  # never short: the capacity is above what noise adds
    if result.status == NO_GROWTH:  # an interval that reaches zero: possible with the noise at its bound
        assert result.slope_low <= 0
        return
    true_day = (capacity / (1 + headroom) - level) / true_slope
    # The slope is exact, so the central date is off only by the median point's level: at most 10 % of
    # the line at the median week, i.e. that many bytes/s divided by the slope, in days.
    median_week = (len(peaks) - 1) / 2
    widening = 0.10 * (level + growth * median_week) / true_slope + 1e-6
    crossing = days_after(MONDAY, result.crossing)
    earliest = days_after(MONDAY, result.crossing_earliest)
    latest = math.inf if result.crossing_latest is None else days_after(MONDAY, result.crossing_latest)
    assert earliest <= crossing <= latest
    assert abs(crossing - true_day) <= widening
    assert earliest - widening <= true_day <= latest + widening


@st.composite
def noisy_histories(draw):
    count = draw(st.integers(8, 40))
    level = draw(st.floats(1, 500)) * MIB
    growth = level * draw(st.floats(-0.02, 0.08))  # shrinking, flat and growing
    noise = draw(st.lists(st.floats(-0.2, 0.2), min_size=count, max_size=count))
    peaks = weekly([max(level + growth * k, 0.0) * (1 + e) for k, e in enumerate(noise)])
    capacities = sorted(draw(st.lists(st.floats(0.1, 50), min_size=2, max_size=6)))
    return peaks, [level * c for c in capacities]


def _when(result, field):
    """A status as a time, for ordering: short is now (-inf), never crossing is +inf."""
    if result.status == ALREADY_SHORT:
        return -math.inf
    moment = getattr(result, field)
    return math.inf if moment is None else days_after(MONDAY, moment)


@settings(max_examples=60, deadline=None)
@given(noisy_histories(), st.floats(0, 1))
def test_more_capacity_never_crosses_earlier(history, headroom):
    peaks, capacities = history
    results = [forecast(peaks, capacity, headroom=headroom) for capacity in capacities]
    for field in ("crossing", "crossing_earliest", "crossing_latest"):
        times = [_when(result, field) for result in results]
        assert times == sorted(times), field
    statuses = [result.status for result in results]
    assert statuses == sorted(statuses, key=lambda s: s != ALREADY_SHORT)  # short only below the rest
