"""Choosing what a rehearsal replays: the worst window of all threads added up (equal to a search of
every window), a period the user names, and each refusal with what would work instead."""

from dataclasses import FrozenInstanceError
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.redo.requirement import ImportSeries, requirement
from redolab.redo.schemas import RedoInterval
from redolab.rehearsals.window import (
    PROFILE_REFUSAL,
    RehearsalRefused,
    WindowSpecError,
    choose_window,
    parse_window_spec,
)
from tests.rehearsals.history import MIB, T0, bytes_between, histories, requirement_of, row


def rac_history():
    """Two instances logging every 20 minutes for a day; thread 2 switches a 2 GiB log at 14:40."""
    return [row(t, 1200 * i, 1200, 2048 if (t, i) == (2, 20) else 100 * t) for t in (1, 2) for i in range(36)]


def test_the_worst_hour_is_the_hour_of_all_threads_added_up_with_its_granularity():
    window = choose_window(requirement_of(rac_history()))
    assert window.kind == "worst" and window.threads == (1, 2)
    assert window.start == T0 + timedelta(hours=6) and window.end == T0 + timedelta(hours=7)
    assert window.label == "worst 60 minutes, 2022-01-15 14:00 to 15:00 UTC"
    assert window.statistic == "per-log rate" and window.granularity_seconds == 1200
    assert window.granularity == (
        "per log (~20 min each): bytes inside one log are spread evenly; bursts shorter than a log are not in the "
        "replay"
    )
    assert window.bytes_per_second == pytest.approx((3 * 100 + 2 * 200 + 2048) * MIB / 3600)
    with pytest.raises(FrozenInstanceError):
        window.start = T0  # type: ignore[misc]


def test_the_label_is_on_the_database_clock_and_a_window_finer_than_the_logs_says_so():
    window = choose_window(requirement_of(rac_history()), "worst-5m", zone="Europe/Berlin")
    assert window.label == "worst 5 minutes, 2022-01-15 15:40 to 15:45 Europe/Berlin"  # 14:40 UTC, in winter
    assert window.seconds == 300
    assert "shorter than one log, so it replays a log's average" in window.granularity


def _worst_by_brute_force(rows, spans, seconds):
    """Every window starting on a whole second inside a span: the highest average of all threads."""
    threads = {r.thread for r in rows}
    best = None
    for span in spans:
        moment = span.start
        while moment + timedelta(seconds=seconds) <= span.end:
            end = moment + timedelta(seconds=seconds)
            average = sum(bytes_between(rows, t, moment, end) for t in threads) / seconds
            best = average if best is None or average > best else best
            moment += timedelta(seconds=1)
    return best


@settings(max_examples=40, deadline=None)
@given(histories(), st.sampled_from(["worst-1m", "worst-5m"]))
def test_the_worst_window_is_the_highest_of_every_window(rows, spec):
    req = requirement_of(rows)
    seconds = 60 if spec == "worst-1m" else 300
    expected = _worst_by_brute_force(rows, req.spans, seconds)
    if expected is None:
        with pytest.raises(RehearsalRefused, match="no stretch of"):
            choose_window(req, spec)
        return
    window = choose_window(req, spec)
    assert window.bytes_per_second == pytest.approx(expected, rel=1e-9)
    assert window.seconds == seconds
    assert any(s.start <= window.start and window.end <= s.end for s in req.spans)
    found = sum(bytes_between(rows, t, window.start, window.end) for t in window.threads) / seconds
    assert found == pytest.approx(expected, rel=1e-9)  # the window is where the average is, not just its value


def test_a_named_period_replays_the_threads_with_data_in_it():
    rows = [*rac_history(), row(3, 86400 * 2, 600, 60)]  # thread 3 logs two days later
    period = (T0 + timedelta(hours=1), T0 + timedelta(hours=1, minutes=30))
    window = choose_window(requirement_of(rows), period)
    assert window.kind == "period" and window.threads == (1, 2)
    assert (window.start, window.end) == period
    assert window.label == "2022-01-15 09:00 to 09:30 UTC"
    assert window.bytes_per_second == pytest.approx(300 * MIB * 1800 / 1200 / 1800)
    assert "thread 3 has no data in the period: not in the replay" in window.notes


