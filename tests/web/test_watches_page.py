"""The Watches section and the watch page: the form (errors beside their fields), the state and its
basis, the chart with the state bands, the checks, the notifications sent, silence and stop."""

from __future__ import annotations

import html
import json
from datetime import timedelta

from redolab.core.db import utcnow
from redolab.core.units import MIB
from redolab.watches.models import (
    CheckStatus,
    Notification,
    NotificationReceiver,
    Verdict,
    Watch,
    WatchCheck,
    WatchState,
)
from tests.factories import make_environment, make_host

HTMX = {"HX-Request": "true"}


def environment_with_hosts(session):
    environment = make_environment(session)
    make_host(session, environment, name="p", transport="local", role="primary")
    make_host(session, environment, name="s", transport="local", role="standby")
    session.refresh(environment)
    return environment


def form(environment, **fields) -> dict:
    primary, standby = sorted(environment.hosts, key=lambda h: h.role.value)
    return {
        "name": "DG link",
        "client_host_id": str(primary.id),
        "server_host_id": str(standby.id),
        "every_seconds": "15 min",
        "duration_seconds": "10 s",
        "conns": "1",
        "message_bytes": "1 MiB",
        "threshold_bytes_per_second": "40 MiB/s",
        "margin_ratio": "0.10",
        "agree_m": "2",
        "of_n": "3",
        **fields,
    }


def test_the_form_makes_a_watch_and_says_what_is_wrong(browser_client, session):
    environment = environment_with_hosts(session)
    page = browser_client.get(f"/environments/{environment.id}")
    assert 'id="watches"' in page.text and 'id="watch-form"' in page.text and 'href="#watches"' in page.text
    wrong = browser_client.post(
        f"/environments/{environment.id}/watches", data=form(environment, every_seconds="20 s"), headers=HTMX
    )
    assert wrong.status_code == 422 and "once a minute" in wrong.text and 'id="watch-form"' in wrong.text
    made = browser_client.post(f"/environments/{environment.id}/watches", data=form(environment), headers=HTMX)
    assert made.status_code == 200 and made.headers["HX-Redirect"].startswith("/watches/"), made.text
    watch = session.query(Watch).one()
    assert watch.threshold_bytes_per_second == 40 * MIB and watch.path_label == "p -> s"
    listed = browser_client.get(f"/environments/{environment.id}")
    assert f'id="watch-state-{watch.id}"' in listed.text and "NOT YET KNOWN" in listed.text


def test_the_watch_page_draws_checks_on_state_bands(browser_client, session):
    environment = environment_with_hosts(session)
    browser_client.post(
        f"/environments/{environment.id}/watches", data=form(environment, agree_m="1", of_n="1"), headers=HTMX
    )
    watch = session.query(Watch).one()
    start = utcnow() - timedelta(hours=1)
    for i, (measured, verdict) in enumerate(((50, Verdict.ok), (30, Verdict.failing), (None, None), (60, Verdict.ok))):
        skipped = verdict is None
        session.add(
            WatchCheck(
                watch_id=watch.id,
                at=start + timedelta(minutes=15 * i),
                run_ids=[],
                status=CheckStatus.skipped if skipped else CheckStatus.judged,
                verdict=verdict or Verdict.skipped,
                measured_bytes_per_second=None if skipped else measured * MIB,
                required_bytes_per_second=40 * MIB,
                reason="skipped: the hosts were busy with run #7" if skipped else "",
            )
        )
    watch.state, watch.transitions = WatchState.ok, 3
    session.add(
        Notification(
            watch_id=watch.id,
            transition=2,
            receiver_id=None,
            from_state="ok",
            to_state="failing",
            payload={},
            status="delivered",
            attempts=1,
            last_result="HTTP 200",
        )
    )
    session.commit()
    page = browser_client.get(f"/watches/{watch.id}")
    assert page.status_code == 200
    assert 'id="watch-state">OK' in page.text and "40 MiB/s" in page.text and "threshold" in page.text
    assert 'id="watch-forecast"' in page.text and "history" in page.text  # no history: says what it needs
    figure = json.loads(html.unescape(page.text.split('id="watch-chart" data-figure=\'')[1].split("'")[0]))
    names = [trace["name"] for trace in figure["data"]]
    assert names[:3] == ["required (MiB/s)", "measured (MiB/s)", "skipped check"]
    assert figure["data"][1]["y"] == [50, 30, 60]
    fills = [shape["fillcolor"] for shape in figure["layout"]["shapes"]]
    assert len(fills) == 3 and "214,39,40" in fills[1]  # OK, then FAILING, then OK again
    assert "HTTP 200" in page.text and "OK → FAILING" in page.text and "busy with run #7" in page.text


def test_silence_and_stop(browser_client, session):
    environment = environment_with_hosts(session)
    browser_client.post(f"/environments/{environment.id}/watches", data=form(environment), headers=HTMX)
    watch = session.query(Watch).one()
    until = (utcnow() + timedelta(hours=2)).strftime("%Y-%m-%d %H:%M")
    silenced = browser_client.post(f"/watches/{watch.id}/silence", data={"until": until, "reason": "firewall change"})
    assert silenced.status_code == 200 and 'id="watch-silenced"' in silenced.text and "firewall change" in silenced.text
    past = browser_client.post(f"/watches/{watch.id}/silence", data={"until": "2020-01-01 00:00"})
    assert past.status_code == 422 and "in the future" in past.text
    stopped = browser_client.post(f"/watches/{watch.id}/stop")
    assert stopped.status_code == 303
    session.expire_all()
    assert session.get(Watch, watch.id).active is False


