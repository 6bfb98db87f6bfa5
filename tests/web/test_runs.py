"""Run pages over HTTP: the form, the live fragment, the record, cancel, raw download."""

import json

from sqlalchemy import func, select

from redolab.runs import service as run_service
from redolab.runs.models import Run, RunStatus
from redolab.runs.schemas import RunCreate
from tests.execution import execute_next, reload, request_run
from tests.factories import make_environment, make_host

HTMX = {"HX-Request": "true"}


def local_env(session):
    environment = make_environment(session)
    primary = make_host(session, environment, name="p", transport="local", role="primary")
    standby = make_host(session, environment, name="s", transport="local", role="standby")
    session.refresh(environment)
    return environment, primary, standby


def test_form_defaults_and_errors(browser_client, session):
    environment, primary, standby = local_env(session)
    page = browser_client.get(f"/environments/{environment.id}")
    assert 'id="run-form"' in page.text and 'value="1 MiB"' in page.text and 'value="60 s"' in page.text
    bad = browser_client.post(
        f"/environments/{environment.id}/runs",
        data={
            "client_host_id": primary.id,
            "server_host_id": standby.id,
            "message_bytes": "1 Mb",
            "duration_seconds": "60",
            "conns": "0",
            "interval_seconds": "5 s",
            "write_dir": "/tmp/x;reboot",
        },
        headers=HTMX,
    )
    assert bad.status_code == 422
    for message in ("looks like bits", "has no unit", "Must be at least 1.", "is not a safe absolute directory"):
        assert message in bad.text, message
    assert 'value="1 Mb"' in bad.text  # what was typed is kept
    assert browser_client.get(f"/api/v1/environments/{environment.id}/runs").json()["count"] == 0


def test_run_page_live_then_record(browser_client, session, engine, secret_key):
    environment, primary, standby = local_env(session)
    created = browser_client.post(
        f"/environments/{environment.id}/runs",
        data={
            "client_host_id": primary.id,
            "server_host_id": standby.id,
            "duration_seconds": "1.5 s",
            "interval_seconds": "0.5 s",
            "message_bytes": "256 KiB",
            "conns": "2",
            "mode": "async",
            "label": "l1",
        },
    )
    assert created.status_code == 303
    run_url = created.headers["location"]
    queued = browser_client.get(run_url)
    assert "queued" in queued.text and 'hx-trigger="every 250ms"' in queued.text
    live = browser_client.get(run_url + "/live", headers=HTMX)
    assert live.status_code == 200 and 'id="run-live"' in live.text and "<html" not in live.text
    assert execute_next(engine, secret_key)
    finished = browser_client.get(run_url + "/live", headers=HTMX)
    # One live pattern: the finished block is the whole record, without a trigger, so polling stops.
    assert finished.status_code == 200 and "<html" not in finished.text and 'id="summary"' in finished.text
    assert 'hx-trigger="every' not in finished.text and "HX-Refresh" not in finished.headers
    record = browser_client.get(run_url)
    assert "succeeded" in record.text and 'hx-trigger="every' not in record.text
    for shown in ('id="summary"', "MiB/s", "Mbit/s", 'id="tcp-chart"', 'id="settings"', "tcp_wmem", "--conns 2"):
        assert shown in record.text, shown
    download = browser_client.get(run_url + "/events.jsonl")
    assert download.headers["content-disposition"].startswith("attachment")
    lines = [json.loads(line) for line in download.text.splitlines()]
    assert {("client", "end"), ("server", "end")} <= {(line["role"], line["event"]) for line in lines}
    listing = browser_client.get(f"/environments/{environment.id}")
    assert "succeeded" in listing.text and "l1" in listing.text


def test_cancel_from_the_page(browser_client, session):
    environment, primary, standby = local_env(session)
    run = request_run(session, environment, primary, standby)
    response = browser_client.post(f"/runs/{run.id}/cancel", headers=HTMX)
    assert response.headers["HX-Redirect"] == f"/runs/{run.id}"
    assert reload(session, run).status is RunStatus.cancelled


def test_viewer_sees_no_run_form_and_cannot_post(anonymous, session):
    from redolab.auth.models import Role
    from tests.conftest import log_in
    from tests.factories import make_user

    environment, primary, standby = local_env(session)
    make_user(session, "vic", role=Role.viewer)
    log_in(anonymous, "vic")
    page = anonymous.get(f"/environments/{environment.id}")
    assert 'id="run-form"' not in page.text and 'id="credentials"' not in page.text
    response = anonymous.post(
        f"/environments/{environment.id}/runs", data={"client_host_id": primary.id, "server_host_id": standby.id}
    )
    assert response.status_code == 403
    assert "needs the operator role" in response.text