def test_the_window_text_is_read_or_refused_naming_the_field():
    assert parse_window_spec("") == "worst-60m"
    assert parse_window_spec(" Worst-15m ") == "worst-15m"
    start, end = parse_window_spec("2025-03-04T14:00Z..2025-03-04T15:00Z")
    assert start == datetime(2025, 3, 4, 14, tzinfo=UTC) and end - start == timedelta(hours=1)
    local, _ = parse_window_spec("2025-03-04T14:00..2025-03-04T15:00", zone="Europe/Berlin")
    assert local == datetime(2025, 3, 4, 13, tzinfo=UTC)
    for text, said in (
        ("worst-30m", "window: 'worst-30m' is not offered; use worst-60m"),
        ("yesterday", "neither a worst window nor a period FROM..TO"),
        ("2025-03-04T14:00Z..soon", "window end: 'soon' is not an ISO time"),
        ("2025-03-04T15:00Z..2025-03-04T14:00Z", "is not after the start"),
        ("2025-03-04T14:00..2025-03-04T15:00", "has no UTC offset"),
    ):
        with pytest.raises(WindowSpecError, match=said):
            parse_window_spec(text, zone="Nowhere/Else" if "no UTC offset" in said else "UTC")
    assert issubclass(WindowSpecError, ValueError)
    assert choose_window(requirement_of(rac_history()), "2022-01-15T14:00Z..2022-01-15T15:00Z").kind == "period"


def profile_row(thread, hour, mib_per_second):
    return RedoInterval(
        line=1,
        thread=thread,
        start=None,
        end=None,
        seconds=3600.0,
        bytes=mib_per_second * MIB * 3600,
        kind="profile",
        peak_bytes_per_second=2 * mib_per_second * MIB,
        hour=hour,
    )


def test_history_without_times_is_refused_saying_what_to_import():
    profiles = requirement(
        [ImportSeries(1, "awr-profile.csv", [profile_row(1, h, 3) for h in range(24)])], headroom_ratio=0.3
    )
    with pytest.raises(RehearsalRefused) as refused:
        choose_window(profiles)
    assert PROFILE_REFUSAL in str(refused.value)
    assert "hour-of-day profile has no sequence and cannot be replayed" in str(refused.value)
    untimed = requirement_of([row(1, 0, 600, 600, timed=False), row(2, 0, 300, 600, timed=False)])
    with pytest.raises(RehearsalRefused, match=r"no times .*V\$ARCHIVED_LOG"):
        choose_window(untimed)


def test_a_thread_without_times_refuses_the_worst_window_but_not_a_period():
    rows = [row(1, 600 * i, 600, 60) for i in range(12)] + [row(2, 0, 600, 60, timed=False)]
    req = requirement_of(rows)
    with pytest.raises(RehearsalRefused, match="thread 2 has no times"):
        choose_window(req)
    window = choose_window(req, (T0, T0 + timedelta(hours=1)))
    assert window.threads == (1,) and "thread 2 has no times: not in the replay" in window.notes


@pytest.mark.parametrize(
    ("period", "said"),
    [
        ((T0 + timedelta(days=30), T0 + timedelta(days=30, hours=1)), "no redo with times from 2022-02-14 08:00"),
        ((T0, T0 + timedelta(hours=25)), "25 h is longer than the 24 h"),
        ((T0, T0 + timedelta(seconds=59)), "59 s is shorter than 60 s"),
    ],
)
def test_a_period_without_data_or_of_the_wrong_length_is_refused(period, said):
    with pytest.raises(RehearsalRefused, match=said):
        choose_window(requirement_of(rac_history()), period)


def test_a_worst_hour_longer_than_the_data_is_refused_with_the_longest_stretch():
    with pytest.raises(RehearsalRefused, match=r"no stretch of 60 minutes .*the longest is 30 min"):
        choose_window(requirement_of([row(1, 0, 1800, 100)]))
    assert choose_window(requirement_of([row(1, 0, 1800, 100)]), "worst-15m").seconds == 900


