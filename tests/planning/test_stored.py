"""The stored redo analysis: written with the import, read by the page and the API without a row,
computed again when what it was computed from changes."""

from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import delete

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
