"""The growth forecast as the pages show it: the plan's Growth block and the watch page, for a history
that grows, one that does not, one too short, and one that runs past today (its forecast raised and
the whole environment page answered 500)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from redolab.core.units import MIB
from redolab.watches.models import Watch
from tests.factories import make_environment, make_host, make_measured_run

HTMX = {"HX-Request": "true"}
LOG_SECONDS = 2 * 3600
# The pages' today: a Wednesday noon, UTC. The forecast counts whole ISO weeks (Monday to Sunday, UTC) up
# to now, so how many weeks a history "ending yesterday" holds depends on the day the suite runs (on a
# Tuesday, 3 weeks ending yesterday held 3 whole weeks, on other days 2): each test here runs on this
# day, its clients logging in on it, and says which weeks its history covers.
TODAY = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
YESTERDAY_NOON = TODAY - timedelta(days=1)  # a Tuesday: 3 weeks back is a Tuesday noon too
LAST_MONDAY = datetime(2026, 11, 23, tzinfo=UTC)  # 00:00, this week's first moment


@pytest.fixture(autouse=True)
def on_a_wednesday():
    """The clock at TODAY (and moving) for the test and every fixture it brings up: autouse, so it
    comes before the clients, whose session and token are dated by it."""
    with time_machine.travel(TODAY, tick=True):
        yield


def history_csv(weeks: int, *, end, growth_mib_per_week: float, base_mib: float = 10.0) -> str:
    """V$ARCHIVED_LOG-shaped rows, one 2-hour log after another for `weeks` weeks up to `end`: each day
    one busy log at the week's peak rate (base + growth x week, MiB/s), the others at a third of it."""
    lines = ["THREAD#,SEQUENCE#,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE"]
    start = (end - timedelta(weeks=weeks)).replace(minute=0, second=0, microsecond=0)
    for n in range(weeks * 7 * 12):
        first = start + timedelta(seconds=LOG_SECONDS * n)
        peak = base_mib + growth_mib_per_week * (n // (7 * 12))
        rate = peak if n % 12 == 6 else peak / 3
        blocks = round(rate * MIB * LOG_SECONDS / 512)
        last = first + timedelta(seconds=LOG_SECONDS)
        lines.append(f"1,{1000 + n},{first:%Y-%m-%d %H:%M:%S},{last:%Y-%m-%d %H:%M:%S},{blocks},512")
    return "\n".join(lines) + "\n"


def environment_with_history(session, api_client, text: str):
    environment = make_environment(session)
    primary = make_host(session, environment, name="prim", role="primary")
    standby = make_host(session, environment, name="stby", role="standby")
    preview = api_client.post(
        f"/api/v1/environments/{environment.id}/redo/preview", files={"file": ("arch.csv", text.encode(), "text/csv")}
    )
    assert preview.status_code == 200, preview.text
    done = api_client.post(
        f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": preview.json()["upload_token"]}
    )
    assert done.status_code == 201, done.text
    return environment, primary, standby


def growth_block(page: str) -> str:
    return page.split('id="plan-forecast"')[1].split("</p>")[0]


@pytest.mark.parametrize(
    ("weeks", "end", "growth", "expected"),
    [
        (16, YESTERDAY_NOON, 0.5, "At the present growth the link stops sufficing around "),
        (16, YESTERDAY_NOON, 0.0, "No growth detected"),
        # Tuesday noon to Tuesday noon: the first and the last week are partial, 2 whole weeks between
        (3, YESTERDAY_NOON, 0.5, "Needs at least 8 weeks of history; there are 2."),
        # Monday 00:00 to Monday 00:00: 3 whole weeks, each counted
        (3, LAST_MONDAY, 0.5, "Needs at least 8 weeks of history; there are 3."),
    ],
)
def test_the_plans_growth_block_says_when_the_link_stops_sufficing(
    api_client, browser_client, session, weeks, end, growth, expected
):
    assert datetime.now(UTC) - TODAY < timedelta(minutes=5)  # on the fixed day, not today
    environment, primary, standby = environment_with_history(
        session, api_client, history_csv(weeks, end=end, growth_mib_per_week=growth)
    )
    make_measured_run(session, environment.id, primary, standby, bytes_per_second=30 * MIB)
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200
    block = growth_block(page.text)
    assert expected in block, block
    if growth and weeks > 8:  # the crossing, with its interval, against the plan's measured link
        assert "(between " in block and "30 MiB/s" in block, block


def test_a_history_past_today_still_draws_the_plan_and_the_watch_page(api_client, browser_client, session):
    """An import whose times are 3 weeks ahead (a wrong time zone, a host's clock): the pages draw, and
    the forecast says why it counts from the newest week rather than from today."""
    environment, primary, standby = environment_with_history(
        session, api_client, history_csv(12, end=TODAY + timedelta(weeks=3), growth_mib_per_week=0.5)
    )
    make_measured_run(session, environment.id, primary, standby, bytes_per_second=30 * MIB)
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200, page.text[-500:]
    # 12 weeks up to Wednesday 2026-12-16 noon: the week from Monday 2026-12-14 is partial, not counted
    assert "The redo history runs past today (its last whole week starts 2026-12-07)" in growth_block(page.text)
    made = browser_client.post(
        f"/environments/{environment.id}/watches",
        data={"name": "DG link", "client_host_id": str(primary.id), "server_host_id": str(standby.id),
              "every_seconds": "15 min", "duration_seconds": "10 s", "conns": "1", "message_bytes": "1 MiB",
              "margin_ratio": "0.10", "agree_m": "2", "of_n": "3"},
        headers=HTMX,
    )  # fmt: skip
    assert made.status_code == 200, made.text
    watch = session.query(Watch).one()
    shown = browser_client.get(f"/watches/{watch.id}")
    assert shown.status_code == 200
    assert "The redo history runs past today" in shown.text.split('id="watch-forecast"')[1].split("</p>")[0]