def day_of_logs(day):
    """One instance logging 120 MiB every 20 minutes from the UTC midnight before `day` for two days."""
    base = datetime(day.year, day.month, day.day, tzinfo=UTC) - timedelta(days=1)
    return [row(1, 1200 * i, 1200, 120, base=base) for i in range(144)]


def test_a_local_period_across_the_autumn_change_is_measured_on_the_real_clock():
    """Europe/Berlin, 2025-10-26: the clocks go back from 03:00 +02:00 to 02:00 +01:00, so 00:30 to 04:30
    on the wall is 5 hours, and an hour of redo more than the wall clock says."""
    req = requirement_of(day_of_logs(datetime(2025, 10, 26)))
    window = choose_window(req, "2025-10-26T00:30..2025-10-26T04:30", zone="Europe/Berlin")
    assert (window.start, window.end) == (
        datetime(2025, 10, 25, 22, 30, tzinfo=UTC),
        datetime(2025, 10, 26, 3, 30, tzinfo=UTC),
    )
    assert window.seconds == 18000
    assert window.bytes_per_second == pytest.approx(120 * MIB / 1200)
    assert window.label == "2025-10-26 00:30 +02:00 to 04:30 +01:00 Europe/Berlin"
    start, end = parse_window_spec("2025-10-26T01:00..2025-10-26T04:00", zone="Europe/Berlin")
    assert end - start == timedelta(hours=4)  # 3 hours on the wall
    with pytest.raises(RehearsalRefused, match="25 h is longer than the 24 h"):
        choose_window(req, "2025-10-26T00:00..2025-10-27T00:00", zone="Europe/Berlin")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("2025-10-26T00:00..2025-10-26T02:30", "window end: '2025-10-26T02:30' happens twice"),
        ("2025-10-26T02:00..2025-10-26T05:00", "window start: '2025-10-26T02:00' happens twice"),
    ],
)
def test_a_time_the_autumn_clock_shows_twice_is_refused_until_an_offset_says_which(text, said):
    with pytest.raises(WindowSpecError, match=f"{said} on the Europe/Berlin clock.*give the offset you mean"):
        parse_window_spec(text, zone="Europe/Berlin")


def test_an_hour_the_autumn_clock_shows_twice_is_measured_and_labelled_with_the_offset_given():
    req = requirement_of(day_of_logs(datetime(2025, 10, 26)))
    window = choose_window(req, "2025-10-26T02:00+02:00..2025-10-26T02:00+01:00", zone="Europe/Berlin")
    assert window.seconds == 3600
    assert window.label == "2025-10-26 02:00 +02:00 to 02:00 +01:00 Europe/Berlin"
    window = choose_window(req, "2025-10-26T02:10+01:00..2025-10-26T02:40+01:00", zone="Europe/Berlin")
    assert window.label == "2025-10-26 02:10 +01:00 to 02:40 +01:00 Europe/Berlin"  # not the first 02:10


def test_a_local_period_across_the_spring_change_is_measured_on_the_real_clock_and_the_skipped_hour_refused():
    """Europe/Berlin, 2025-03-30: the clocks jump from 02:00 +01:00 to 03:00 +02:00; 02:00 to 03:00 never
    happens (0 s long), and the day is 23 hours."""
    req = requirement_of(day_of_logs(datetime(2025, 3, 30)))
    for text, said in (
        ("2025-03-30T02:00..2025-03-30T03:00", "window start: '2025-03-30T02:00' does not exist on the Europe/Berlin"),
        ("2025-03-30T01:00..2025-03-30T02:30", "window end: '2025-03-30T02:30' does not exist .* give an offset"),
    ):
        with pytest.raises(WindowSpecError, match=said):
            choose_window(req, text, zone="Europe/Berlin")
    window = choose_window(req, "2025-03-30T00:00..2025-03-31T00:00", zone="Europe/Berlin")
    assert window.seconds == 23 * 3600
    assert window.label == "2025-03-30 00:00 +01:00 to 2025-03-31 00:00 +02:00 Europe/Berlin"
    assert choose_window(req, "2025-03-30T01:00..2025-03-30T03:30", zone="Europe/Berlin").seconds == 1.5 * 3600
