"""The "Collect from the database" section: the host's settings (admin), the queries shown before anything
runs, Collect, the collections with their result, the facts beside the environment's values and Apply."""

from __future__ import annotations

from redolab.collect.scripts import SCRIPTS
from tests.execution import execute_next

HX = {"HX-Request": "true"}


def test_section_shows_queries_collects_and_applies(session, engine, secret_key, oracle_env, browser_client, database):
    environment, _ = oracle_env
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200
    assert 'id="collect"' in page.text and "Collect from the database" in page.text
    assert "v$archived_log" in page.text  # the queries' text, before anything runs
    assert "dba_hist_sysmetric_summary" not in page.text  # AWR is not run (nor shown) without the licence
    assert SCRIPTS["oracle_archived_log"].sha256[:16] in page.text
    assert 'id="collect-button"' in page.text and database.calls() == []
    # the Diagnostics Pack tick and a daily schedule
    response = browser_client.post(
        f"/environments/{environment.id}/collect/settings",
        headers=HX,
        data={"diagnostics_pack_licensed": "on", "collect_every_seconds": "86400"},
    )
    assert response.status_code == 200, response.text
    assert "dba_hist_sysmetric_summary" in response.text and "licensed: AWR is read" in response.text
    assert 'id="collect-compressibility"' in page.text  # an Oracle host: the step may be asked for
    response = browser_client.post(f"/environments/{environment.id}/collect", headers=HX)
    assert response.status_code == 200
    assert 'hx-trigger="every 1s"' in response.text  # polls while the collection is queued
    assert "with compressibility" not in response.text  # not ticked: not asked for
    assert execute_next(engine, secret_key)
    response = browser_client.get(f"/environments/{environment.id}/collect", headers=HX)
    assert "succeeded" in response.text and "every 1s" not in response.text
    assert "imported as import #" in response.text
    assert 'id="collect-facts"' in response.text and "Etc/GMT-1" in response.text
    response = browser_client.post(f"/collections/{_last_id(session)}/apply-facts", headers=HX)
    assert response.status_code == 200
    assert 'id="collect-facts-agree"' in response.text


def test_admin_sets_database_access_and_the_password_is_never_shown(session, oracle_env, browser_client, database):
    environment, _ = oracle_env
    data = {
        "db_kind": "oracle",
        "oracle_sid": "ORCL1",
        "oracle_home": str(database.oracle_home),
        "db_user": "collector",
        "password": "pw-never-shown-9",
    }
    response = browser_client.post(f"/environments/{environment.id}/collect/access", headers=HX, data=data)
    assert response.status_code == 200, response.text
    assert "password stored (encrypted)" in response.text and "pw-never-shown-9" not in response.text
    bad = browser_client.post(
        f"/environments/{environment.id}/collect/access",
        headers=HX,
        data={**data, "oracle_home": "/u01/$(reboot)", "password": "pw-never-shown-9"},
    )
    assert bad.status_code == 422 and "absolute path" in bad.text and "pw-never-shown-9" not in bad.text
    page = browser_client.get(f"/environments/{environment.id}")
    assert "pw-never-shown-9" not in page.text


def _last_id(session) -> int:
    from sqlalchemy import func, select

    from redolab.collect.models import Collection

    session.expire_all()
    return session.scalar(select(func.max(Collection.id)))


def test_viewer_sees_results_but_no_forms(app, session, oracle_env):
    from fastapi.testclient import TestClient

    from tests.conftest import log_in
    from tests.factories import make_user

    environment, _ = oracle_env
    make_user(session, "vic", role="viewer")
    with TestClient(app, follow_redirects=False) as client:
        log_in(client, "vic")
        page = client.get(f"/environments/{environment.id}")
        assert page.status_code == 200
        assert 'id="collect"' in page.text and "v$archived_log" in page.text
        assert 'id="collect-button"' not in page.text and 'id="collect-access-form"' not in page.text
        assert "An operator or an admin collects" in page.text
        assert client.post(f"/environments/{environment.id}/collect", headers=HX).status_code == 403


def test_the_form_asks_for_the_compressibility_step(session, oracle_env, browser_client, database):
    from redolab.collect.models import Collection

    environment, _ = oracle_env
    response = browser_client.post(
        f"/environments/{environment.id}/collect", headers=HX, data={"compressibility": "on"}
    )
    assert response.status_code == 200, response.text
    assert "with compressibility" in response.text
    assert session.get(Collection, _last_id(session)).compressibility