def test_receivers_page_shows_the_secret_once_and_is_admin_only(browser_client, app, session):
    from fastapi.testclient import TestClient

    from redolab.auth.models import Role
    from tests.conftest import log_in
    from tests.factories import make_user

    hook = {"name": "dba hook", "kind": "webhook", "url": "https://hooks.example.com/redolab/abc"}
    added = browser_client.post("/notification-receivers", data=hook)
    assert added.status_code == 201 and 'id="receiver-secret"' in added.text
    secret = added.text.split('id="receiver-secret"')[1].split("<code>")[1].split("</code>")[0]
    assert len(secret) >= 32
    listed = browser_client.get("/notification-receivers")
    assert "dba hook" in listed.text and secret not in listed.text and "/abc" not in listed.text  # shortened URL
    wrong = browser_client.post("/notification-receivers", data={"name": "x", "kind": "slack", "url": ""})
    assert wrong.status_code == 422 and "needs its URL" in wrong.text
    # the page's test message (its transaction ended before sending): the receiver's status alone
    receiver_id = session.query(NotificationReceiver).filter_by(name="dba hook").one().id
    tested = browser_client.post(f"/notification-receivers/{receiver_id}/test")
    assert tested.status_code == 200 and 'id="receiver-tested"' in tested.text
    assert "Test message to dba hook: not delivered (" in tested.text  # hooks.example.com is not reachable here
    make_user(session, "olga", role=Role.operator)
    with TestClient(app, follow_redirects=False) as operator:
        assert log_in(operator, "olga").status_code == 303
        assert operator.get("/notification-receivers").status_code == 403


def test_start_again_at_the_cap_answers_htmx_with_the_reason_alone(browser_client, session):
    """Start again refused at the owner's cap of active schedules: htmx shows the answer's text beside
    the button, so it gets the reason as text (429), not a whole page; a plain form post gets the page."""
    environment = environment_with_hosts(session)
    made = browser_client.post(f"/environments/{environment.id}/watches", data=form(environment), headers=HTMX)
    assert made.status_code == 200, made.text
    watch = session.query(Watch).one()
    assert browser_client.post(f"/watches/{watch.id}/stop", headers=HTMX).status_code == 200
    app = browser_client.app
    settings = app.state.settings
    app.state.settings = settings.model_copy(update={"max_active_schedules_per_user": 0})
    try:
        refused = browser_client.post(f"/watches/{watch.id}/start", headers=HTMX)
        plain = browser_client.post(f"/watches/{watch.id}/start")
    finally:
        app.state.settings = settings
    assert refused.status_code == 429 and refused.headers["content-type"].startswith("text/plain")
    assert "REDOLAB_MAX_ACTIVE_SCHEDULES_PER_USER" in refused.text and "<html" not in refused.text
    assert plain.status_code == 429 and "<html" in plain.text and "REDOLAB_MAX_ACTIVE_SCHEDULES_PER_USER" in plain.text
    session.expire_all()
    assert session.get(Watch, watch.id).active is False


def test_a_non_ascii_digit_is_a_422_not_a_500(browser_client, session):
    """'²'.isdigit() is true and int('²') raises: the forms pass what was sent to the schemas, which
    refuse it beside its field, and nothing is made."""
    environment = environment_with_hosts(session)
    made = browser_client.post(
        f"/environments/{environment.id}/watches", data={**form(environment), "receiver_ids": "²"}, headers=HTMX
    )
    assert made.status_code == 422 and 'id="watch-form"' in made.text
    assert session.query(Watch).count() == 0
    schedule = browser_client.post(
        f"/environments/{environment.id}/collect/settings", data={"collect_every_seconds": "²"}, headers=HTMX
    )
    assert schedule.status_code == 422, schedule.text[:300]
    session.refresh(environment)
    assert environment.collect_every_seconds is None


def test_the_bands_start_in_the_state_the_watch_was_in(browser_client, session):
    """The chart shows the last 500 checks; its bands are replayed from the verdicts. Replayed from
    "not yet known" at the first check shown, a watch FAILING before it began the chart unknown; the
    checks before it are replayed first."""
    from redolab.watches import service
    from redolab.web.watches import band_states

    environment = environment_with_hosts(session)
    browser_client.post(f"/environments/{environment.id}/watches", data=form(environment), headers=HTMX)
    watch = session.query(Watch).one()
    start = utcnow() - timedelta(days=3)
    verdicts = [Verdict.failing] * 3 + [Verdict.ok] * service.CHECKS_SHOWN
    session.add_all(
        WatchCheck(
            watch_id=watch.id,
            at=start + timedelta(minutes=5 * i),
            run_ids=[],
            status=CheckStatus.judged,
            verdict=verdict,
            measured_bytes_per_second=(50 if verdict is Verdict.ok else 30) * MIB,
            required_bytes_per_second=40 * MIB,
        )
        for i, verdict in enumerate(verdicts)
    )
    session.commit()
    checks = service.list_checks(session=session, watch=watch)
    assert len(checks) == service.CHECKS_SHOWN and all(c.verdict is Verdict.ok for c in checks)
    states = band_states(session, watch, checks, checks)
    assert states[:3] == ["failing", "ok", "ok"]  # 2 of the last 3 failed at the first check shown
    page = browser_client.get(f"/watches/{watch.id}")
    assert page.status_code == 200
    figure = json.loads(html.unescape(page.text.split('id="watch-chart" data-figure=\'')[1].split("'")[0]))
    fills = [shape["fillcolor"] for shape in figure["layout"]["shapes"]]
    assert len(fills) == 2 and "214,39,40" in fills[0]  # the chart opens on a FAILING band, then OK