def test_unknown_run_is_404(browser_client):
    assert browser_client.get("/runs/9999").status_code == 404


def test_cross_field_errors_name_their_field(api_client, session):
    environment, primary, standby = local_env(session)
    response = api_client.post(
        f"/api/v1/environments/{environment.id}/runs",
        json={"client_host_id": primary.id, "server_host_id": standby.id, "duration_seconds": 1, "sync_write": True},
    )
    assert response.status_code == 422
    locations = {tuple(item["loc"]): item["msg"] for item in response.json()["detail"]}
    assert "cannot be longer than the duration" in locations[("body", "interval_seconds")]
    assert "needs a write directory" in locations[("body", "sync_write")]


def test_empty_label_is_fine(browser_client, session):
    environment, primary, standby = local_env(session)
    response = browser_client.post(
        f"/environments/{environment.id}/runs",
        data={
            "client_host_id": primary.id,
            "server_host_id": standby.id,
            "label": "",
            "write_dir": "",
            "duration_seconds": "10 s",
            "interval_seconds": "1 s",
        },
    )
    assert response.status_code == 303, response.text


def test_the_run_form_at_the_queue_cap_says_which_cap(browser_client, session):
    """The form answers a full queue as the API does (429 naming the cap), in the page's error box."""
    environment, primary, standby = local_env(session)
    run_in = RunCreate(client_host_id=primary.id, server_host_id=standby.id, duration_seconds=60, interval_seconds=5)
    for _ in range(20):  # the default REDOLAB_MAX_QUEUED_PER_USER
        run_service.create_run(session=session, environment=environment, run_in=run_in, requested_by="alice")
    refused = browser_client.post(
        f"/environments/{environment.id}/runs",
        data={
            "client_host_id": primary.id,
            "server_host_id": standby.id,
            "duration_seconds": "60 s",
            "interval_seconds": "5 s",
            "label": "",
        },
        headers=HTMX,
    )
    assert refused.status_code == 429, refused.text
    assert "REDOLAB_MAX_QUEUED_PER_USER=20" in refused.text and "20 runs and sweeps queued" in refused.text
    assert session.scalar(select(func.count()).select_from(Run)) == 20


def test_the_run_page_says_once_how_an_ambiguous_unit_was_read(browser_client, session):
    """'1 GB/s' for a pacing rate (bits on a link) reads two ways: the page the form leads to says how
    it was read, once; a rate typed in bits says nothing."""
    environment, primary, standby = local_env(session)
    form = {"client_host_id": primary.id, "server_host_id": standby.id, "message_bytes": "1 MiB",
            "duration_seconds": "10 s", "interval_seconds": "1 s", "conns": "1", "mode": "async"}  # fmt: skip
    created = browser_client.post(
        f"/environments/{environment.id}/runs", data={**form, "rate_bits_per_second": "1 GB/s"}, headers=HTMX
    )
    run_url = created.headers["HX-Redirect"]
    first = browser_client.get(run_url)
    assert 'id="unit-readings"' in first.text and "1 GB/s read as 8,589.93 Mbit/s" in first.text
    assert 'id="unit-readings"' not in browser_client.get(run_url).text  # said once
    plain = browser_client.post(
        f"/environments/{environment.id}/runs", data={**form, "rate_bits_per_second": "500 Mbit/s"}, headers=HTMX
    )
    assert 'id="unit-readings"' not in browser_client.get(plain.headers["HX-Redirect"]).text


def test_the_run_form_starts_a_sync_run_under_load(browser_client, session):
    """'Under an ASYNC load of' on the form: the SYNC run and its load, queued together; ASYNC refused."""
    from redolab.runs import loaded

    environment, primary, standby = local_env(session)
    form = {"client_host_id": primary.id, "server_host_id": standby.id, "message_bytes": "8 KiB",
            "duration_seconds": "4 s", "interval_seconds": "1 s", "conns": "1", "load_conns": "3"}  # fmt: skip
    refused = browser_client.post(f"/environments/{environment.id}/runs", data={**form, "mode": "async"}, headers=HTMX)
    assert refused.status_code == 422 and "one SYNC connection" in refused.text
    created = browser_client.post(f"/environments/{environment.id}/runs", data={**form, "mode": "sync"}, headers=HTMX)
    run = session.get(Run, int(created.headers["HX-Redirect"].rsplit("/", 1)[1]))
    load = session.get(Run, loaded.load_run_id(run.tags))
    assert (run.mode, run.conns, load.mode, load.conns) == ("sync", 1, "async", 3)
