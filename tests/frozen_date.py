"""Run the suite on a day of your choosing: `REDOLAB_TEST_DATE=2026-12-27T23:30:00+00:00 pytest ...`.

When REDOLAB_TEST_DATE is set (an ISO date and time with its offset), every test, its setup and its
teardown (fixtures of every scope that the test brings up included) runs under
`time_machine.travel(that, tick=True)`: the clock starts at that moment for each test and keeps moving,
so timeouts and sleeps behave as usual. REDOLAB_TEST_TZ (an IANA name, e.g. Europe/Berlin) also sets
the process's local time zone for the run (time_machine sets TZ while it travels).

What it moves: this process's wall clock (time.time, datetime.now, date.today, time.localtime ...),
not time.monotonic or perf_counter, and not the clock of a subprocess (the probe, sshd, `redolab
serve`), a PostgreSQL server or another host: a test that compares a time it reads here with one a
subprocess stamped sees the gap between the chosen date and today. The lessons ("Tests do not depend
on today") name the days to try: a Tuesday, a Sunday, 31 December and a daylight-saving change.
Without the variable this plugin does nothing. tests/test_any_day.py keeps a cheap form of the check
in every run.
"""

from __future__ import annotations

import os
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
import time_machine

DATE_VARIABLE = "REDOLAB_TEST_DATE"
ZONE_VARIABLE = "REDOLAB_TEST_TZ"
_MOMENT = pytest.StashKey[datetime | None]()


def chosen_moment() -> datetime | None:
    """The moment REDOLAB_TEST_DATE names (in REDOLAB_TEST_TZ when set), or None when it is not set."""
    text = os.environ.get(DATE_VARIABLE, "").strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise pytest.UsageError(f"{DATE_VARIABLE}={text!r} is not an ISO date and time") from None
    if moment.tzinfo is None:
        raise pytest.UsageError(f"{DATE_VARIABLE}={text!r} has no offset: write e.g. {text}+00:00")
    if zone := os.environ.get(ZONE_VARIABLE, "").strip():
        try:
            moment = moment.astimezone(ZoneInfo(zone))
        except (KeyError, ValueError) as error:
            raise pytest.UsageError(f"{ZONE_VARIABLE}={zone!r} is not a time zone: {error}") from None
    return moment


def pytest_configure(config):
    config.stash[_MOMENT] = chosen_moment()


def pytest_report_header(config):
    moment = config.stash.get(_MOMENT, None)
    if moment is not None:
        return f"frozen date: every test starts at {moment.isoformat()} ({moment:%A}), the clock ticking"
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    moment = item.config.stash.get(_MOMENT, None)
    if moment is None:
        return (yield)
    with time_machine.travel(moment, tick=True):
        return (yield)
