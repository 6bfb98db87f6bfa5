"""Rehearsal pages over HTTP: the form on the environment page (errors beside their fields, roles),
the rehearsal page (what is replayed, live block, the measured figures), cancel, schedule download."""

import hashlib
import json
from datetime import timedelta
from pathlib import Path

from redolab.auth.models import Role
from redolab.core.db import utcnow
from redolab.redo import service as redo_service
from redolab.rehearsals.models import Rehearsal
from redolab.rehearsals.service import record_result
from redolab.runs.models import RunEvent, RunStatus
from tests.conftest import log_in
from tests.factories import make_environment, make_host, make_user

HTMX = {"HX-Request": "true"}
FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
# gv_archived_log.csv: thread 1 from 08:00 to 08:20, thread 2 from 08:05 to 08:15 (15 Jan 2022, UTC)
PERIOD = {"window": "period", "window_from": "2022-01-15 08:05", "window_to": "2022-01-15 08:15"}


def environment_with_history(session, history: str | None = "gv_archived_log.csv", **fields):
    """'This machine' as primary and standby (node 1), and a per-log history with times."""
    environment = make_environment(session, **fields)
    make_host(session, environment, name="p", transport="local", role="primary")
    make_host(session, environment, name="s", transport="local", role="standby")
    if history:
        redo_service.import_file(
            session=session, environment=environment, path=FIXTURES / history, filename=history, imported_by="alice"
        )
    session.refresh(environment)
    return environment


def start(client, environment, **fields):
    form = {"scale": "1", "speedup": "1", "mode": "async", "message_bytes": "", "label": "", **fields}
    return client.post(f"/environments/{environment.id}/rehearsals", data=form, headers=HTMX)


def started(client, session, environment, **fields) -> Rehearsal:
    response = start(client, environment, **{**PERIOD, **fields})
    assert response.status_code == 200 and "HX-Redirect" in response.headers, response.text
    rehearsal_id = int(response.headers["HX-Redirect"].rsplit("/", 1)[1])
    session.expire_all()
    return session.get(Rehearsal, rehearsal_id)


def replayed(session, rehearsal: Rehearsal, status=RunStatus.succeeded, intervals: int = 3, reason=None) -> None:
    """The rehearsal's run as the worker leaves it: the client's replay intervals stored (a backlog
    that builds and drains), its end event unless it failed, and its final status."""
    run = rehearsal.runs[0]
    lines = [{"event": "start", "data": {"conns": run.conns}}]
    for i in range(intervals):
        backlog = [4, 8, 0][i % 3] * 1024 * 1024
        lines.append(
            {
                "event": "interval",
                "data": {
                    "start_seconds": float(i),
                    "end_seconds": float(i + 1),
                    "bytes_generated": 10 * 1024 * 1024,
                    "bytes_sent": 10 * 1024 * 1024,
                    "bytes_received": 10 * 1024 * 1024 - backlog,
                    "backlog_bytes": backlog,
                    "lag_seconds": [0.5, 1.25, 0.0][i % 3],
                },
            }
        )
    if status is RunStatus.succeeded:
        streams = [
            {"id": c, "max_lag_seconds": 1.25 - c * 0.5, "max_backlog_bytes": (8 - c * 4) * 1024 * 1024}
            for c in range(run.conns)
        ]
        lines.append(
            {
                "event": "end",
                "data": {
                    "max_lag_seconds": 1.25,
                    "drain_seconds": 1.5,
                    "drained": True,
                    "bytes_received": intervals * 10 * 1024 * 1024,
                    "streams": streams,
                },
            }
        )
    for seq, line in enumerate(lines):
        session.add(RunEvent(run_id=run.id, seq=seq, role="client", event=line["event"], line=json.dumps(line)))
    run.status, run.failure_reason = status, reason
    run.started_at, run.finished_at = utcnow() - timedelta(seconds=intervals), utcnow()
    session.commit()
    record_result(session=session, rehearsal_id=rehearsal.id)  # as the worker does when the run ends


def test_the_form_is_on_the_environment_page(browser_client, session):
    environment = environment_with_history(session)
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200
    shown_on_page = (
        'id="rehearsals"', 'href="#rehearsals"', 'id="rehearsal-form"', 'id="no-rehearsals"',
        'value="worst-60m" selected', 'id="rh-window_from"', 'id="rh-speedup"', "Period from (UTC)",
    )  # fmt: skip
    for shown in shown_on_page:
        assert shown in page.text, shown
    assert "drag across the History chart" in page.text


