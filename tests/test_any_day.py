"""Green on any day (issue 54): what the product computes from today's date, on days chosen to be awkward.

The full check runs the suite under a frozen clock (tests/frozen_date.py: REDOLAB_TEST_DATE=...); this
module keeps a cheap form of it in every run. On a Tuesday, a Sunday late in the evening, 31 December
just before midnight, the mornings Europe (2027-03-28) and the US (2026-11-01) change their clocks, and
a summer Monday just after midnight, with the clock stopped there, it asks the functions that read
today what they answer, and compares with what was worked out by hand for that day:

- the growth forecast's weeks (whole ISO weeks, Monday 00:00 UTC, up to now; a history past today);
- the time zone a collection offers (compared on the day the host said its offset, not today);
- the ends a schedule and a watch's silence accept (relative to now, across midnight and the year);
- a bearer token's lifetime.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from pydantic import ValidationError

from redolab.collect.models import Collection, CollectionStatus
from redolab.collect.service import offered_changes
from redolab.core.security import create_access_token, read_access_token
from redolab.core.units import MIB
from redolab.environments.models import Environment
from redolab.sweeps.schedules import Repeat
from redolab.watches.forecast import INSUFFICIENT, peaks_by_period
from redolab.watches.schemas import WatchSilence
from redolab.watches.trend import forecast_from

LOG = timedelta(hours=2)


def _utc(*fields: int) -> datetime:
    return datetime(*fields, tzinfo=UTC)


# name: (now, the Monday 00:00 UTC its ISO week starts on, how many whole weeks 21 days of logs ending
# 24 h before now hold: the first and the last week count only when within a day of whole)
DAYS = {
    "Tuesday": (_utc(2026, 12, 1, 10, 0), _utc(2026, 11, 30), 3),  # from Monday 11-09 10:00: 3 whole
    "Sunday 23:30": (_utc(2026, 12, 27, 23, 30), _utc(2026, 12, 21), 2),  # Sat 12-05 to Sat 12-26
    "31 December 23:55": (_utc(2026, 12, 31, 23, 55), _utc(2026, 12, 28), 2),  # week 53 runs into 2027
    "Europe's clocks go forward": (_utc(2027, 3, 28, 1, 30), _utc(2027, 3, 22), 2),  # 03:30 in Paris
    "the US clocks go back": (_utc(2026, 11, 1, 6, 30), _utc(2026, 10, 26), 2),  # 01:30 again in New York
    "summer Monday 00:30": (_utc(2027, 7, 12, 0, 30), _utc(2027, 7, 12), 2),  # Sun 06-20 to Sun 07-11
}
ON_EACH_DAY = pytest.mark.parametrize(("now", "monday", "ending_yesterday"), DAYS.values(), ids=DAYS.keys())


def logs(start: datetime, end: datetime) -> list[tuple[datetime, float]]:
    """A 2-hour log's start and rate (bytes/s) from `start` up to `end`: 10 MiB/s, one busy log a day."""
    points, moment, n = [], start, 0
    while moment + LOG <= end:
        points.append((moment, (30 if n % 12 == 6 else 10) * MIB))
        moment, n = moment + LOG, n + 1
    return points


def forecast(peaks):
    return forecast_from(peaks, capacity=100 * MIB, headroom=0.3, basis="the plan's measured link")


@ON_EACH_DAY
def test_the_whole_weeks_before_this_one_are_each_counted(now, monday, ending_yesterday):
    with time_machine.travel(now, tick=False):
        points = logs(monday - timedelta(weeks=3), monday)  # Monday 00:00 to this week's Monday 00:00
        peaks = peaks_by_period(points, period="week", complete_only=True)
        assert [start for start, _ in peaks] == [monday - timedelta(weeks=w) for w in (3, 2, 1)]
        assert all(rate == 30 * MIB for _, rate in peaks)
        said = forecast(peaks)
        assert said.status == INSUFFICIENT and said.periods == 3
        assert said.message.startswith("Needs at least 8 weeks of history; there are 3.")


