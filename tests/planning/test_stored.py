"""The stored redo analysis: written with the import, read by the page and the API without a row,
computed again when what it was computed from changes; read through one accessor with one cache."""

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import delete, event
from sqlalchemy.engine import Engine

from redolab.redo import analysis, imports
from redolab.redo.analysis import stored_analysis
from redolab.redo.models import RedoRow, StoredAnalysis
from redolab.redo.stored import WEEK_HOURS, heatmap_cells
from tests.factories import make_environment

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"


def _import(api_client, environment, name: str) -> dict:
    with open(FIXTURES / name, "rb") as file:
        preview = api_client.post(
            f"/api/v1/environments/{environment.id}/redo/preview", files={"file": (name, file, "text/csv")}
        )
    assert preview.status_code == 200, preview.text
    response = api_client.post(
        f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": preview.json()["upload_token"]}
    )
    assert response.status_code == 201, response.text
    return response.json()


def test_the_page_and_the_api_read_the_stored_analysis_not_the_rows(api_client, browser_client, session):
    environment = make_environment(session)
    _import(api_client, environment, "gv_archived_log.csv")
    session.expire_all()
    stored = session.get(StoredAnalysis, environment.id)
    assert stored is not None and stored.summary["required_bytes_per_second"] > 0
    analytics = api_client.get(f"/api/v1/environments/{environment.id}/redo/analytics").json()
    page = browser_client.get(f"/environments/{environment.id}").text
    required = page.split('id="redo-required">')[1].split("<")[0]

    session.execute(delete(RedoRow))  # every row gone, behind redolab's back
    session.commit()
    assert api_client.get(f"/api/v1/environments/{environment.id}/redo/analytics").json() == analytics
    again = browser_client.get(f"/environments/{environment.id}").text
    assert again.split('id="redo-required">')[1].split("<")[0] == required
    assert 'id="redo-rate-chart"' in again and 'id="redo-heatmap"' in again


def test_a_new_headroom_is_a_new_analysis(api_client, session):
    environment = make_environment(session)
    _import(api_client, environment, "gv_archived_log.csv")
    before = api_client.get(f"/api/v1/environments/{environment.id}/redo/analytics").json()
    response = api_client.patch(f"/api/v1/environments/{environment.id}", json={"headroom_percent": 50})
    assert response.status_code == 200, response.text
    after = api_client.get(f"/api/v1/environments/{environment.id}/redo/analytics").json()
    peak = before["summed"]["peak_bytes_per_second"]
    assert after["summed"]["peak_bytes_per_second"] == peak
    assert before["required_bytes_per_second"] == peak * 1.3 and after["required_bytes_per_second"] == peak * 1.5


def test_deleting_the_last_import_removes_the_analysis(api_client, session):
    environment = make_environment(session)
    record = _import(api_client, environment, "gv_archived_log.csv")
    response = api_client.delete(f"/api/v1/environments/{environment.id}/redo/imports/{record['id']}")
    assert response.status_code == 204
    session.expire_all()
    assert session.get(StoredAnalysis, environment.id) is None
    assert api_client.get(f"/api/v1/environments/{environment.id}/redo/analytics").json()["summed"] is None


def test_a_piece_spanning_centuries_costs_a_week_of_hours():
    """Once made a page take 90 s: the heat map walked such a log hour by hour (here it would walk
    70 million hours, minutes of CPU, instead of 169)."""
    cells = heatmap_cells([(datetime(1971, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC), 5e6)], "UTC")
    assert all(cell == 5e6 for day in cells for cell in day)  # a week covers every weekday and hour
    short = heatmap_cells(
        [(datetime(2022, 1, 3, 22, 30, tzinfo=UTC), datetime(2022, 1, 4, 1, 0, tzinfo=UTC), 1.0)], "UTC"
    )
    assert [(d, h) for d in range(7) for h in range(24) if short[d][h]] == [(0, 22), (0, 23), (1, 0)]
    assert WEEK_HOURS == 7 * 24


def _import_now(session, environment, name: str):
    return imports.import_now(
        session=session, environment=environment, path=FIXTURES / name, filename=name, imported_by="alice"
    )


def _counted(monkeypatch, name: str) -> Counter:
    """How often redo.analysis calls its `name` from now on."""
    calls, original = Counter(), getattr(analysis, name)

    def counted(**kwargs):
        calls[name] += 1
        return original(**kwargs)

    monkeypatch.setattr(analysis, name, counted)
    return calls


def test_the_environment_page_reads_the_stored_analysis_once_per_request(browser_client, session, monkeypatch):
    """Every section showing the history (History, its charts, the plan's cards, the forecast) shares one
    read: the stored analysis's mark, one query; its contents only when the cache has not got them."""
    environment = make_environment(session, link_bandwidth_bits_per_second=1e9, link_rtt_seconds=0.02)
    _import_now(session, environment, "gv_archived_log.csv")
    reads, loads = _counted(monkeypatch, "_current_mark"), _counted(monkeypatch, "_read_stored")
    queries = []

    def stored_analysis_queries(conn, cursor, statement, *args) -> None:
        if "redo_analyses" in statement:
            queries.append(statement)

    event.listen(Engine, "before_cursor_execute", stored_analysis_queries)
    try:
        for first in (True, False):
            reads.clear(), loads.clear(), queries.clear()
            page = browser_client.get(f"/environments/{environment.id}")
            assert page.status_code == 200
            assert 'id="redo-required">' in page.text and 'id="redo-rate-chart"' in page.text
            assert reads["_current_mark"] == 1 and loads["_read_stored"] == (1 if first else 0)
            assert len(queries) == (2 if first else 1), queries  # its mark (and its contents, once)
    finally:
        event.remove(Engine, "before_cursor_execute", stored_analysis_queries)


def test_a_new_or_deleted_import_or_another_choice_is_another_analysis(session, monkeypatch):
    environment = make_environment(session)
    first = _import_now(session, environment, "gv_archived_log.csv")
    loads = _counted(monkeypatch, "_read_stored")
    before = stored_analysis(session=session, environment=environment)
    session.rollback()  # a new transaction: another request
    assert stored_analysis(session=session, environment=environment) is before and loads["_read_stored"] == 1

    _import_now(session, environment, "seed000.csv")
    after = stored_analysis(session=session, environment=environment)
    assert after is not before and after.mark != before.mark and loads["_read_stored"] == 2
    assert after.summary.history["rows_read"] > before.summary.history["rows_read"]
    assert stored_analysis(session=session, environment=environment) is after

    chosen = stored_analysis(session=session, environment=environment, chosen={first.id})
    assert chosen is not after and chosen.chosen == {first.id} and chosen.summary is None
    assert chosen.requirement.summed_required_bytes_per_second == before.requirement.summed_required_bytes_per_second
    assert stored_analysis(session=session, environment=environment, chosen={first.id}) is chosen
    every = stored_analysis(session=session, environment=environment, chosen={first.id, first.id + 1})
    assert every is after  # every import chosen: the stored analysis

    imports.delete_import(session=session, environment=environment, import_id=first.id)
    remaining = stored_analysis(session=session, environment=environment)
    assert remaining not in (before, after) and loads["_read_stored"] == 3
    assert remaining.summary.history["rows_read"] == after.summary.history["rows_read"] - first.rows_read