def test_no_history_no_form_and_the_empty_state_says_why(browser_client, session):
    environment = environment_with_history(session, history=None)
    page = browser_client.get(f"/environments/{environment.id}")
    assert 'id="rehearsal-form"' not in page.text
    assert "a rehearsal replays the redo history: import it first" in page.text


def test_a_window_without_timed_data_is_refused_beside_its_field(browser_client, session):
    """The fixture's threads overlap for 10 minutes: no worst hour; a period outside the data has no
    redo; an hour-of-day profile has no times at all. Each refusal is beside the field it concerns."""
    environment = environment_with_history(session)
    worst = start(browser_client, environment, window="worst-60m")
    assert worst.status_code == 422
    assert 'id="e-rh-window"' in worst.text and "no stretch of 60 minutes" in worst.text
    assert "<html" not in worst.text and 'id="rehearsals"' in worst.text  # the section, swapped in place
    outside = start(
        browser_client, environment, window="period", window_from="2022-01-16 08:00", window_to="2022-01-16 09:00"
    )
    assert outside.status_code == 422
    assert 'id="e-rh-window_from"' in outside.text and "no redo with times from" in outside.text
    assert 'value="2022-01-16 08:00"' in outside.text  # what was typed is kept
    profile = environment_with_history(session, history="sysmetric_hourly_profile.csv")
    untimed = start(browser_client, profile, window="worst-15m")
    assert untimed.status_code == 422 and 'id="e-rh-window"' in untimed.text
    assert "nothing to replay" in untimed.text
    assert session.query(Rehearsal).count() == 0


def test_a_bad_period_is_refused_beside_from_or_to(browser_client, session):
    environment = environment_with_history(session)
    unreadable = start(
        browser_client, environment, window="period", window_from="yesterday", window_to="2022-01-15 08:15"
    )
    assert unreadable.status_code == 422
    assert 'id="e-rh-window_from"' in unreadable.text and "is not an ISO time" in unreadable.text
    backwards = start(
        browser_client, environment, window="period", window_from="2022-01-15 08:15", window_to="2022-01-15 08:05"
    )
    assert backwards.status_code == 422
    assert 'id="e-rh-window_to"' in backwards.text and "is not after the start" in backwards.text
    half = start(browser_client, environment, window="period", window_from="2022-01-15 08:05", window_to="")
    assert half.status_code == 422 and "Give the end of the period." in half.text
    speed = start(browser_client, environment, **PERIOD, speedup="0.5")
    assert speed.status_code == 422 and 'id="e-rh-speedup"' in speed.text and "Must be at least 1" in speed.text
    assert session.query(Rehearsal).count() == 0


def test_a_plain_form_post_comes_back_as_a_page_with_its_errors(browser_client, session):
    environment = environment_with_history(session)
    response = browser_client.post(f"/environments/{environment.id}/rehearsals", data={"window": "worst-60m"})
    assert response.status_code == 422 and "<html" in response.text and 'id="e-rh-window"' in response.text
    assert f"<h1>Rehearsal: {environment.name}</h1>" in response.text  # a page of its own has its title


def test_the_section_refreshes_itself_as_a_fragment(browser_client, session):
    """Hosts added or removed refresh the section (hx-trigger hosts-changed): htmx gets the fragment,
    a plain request goes to the section on the whole page."""
    environment = environment_with_history(session)
    fragment = browser_client.get(f"/environments/{environment.id}/rehearsals", headers=HTMX)
    assert fragment.status_code == 200 and "<html" not in fragment.text and 'id="rehearsal-form"' in fragment.text
    plain = browser_client.get(f"/environments/{environment.id}/rehearsals")
    assert plain.status_code == 303 and plain.headers["location"] == f"/environments/{environment.id}#rehearsals"


def test_a_viewer_sees_no_form_and_cannot_start_one(anonymous, session):
    environment = environment_with_history(session)
    make_user(session, "vic", role=Role.viewer)
    log_in(anonymous, "vic")
    page = anonymous.get(f"/environments/{environment.id}")
    assert 'id="rehearsal-form"' not in page.text
    assert "an operator or an admin starts rehearsals; you are a viewer" in page.text
    refused = anonymous.post(f"/environments/{environment.id}/rehearsals", data=PERIOD)
    assert refused.status_code == 403 and "needs the operator role" in refused.text
    assert session.query(Rehearsal).count() == 0


