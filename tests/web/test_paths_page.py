"""The Paths page (MaDDash's grid: every watched path's state at a glance) and the watch page's time
ranges (perfSONAR's 1 d / 1 w / 1 m / 1 y). The clock is set to the last half hour of a year (a week and a
month back cross the year's end), and times are relative to it."""

from __future__ import annotations

import html
import json
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import time_machine
from fastapi.testclient import TestClient

from redolab.core.db import utcnow
from redolab.core.units import MIB
from redolab.watches.models import CheckStatus, Verdict, Watch, WatchCheck, WatchState
from tests.conftest import log_in
from tests.factories import make_environment, make_host

HTMX = {"HX-Request": "true"}
YEAR_END = datetime(2026, 12, 31, 23, 30, tzinfo=UTC)


def _watched(session, browser_client, name: str = "DG link", **fields) -> Watch:
    environment = make_environment(session, name=f"{name} env")
    primary = make_host(session, environment, name="p1", transport="local", role="primary")
    standby = make_host(session, environment, name="s1", transport="local", role="standby")
    form = {
        "name": name,
        "client_host_id": str(primary.id),
        "server_host_id": str(standby.id),
        "every_seconds": "15 min",
        "duration_seconds": "10 s",
        "conns": "1",
        "message_bytes": "1 MiB",
        "threshold_bytes_per_second": "40 MiB/s",
        "margin_ratio": "0.10",
        "agree_m": "1",
        "of_n": "1",
        **fields,
    }
    made = browser_client.post(f"/environments/{environment.id}/watches", data=form, headers=HTMX)
    assert made.status_code == 200, made.text
    return session.query(Watch).filter_by(name=name).one()


def _check(session, watch: Watch, at, measured_mib: float, verdict: Verdict) -> None:
    session.add(
        WatchCheck(
            watch_id=watch.id, at=at, run_ids=[], status=CheckStatus.judged, verdict=verdict,
            measured_bytes_per_second=measured_mib * MIB, required_bytes_per_second=40 * MIB, reason="",
        )
    )  # fmt: skip


def test_the_paths_page_is_for_users_only(anonymous):
    page = anonymous.get("/paths")
    assert page.status_code == 303 and "/login" in page.headers["location"]


@contextmanager
def _logged_in_at_year_end(app, user):
    """A browser's session made, and used, on the year's last half hour."""
    with time_machine.travel(YEAR_END, tick=True), TestClient(app, follow_redirects=False) as client:
        assert log_in(client, user.username).status_code == 303
        yield client


def test_every_watched_path_is_a_coloured_cell_with_its_rule(app, user, session):
    with _logged_in_at_year_end(app, user) as browser_client:
        _cells(browser_client, session)


def _cells(browser_client, session):
    empty = browser_client.get("/paths")
    assert empty.status_code == 200 and 'id="no-paths"' in empty.text and 'href="/paths"' in empty.text  # nav
    failing = _watched(session, browser_client, "DG link")
    unknown = _watched(session, browser_client, "second path")
    _check(session, failing, utcnow() - timedelta(minutes=5), 30, Verdict.failing)
    failing.state = WatchState.failing
    session.commit()
    page = browser_client.get("/paths")
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert f'id="path-grid-{failing.environment_id}"' in text and f'id="path-grid-{unknown.environment_id}"' in text
    assert 'class="path-cell failing" data-state="failing"' in text and "FAILING</span> DG link" in text
    assert 'class="path-cell unknown" data-state="unknown"' in text and "no check judged yet" in text
    assert "measured 30 MiB/s" in text and "of 40 MiB/s required" in text  # units on every number
    assert "Green: at least 44 MiB/s (required + 10 %); amber: under that; red: under the 40 MiB/s required" in text
    assert "required; in the last check." in text and "1 of the last 1" not in text  # M = N = 1
    assert ">p1</th>" in text and ">s1</th>" in text  # from as a row, to as a column
    assert 'id="path-legend"' in text and "AT RISK" in text and "(amber)" in text  # the legend
    assert f'href="/watches/{failing.id}"' in text


def test_the_watch_page_draws_a_chosen_range(app, user, session):
    with _logged_in_at_year_end(app, user) as browser_client:
        _ranges(browser_client, session)


def _ranges(browser_client, session):
    watch = _watched(session, browser_client)
    now = utcnow()
    for days, measured in ((40, 20), (3, 50), (0.5, 55)):
        _check(session, watch, now - timedelta(days=days), measured, Verdict.ok if measured > 44 else Verdict.failing)
    session.commit()
    week = browser_client.get(f"/watches/{watch.id}?range=1w")
    assert week.status_code == 200 and 'aria-current="page">1 w</a>' in week.text
    assert f'hx-get="/watches/{watch.id}?range=1w"' in week.text  # the refresh keeps the range
    figure = json.loads(html.unescape(week.text.split('id="watch-chart" data-figure=\'')[1].split("'")[0]))
    assert figure["data"][1]["y"] == [50, 55]  # the check of 40 days ago is outside the week
    first, last = (_parsed(end) for end in figure["layout"]["xaxis"]["range"])
    assert timedelta(days=6.99) < last - first <= timedelta(days=7)
    assert figure["layout"]["title"]["text"].startswith("<b>Watch: DG link")
    year = browser_client.get(f"/watches/{watch.id}?range=1y")
    figure = json.loads(html.unescape(year.text.split('id="watch-chart" data-figure=\'')[1].split("'")[0]))
    assert figure["data"][1]["y"] == [20, 50, 55]
    unknown = browser_client.get(f"/watches/{watch.id}?range=5x")  # not a range: the last checks
    assert unknown.status_code == 200 and 'aria-current="page">last checks</a>' in unknown.text


def _parsed(text: str):
    from datetime import datetime

    return datetime.fromisoformat(text)