@ON_EACH_DAY
def test_a_history_that_ends_mid_week_counts_its_whole_weeks_only(now, monday, ending_yesterday):
    """The plan page's old test data (tests/web/test_forecast_pages.py): 21 days of logs ending 24 h
    before now, from the hour. How many whole weeks they hold depends on the weekday and the hour: 3
    on the Tuesday (from a Monday 10:00), 2 on the other days."""
    with time_machine.travel(now, tick=False):
        end = now - timedelta(days=1)
        points = logs((end - timedelta(weeks=3)).replace(minute=0), end)
        peaks = peaks_by_period(points, period="week", complete_only=True)
        assert len(peaks) == ending_yesterday
        assert all(start.weekday() == 0 and start.hour == 0 and start < monday for start, _ in peaks)
        assert f"there are {ending_yesterday}." in forecast(peaks).message


@ON_EACH_DAY
def test_a_history_past_today_counts_from_its_newest_week(now, monday, ending_yesterday):
    """12 weekly peaks, the last two weeks after this one (an import in the wrong time zone): the forecast
    counts from the newest week and says so, on every day."""
    with time_machine.travel(now, tick=False):
        peaks = [(monday + timedelta(weeks=w), (10 + 0.5 * w) * MIB) for w in range(-9, 3)]
        said = forecast(peaks)
        newest = f"{monday + timedelta(weeks=2):%Y-%m-%d}"
        assert said.message.startswith(f"The redo history runs past today (its last whole week starts {newest})")
        assert said.periods == 12 and said.status != INSUFFICIENT


def collection_read(offset_zone: str, at: datetime) -> Collection:
    return Collection(status=CollectionStatus.succeeded, facts={"offered": {"time_zone": offset_zone}},
                      started_at=at - timedelta(minutes=1), finished_at=at)  # fmt: skip


@ON_EACH_DAY
def test_a_collection_offers_a_time_zone_by_the_offset_on_the_day_it_read_it(now, monday, ending_yesterday):
    """A Paris host says +01:00 in winter and +02:00 in summer (Etc/GMT-1, Etc/GMT-2): the same zone,
    whenever the page is looked at. A host saying +01:00 in summer is in another zone."""
    paris = Environment(name="paris", time_zone="Europe/Paris")
    january, july = _utc(2027, 1, 15, 3), _utc(2027, 7, 15, 3)
    with time_machine.travel(now, tick=False):
        assert offered_changes(paris, collection_read("Etc/GMT-1", january)) == {}
        assert offered_changes(paris, collection_read("Etc/GMT-2", july)) == {}
        for wrong, when in (("Etc/GMT-1", july), ("Etc/GMT-2", january)):
            assert offered_changes(paris, collection_read(wrong, when)) == {"time_zone": ("Europe/Paris", wrong)}


@ON_EACH_DAY
def test_a_schedule_and_a_silence_end_relative_to_now(now, monday, ending_yesterday):
    """What the forms suggest or a user types, in minutes (times are UTC): accepted across midnight and
    the year's end; the past and the too far refused."""
    with time_machine.travel(now, tick=False):
        in_five_hours = (now + timedelta(hours=5)).strftime("%Y-%m-%dT%H:%M")
        assert Repeat(every_seconds="1 h", until=in_five_hours).until == now.replace(second=0) + timedelta(hours=5)
        next_year = now.replace(year=now.year + 1, second=0)  # the same day and time next year: 365 or 366 days
        assert Repeat(every_seconds="1 d", until=next_year.strftime("%Y-%m-%dT%H:%M")).until == next_year
        for refused in (now - timedelta(minutes=1), next_year + timedelta(days=2)):
            with pytest.raises(ValidationError):
                Repeat(every_seconds="1 h", until=refused.strftime("%Y-%m-%dT%H:%M"))
        two_hours = (now + timedelta(hours=2)).strftime("%Y-%m-%d %H:%M")  # the watch page's default
        assert WatchSilence(until=two_hours).until == now.replace(second=0) + timedelta(hours=2)
        for refused in (now - timedelta(minutes=1), now + timedelta(days=32)):
            with pytest.raises(ValidationError):
                WatchSilence(until=refused.strftime("%Y-%m-%d %H:%M"))


@ON_EACH_DAY
def test_a_bearer_token_lives_its_max_age_from_now(now, monday, ending_yesterday):
    with time_machine.travel(now, tick=False) as traveller:
        token = create_access_token(subject="alice", secret_key="k" * 48, max_age_seconds=3600)
        traveller.shift(3599)
        assert read_access_token(token, secret_key="k" * 48) == ("alice", 0)
        traveller.shift(2)
        assert read_access_token(token, secret_key="k" * 48) is None