def test_the_page_says_what_is_replayed(browser_client, session):
    environment = environment_with_history(session)
    rehearsal = started(browser_client, session, environment, speedup="10", label="batch hour")
    page = browser_client.get(f"/rehearsals/{rehearsal.id}")
    assert page.status_code == 200
    for shown in (
        f"Rehearsal #{rehearsal.id}: batch hour",
        "2022-01-15 08:05 to 08:15 UTC",  # the window, on the database's clock
        "spread evenly",  # the granularity statement
        "not in the replay",
        'id="replayed-threads">1, 2<',
        "Time compressed 10×: a quick look, not evidence",
        rehearsal.schedule_sha256,
        f'href="/runs/{rehearsal.runs[0].id}"',
        f'href="/rehearsals/{rehearsal.id}/schedule.txt"',
        'hx-trigger="every 250ms"',  # queued: the live block polls
    ):
        assert shown in page.text, shown
    listed = browser_client.get(f"/environments/{environment.id}")
    assert f'href="/rehearsals/{rehearsal.id}"' in listed.text and "queued" in listed.text
    assert 'id="replayed-speedup">10 times faster than real time<' in page.text
    assert "<td>as recorded, 10 times faster than real time<" in listed.text  # not "x 1 / 10x"


def test_a_period_is_read_on_the_databases_clock(browser_client, session):
    """The History chart shows the database's clock; the period typed or dragged from it is read on
    that clock, and the page says the window on it."""
    environment = environment_with_history(session, time_zone="Europe/Paris")
    rehearsal = started(browser_client, session, environment)
    assert rehearsal.window_start.isoformat().startswith("2022-01-15T07:05")  # 08:05 in Paris, stored in UTC
    page = browser_client.get(f"/rehearsals/{rehearsal.id}")
    assert "2022-01-15 08:05 to 08:15 Europe/Paris" in page.text


def test_real_time_is_not_called_compressed(browser_client, session):
    environment = environment_with_history(session)
    rehearsal = started(browser_client, session, environment)
    page = browser_client.get(f"/rehearsals/{rehearsal.id}")
    assert 'id="replayed-speedup">real time<' in page.text and "a quick look, not evidence" not in page.text
    assert '<div class="muted">volume as recorded</div>' in page.text and "volume scale" not in page.text


def test_the_live_block_stops_polling_when_finished(browser_client, session):
    environment = environment_with_history(session)
    rehearsal = started(browser_client, session, environment)
    live = browser_client.get(f"/rehearsals/{rehearsal.id}/live", headers=HTMX)
    assert live.status_code == 200 and 'id="rehearsal-live"' in live.text and "<html" not in live.text
    assert 'hx-trigger="every' in live.text
    replayed(session, rehearsal)
    finished = browser_client.get(f"/rehearsals/{rehearsal.id}/live", headers=HTMX)
    assert finished.status_code == 200 and "<html" not in finished.text
    assert 'hx-trigger="every' not in finished.text  # the final block carries no trigger: polling stops
    for shown in ('id="rehearsal-summary"', 'id="rehearsal-chart"', 'id="summary-max-lag">1.25 s',
                  'id="summary-max-backlog">8 MiB', 'id="summary-drain">1.5 s', 'id="summary-threads"'):  # fmt: skip
        assert shown in finished.text, shown
    assert 'id="summary-slip"' not in finished.text  # ASYNC: no slip
    page = browser_client.get(f"/rehearsals/{rehearsal.id}")
    assert "succeeded" in page.text and 'hx-trigger="every' not in page.text
    listed = browser_client.get(f"/environments/{environment.id}")
    assert "1.25 s" in listed.text and "8 MiB" in listed.text


def test_a_failed_rehearsal_says_why_and_keeps_its_intervals(browser_client, session):
    environment = environment_with_history(session)
    rehearsal = started(browser_client, session, environment)
    replayed(session, rehearsal, status=RunStatus.failed, intervals=2, reason="the standby went away")
    page = browser_client.get(f"/rehearsals/{rehearsal.id}")
    assert 'id="failure-reason"' in page.text and "the standby went away" in page.text
    assert 'id="kept-intervals"' in page.text and "the 2 intervals measured until then are kept" in page.text
    assert 'id="rehearsal-chart"' in page.text and 'id="summary-drain">not drained' in page.text


