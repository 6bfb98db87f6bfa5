"""Malformed input gets a 4xx that says what was expected, never a 500 (issue 18's list): plain
GETs of every page and fragment URL, deeply nested JSON, numbers beyond physical bounds, NaN and
Infinity, and the bodies of every JSON route."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient

from tests.conftest import log_in, migrated_sqlite
from tests.factories import PASSWORD, make_environment, make_host


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """HTTP behaviour, the same on either database: these tests run once, on SQLite."""
    return migrated_sqlite(tmp_path_factory)


DATA = Path(__file__).parents[1] / "runs" / "data"


@pytest.fixture
def loose_client(app, user):
    """A logged-in browser client that returns 500s instead of raising them."""
    with TestClient(app, follow_redirects=False, raise_server_exceptions=False) as client:
        assert log_in(client, user.username).status_code == 303
        yield client


@pytest.fixture
def loose_api(app, user):
    with TestClient(app, follow_redirects=False, raise_server_exceptions=False) as client:
        token = client.post("/api/v1/auth/token", data={"username": user.username, "password": PASSWORD})
        client.headers["Authorization"] = f"Bearer {token.json()['access_token']}"
        yield client


@pytest.fixture
def populated(session, loose_client):
    """An environment with hosts and imported runs, so every id in a route exists."""
    environment = make_environment(session, name="walk")
    primary = make_host(session, environment, role="primary", name="p1", transport="local")
    standby = make_host(session, environment, role="standby", name="s1", transport="local")
    files = [("files", (name, (DATA / name).read_bytes(), "text/plain")) for name in ["oratcptest_async.txt"]]
    response = loose_client.post(
        f"/environments/{environment.id}/runs/import",
        data={"client_host_id": primary.id, "server_host_id": standby.id, "test_date": "2026-03-04"},
        files=files,
    )
    assert response.status_code in (200, 303), response.text
    return environment


def _get_routes(app):
    for route in iter_route_contexts(app.routes):
        if "GET" in (route.methods or set()):
            yield route.path


def test_every_get_route_answers_a_plain_browser_request_without_a_server_error(app, loose_client, populated):
    ids = {"environment_id": populated.id}
    checked, errors = [], []
    for path in _get_routes(app):
        concrete = re.sub(r"\{(\w+)\}", lambda m: str(ids.get(m.group(1), 1)), path)
        for headers in ({}, {"HX-Request": "true"}):
            response = loose_client.get(concrete, headers=headers)
            if response.status_code >= 500:
                errors.append((concrete, headers, response.status_code))
        checked.append(concrete)
    assert errors == [], "\n".join(map(str, errors))
    assert len(checked) > 30


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"name": "big", "database_size_bytes": 1180591620717411303424}', "database_size_bytes"),  # 2**70
        ('{"name": "fast", "link_bandwidth_bits_per_second": 1e30}', "link_bandwidth_bits_per_second"),
        ('{"name": "nan", "headroom_percent": NaN}', "headroom_percent"),
        ('{"name": "inf", "link_rtt_seconds": Infinity}', "link_rtt_seconds"),
        ('{"name": "neg", "database_size_bytes": -5}', "database_size_bytes"),
        ('{"name": "long", "instantiation_goal_seconds": 1e300}', "instantiation_goal_seconds"),
        (DEEP, "could not be read"),
        ('{"name": ' + '{"a": ' * 5000 + "1" + "}" * 5001, "could not be read"),
    ],
    ids=["size-2^70", "rate-1e30", "nan", "infinity", "negative", "duration-1e300", "deep-list", "deep-object"],
)
def test_environment_json_out_of_bounds_is_a_4xx_naming_the_field(loose_api, body, expected):
    response = loose_api.post(
        "/api/v1/environments", content=body.encode(), headers={"Content-Type": "application/json"}
    )
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    assert expected in response.text, response.text[:300]


def _iperf3(document: dict | str) -> bytes:
    return (document if isinstance(document, str) else json.dumps(document)).encode()


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: '{"start": ' + "[" * 50_000 + "]" * 50_000 + "}", "nested too deeply"),
        (lambda d: json.dumps(d).replace('"bytes": ', '"bytes": NaN, "x": ', 1), "NaN is not a number JSON allows"),
        (lambda d: {**d, "end": {**d["end"], "sum_received": {**d["end"]["sum_received"], "bytes": 2**70}}},
         "end.sum_received.bytes is"),
        (lambda d: {**d, "end": {**d["end"], "sum_received": {**d["end"]["sum_received"], "seconds": 1e-300}}},
         "over 1 TB/s"),
        (lambda d: {**d, "end": {**d["end"], "sum_received": {**d["end"]["sum_received"], "bytes": -1}}},
         "expected a number from 0"),
    ],
    ids=["deep", "nan", "size-2^70", "rate-absurd", "negative"],
)  # fmt: skip
def test_iperf3_import_refuses_absurd_documents_with_a_4xx(loose_api, session, mutate, expected):
    environment = make_environment(session, name="iperf")
    primary = make_host(session, environment, role="primary", name="p1", transport="local")
    standby = make_host(session, environment, role="standby", name="s1", transport="local")
    document = json.loads((DATA / "iperf3_two_streams.json").read_text())
    response = loose_api.post(
        f"/api/v1/environments/{environment.id}/runs/import",
        data={"client_host_id": primary.id, "server_host_id": standby.id, "test_date": "2026-03-04"},
        files=[("files", ("mutated.json", _iperf3(mutate(document)), "application/json"))],
    )
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    assert "mutated.json" in response.text and expected in response.text, response.text[:400]
    assert loose_api.get(f"/api/v1/environments/{environment.id}/runs").json()["count"] == 0  # nothing stored
