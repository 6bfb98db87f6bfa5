"""The redo imports list API is paged like the environments list (issue 33.6): `limit` (default
100, at most 500), `offset`, and `count`, the number in all."""

from __future__ import annotations

import pytest

from tests.conftest import migrated_sqlite
from tests.factories import make_environment
from tests.redo.test_import_jobs import archived_logs


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    return migrated_sqlite(tmp_path_factory)


def test_the_imports_list_is_paged_oldest_first(api_client, session, tmp_path):
    environment = make_environment(session)
    base = f"/api/v1/environments/{environment.id}/redo"
    made = []
    for rows in (10, 11, 12, 13, 14):  # five different files
        path = archived_logs(tmp_path / f"logs-{rows}.csv", rows)
        preview = api_client.post(f"{base}/preview", files={"file": (path.name, path.read_bytes(), "text/csv")})
        assert preview.status_code == 200, preview.text
        imported = api_client.post(f"{base}/imports", json={"upload_token": preview.json()["upload_token"]})
        assert imported.status_code == 201, imported.text
        made.append(imported.json()["id"])
    first = api_client.get(f"{base}/imports", params={"limit": 2}).json()
    rest = api_client.get(f"{base}/imports", params={"limit": 2, "offset": 2}).json()
    last = api_client.get(f"{base}/imports", params={"limit": 2, "offset": 4}).json()
    assert first["count"] == rest["count"] == last["count"] == 5
    assert [i["id"] for page in (first, rest, last) for i in page["data"]] == made
    assert [i["filename"] for i in first["data"]] == ["logs-10.csv", "logs-11.csv"]
    assert len(api_client.get(f"{base}/imports").json()["data"]) == 5  # the default page holds them
    assert api_client.get(f"{base}/imports", params={"offset": 5}).json() == {"data": [], "count": 5}
    for bad in ({"limit": 0}, {"limit": 501}, {"offset": -1}, {"offset": 2**31}, {"limit": "all"}):
        assert api_client.get(f"{base}/imports", params=bad).status_code == 422, bad