def test_cancel_from_the_page(browser_client, session):
    environment = environment_with_history(session)
    rehearsal = started(browser_client, session, environment)
    response = browser_client.post(f"/rehearsals/{rehearsal.id}/cancel", headers=HTMX)
    assert response.headers["HX-Redirect"] == f"/rehearsals/{rehearsal.id}"
    session.expire_all()
    assert [run.status for run in session.get(Rehearsal, rehearsal.id).runs] == [RunStatus.cancelled]


def test_the_schedule_downloads_as_replayed(browser_client, session):
    environment = environment_with_history(session)
    rehearsal = started(browser_client, session, environment)
    download = browser_client.get(f"/rehearsals/{rehearsal.id}/schedule.txt")
    assert download.status_code == 200
    assert download.headers["content-disposition"] == (
        f'attachment; filename="redolab-rehearsal-{rehearsal.id}-schedule.txt"'
    )
    assert download.headers["content-type"].startswith("text/plain")
    assert hashlib.sha256(download.content).hexdigest() == rehearsal.schedule_sha256
    assert download.headers["x-schedule-sha256"] == rehearsal.schedule_sha256
    assert download.text.startswith("# redolab rehearsal schedule: CONNECTION OFFSET_SECONDS BYTES")


def test_an_unknown_rehearsal_is_404(browser_client):
    assert browser_client.get("/rehearsals/9999").status_code == 404
    assert browser_client.get("/rehearsals/9999/schedule.txt").status_code == 404


def test_a_scale_refusal_is_beside_the_scale_field(browser_client, session, monkeypatch):
    """A limit the scale breaks (a slot's rate after scale) is shown beside Scale, not beside the
    period's start (the limit lowered to 1 MB/s so the fixture's redo breaks it at scale 1)."""
    from redolab.rehearsals import schedule as schedule_module

    environment = environment_with_history(session)
    monkeypatch.setattr(schedule_module, "MAX_BYTES_PER_SECOND", 1e6)
    refused = start(browser_client, environment, **PERIOD)
    assert refused.status_code == 422
    assert 'id="e-rh-scale"' in refused.text and "choose a smaller scale" in refused.text
    assert 'id="e-rh-window_from"' not in refused.text
    assert session.query(Rehearsal).count() == 0


def test_threads_left_out_of_the_replay_are_said_on_the_page_and_in_the_api(browser_client, api_client, session):
    """A scale so small that thread 1's 472 MB in the period round to no whole byte (thread 2's 1.26 GB
    give one): the rehearsal replays thread 2 and says why thread 1 is not in it, on the page, in the
    JSON and in the schedule's header."""
    environment = environment_with_history(session)
    rehearsal = started(browser_client, session, environment, scale="0.000000001")
    said = "thread 1 has no redo in the window after scale 1e-09: not in the replay"
    assert rehearsal.threads == [2] and rehearsal.notes == [said]
    page = browser_client.get(f"/rehearsals/{rehearsal.id}")
    assert 'id="replayed-notes"' in page.text and said in page.text
    public = api_client.get(f"/api/v1/rehearsals/{rehearsal.id}").json()
    assert public["notes"] == [said] and public["threads"] == [2]
    assert f"# notes: {said}" in browser_client.get(f"/rehearsals/{rehearsal.id}/schedule.txt").text


def running(browser_client, session):
    """A started rehearsal whose one run is running."""
    rehearsal = started(browser_client, session, environment_with_history(session))
    rehearsal.runs[0].status = RunStatus.running
    return rehearsal, rehearsal.runs[0]


def interval_arrives(session, run, seq: int, lag: float) -> None:
    """The client's interval line `seq` (100 bytes generated, sent and received; `lag` at its end)."""
    data = {"start_seconds": float(seq), "end_seconds": float(seq + 1), "bytes_generated": 100,
            "bytes_sent": 100, "bytes_received": 100, "backlog_bytes": 0, "lag_seconds": lag}  # fmt: skip
    line = json.dumps({"event": "interval", "data": data})
    session.add(RunEvent(run_id=run.id, seq=seq, role="client", event="interval", line=line))


def test_a_live_poll_reads_only_the_lines_that_arrived_since_the_last(browser_client, session, monkeypatch):
    """A day replayed at recorded speed is 86,400 interval lines a run: each poll of the live block
    parses the lines that arrived since the last poll, not all of them again (and once per poll, not
    once for the page and again for the card beside it); the figures are those of every line."""
    from redolab.rehearsals import results

    rehearsal, run = running(browser_client, session)
    parsed = []
    real_parse = results.parse_line
    monkeypatch.setattr(results, "parse_line", lambda line: parsed.append(line) or real_parse(line))

    def arrive(first: int, count: int) -> None:
        for i in range(first, first + count):
            interval_arrives(session, run, i, 0.25 * i)
        session.commit()

    arrive(0, 50)
    assert browser_client.get(f"/rehearsals/{rehearsal.id}/live", headers=HTMX).status_code == 200
    assert len(parsed) == 50
    arrive(50, 3)
    parsed.clear()
    live = browser_client.get(f"/rehearsals/{rehearsal.id}/live", headers=HTMX)
    assert live.status_code == 200 and len(parsed) == 3
    session.expire_all()
    from redolab.rehearsals.service import current_result

    result = current_result(session=session, rehearsal=session.get(Rehearsal, rehearsal.id))
    assert result["series"]["end_seconds"][-1] == 53 and result["max_lag_seconds"] == 0.25 * 52
    assert result["bytes_received"] == 5300
    from redolab.rehearsals import service

    assert service._read_key(run) in service._READ  # kept while it runs ...
    run = session.get(Rehearsal, rehearsal.id).runs[0]
    run.status = RunStatus.succeeded
    session.commit()
    record_result(session=session, rehearsal_id=rehearsal.id)
    assert service._read_key(run) not in service._READ  # ... and dropped once its result is stored
    assert session.get(Rehearsal, rehearsal.id).result["bytes_received"] == 5300


def test_viewers_polling_a_live_rehearsal_share_its_figures_until_a_line_arrives(browser_client, session, monkeypatch):
    """Every viewer polls the live block each second: the figures (from every interval, 16 ms for a
    day's run) are computed once per new line or status, not once per poll of each viewer."""
    from redolab.rehearsals import service

    rehearsal, run = running(browser_client, session)
    computed = []
    real_measured = service.measured
    monkeypatch.setattr(service, "measured", lambda done: computed.append(1) or real_measured(done))

    def arrive(seq: int, lag: float) -> None:
        interval_arrives(session, run, seq, lag)
        session.commit()

    def poll() -> str:
        live = browser_client.get(f"/rehearsals/{rehearsal.id}/live", headers=HTMX)
        assert live.status_code == 200
        return live.text

    arrive(0, 0.5)
    first = [poll() for _ in range(3)]
    assert len(computed) == 1 and first[0] == first[1] == first[2]
    arrive(1, 7.25)
    assert poll() != first[0] and len(computed) == 2
    session.expire_all()
    figures = service.current_result(session=session, rehearsal=session.get(Rehearsal, rehearsal.id))
    assert figures["max_lag_seconds"] == 7.25 and len(computed) == 2  # the same figures, not computed again
    figures["max_lag_seconds"] = 0  # a caller's change stays its own
    assert (
        service.current_result(session=session, rehearsal=session.get(Rehearsal, rehearsal.id))["max_lag_seconds"]
        == 7.25
    )
    run = session.get(Rehearsal, rehearsal.id).runs[0]
    run.status = RunStatus.failed
    session.commit()
    poll()
    assert len(computed) == 3
    key = service._figures_key(rehearsal)
    assert key in service._FIGURES  # one entry a rehearsal, replaced as it changes ...
    record_result(session=session, rehearsal_id=rehearsal.id)
    assert key not in service._FIGURES  # ... dropped once its result is stored
    # stored by another process (or cached by a poll that raced the store): dropped at the next read
    stale = session.get(Rehearsal, rehearsal.id)
    service._FIGURES[key] = ((), {"max_lag_seconds": 1})
    series = service._series_of(session, stale.runs[0])
    assert service._read_key(stale.runs[0]) in service._READ and series is not None
    assert service.current_result(session=session, rehearsal=stale)["max_lag_seconds"] == 7.25  # the stored
    assert key not in service._FIGURES and service._read_key(stale.runs[0]) not in service._READ


def test_progress_counts_the_replays_clock_not_the_set_up(browser_client, session):
    """Running but before its first interval the hosts are being set up (connect, deploy, warm-up): not
    replay time. Then the progress is the last interval's end on the replay's own clock, however long
    ago the worker claimed the run; a finished day says how many intervals it had, not how many
    moments its thinned series keeps."""
    environment = environment_with_history(session)
    rehearsal = started(browser_client, session, environment)
    run = rehearsal.runs[0]
    run.status, run.started_at = RunStatus.running, utcnow() - timedelta(minutes=9)  # claimed long ago
    session.commit()
    setting_up = browser_client.get(f"/rehearsals/{rehearsal.id}/live", headers=HTMX).text
    assert "setting up: connecting to the hosts" in setting_up and "draining the backlog" not in setting_up
    for i in range(3):
        data = {"start_seconds": float(i), "end_seconds": float(i + 1), "bytes_generated": 100, "bytes_sent": 100,
                "bytes_received": 100, "backlog_bytes": 0, "lag_seconds": 0.0}  # fmt: skip
        session.add(
            RunEvent(
                run_id=run.id,
                seq=i,
                role="client",
                event="interval",
                line=json.dumps({"event": "interval", "data": data}),
            )
        )
    session.commit()
    live = browser_client.get(f"/rehearsals/{rehearsal.id}/live", headers=HTMX).text
    assert "3 s of 10 min" in live and "3 intervals" in live and "draining the backlog" not in live
    from redolab.rehearsals.results import RunReplay, measured, stored

    lines = [
        json.dumps(
            {
                "event": "interval",
                "data": {
                    "start_seconds": float(i),
                    "end_seconds": float(i + 1),
                    "bytes_generated": 100,
                    "bytes_sent": 100,
                    "bytes_received": 100,
                    "backlog_bytes": 0,
                    "lag_seconds": 0.5 if i == 7 else 0.0,
                },
            }
        )
        for i in range(3000)
    ]
    session.refresh(rehearsal)
    rehearsal.result = stored(measured([RunReplay(run.id, [1, 2], lines)]))
    assert len(rehearsal.result["series"]["end_seconds"]) < 3000
    run.status = RunStatus.cancelled
    session.commit()
    page = browser_client.get(f"/rehearsals/{rehearsal.id}").text
    assert "the 3,000 intervals measured until then are kept" in page


def test_a_long_live_rehearsal_draws_a_thinned_series_with_every_peak(browser_client, api_client, session):
    """A day at recorded speed is 86,400 intervals a run: every poll of the live block (and the status
    URL) drew all of them, megabytes a second to each viewer. Thinned as the stored result is, with the
    lag's peak among the moments kept and the figures still those of every interval."""
    from redolab.rehearsals.results import STORED_POINTS

    environment = environment_with_history(session)
    rehearsal = started(browser_client, session, environment)
    run = rehearsal.runs[0]
    run.status = RunStatus.running
    count, peak_at = 6_000, 4_321
    for i in range(count):
        lag = 99.0 if i == peak_at else 0.001 * (i % 7)
        data = {"start_seconds": float(i), "end_seconds": float(i + 1), "bytes_generated": 100,
                "bytes_sent": 100, "bytes_received": 100, "backlog_bytes": i % 5, "lag_seconds": lag}  # fmt: skip
        session.add(
            RunEvent(
                run_id=run.id,
                seq=i,
                role="client",
                event="interval",
                line=json.dumps({"event": "interval", "data": data}),
            )
        )
    session.commit()
    result = api_client.get(f"/api/v1/rehearsals/{rehearsal.id}").json()["result"]
    series = result["series"]
    assert result["series_intervals"] == count and len(series["end_seconds"]) <= 2 * (STORED_POINTS + 2)
    assert series["end_seconds"][-1] == count and float(peak_at + 1) in series["end_seconds"]
    assert result["max_lag_seconds"] == 99.0 and result["bytes_received"] == 100 * count
    live = browser_client.get(f"/rehearsals/{rehearsal.id}/live", headers=HTMX)
    assert live.status_code == 200 and len(live.content) < 400_000, len(live.content)
    assert f"{count:,} intervals" in live.text or f"{count:,}" in live.text
