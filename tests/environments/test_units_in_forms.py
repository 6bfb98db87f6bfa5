"""Forms and API schemas refuse unit-less quantities (issue 32, item 6).

A database size typed as "20" was stored as 20 bytes (instantiation then took 0.02 µs), while an RTT
without a unit was refused; "1 GB/s" for a link became 8.59 Gbit/s without a word. Now text in every
quantity field needs its unit (the message names the field and what would work), a JSON number stays
base units, and a unit that reads two ways is accepted and echoed with how it was read. The one
convention (DESIGN.md, Units): K, M, G, T without an "i" are binary, as Oracle tools mean them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from redolab.core.fields import field_label, unit_readings_of
from redolab.environments.schemas import EnvironmentCreate, EnvironmentUpdate
from redolab.runs.schemas import RunCreate
from redolab.sweeps.schemas import SweepCreate
from tests.conftest import migrated_sqlite

# Every quantity field of every schema that takes text with a unit, with a unit-less value.
QUANTITIES = [
    (EnvironmentCreate, "database_size_bytes", "Database size", "GiB"),
    (EnvironmentCreate, "link_bandwidth_bits_per_second", "Link bandwidth", "Gbit/s"),
    (EnvironmentCreate, "link_rtt_seconds", "Link RTT", "ms"),
    (EnvironmentCreate, "instantiation_goal_seconds", "Instantiation goal", "h"),
    (EnvironmentUpdate, "database_size_bytes", "Database size", "TiB"),
    (RunCreate, "message_bytes", "Message size", "MiB"),
    (RunCreate, "sockbuf_bytes", "Socket buffer size", "GiB"),
    (RunCreate, "duration_seconds", "Duration", "s"),
    (RunCreate, "rate_bits_per_second", "Rate", "Mbit/s"),
    (RunCreate, "fq_rate_bits_per_second", "FQ rate", "Mbit/s"),
    (SweepCreate, "duration_seconds", "Duration", "s"),
]
BASE = {EnvironmentCreate: {"name": "units"}, EnvironmentUpdate: {}}
PAIR = {"client_host_id": 1, "server_host_id": 2}


def _values(schema, **fields):
    base = BASE.get(schema, PAIR)
    return {**base, **fields}


def _problem(schema, field, value) -> str:
    with pytest.raises(ValidationError) as caught:
        schema.model_validate(_values(schema, **{field: value}))
    return {str(e["loc"][-1]): e["msg"] for e in caught.value.errors()}[field]


@pytest.mark.parametrize(("schema", "field", "label", "unit"), QUANTITIES)
def test_a_number_without_a_unit_is_refused_naming_the_field_and_what_works(schema, field, label, unit):
    message = _problem(schema, field, "20")
    assert message.startswith(f"{label}: '20' has no unit: write e.g. "), message
    assert f"20 {unit}" in message


@pytest.mark.parametrize(("schema", "field", "label", "unit"), QUANTITIES)
def test_a_json_number_stays_base_units(schema, field, label, unit):
    number = {"link_rtt_seconds": 0.025, "sockbuf_bytes": 65536}.get(field, 20)
    model = schema.model_validate(_values(schema, **{field: number}))
    assert getattr(model, field) == number


@given(st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False))
@settings(max_examples=50, deadline=None)
def test_no_quantity_field_reads_bare_text(number):
    for schema, field, _label, _unit in QUANTITIES:
        with pytest.raises(ValidationError, match="has no unit"):
            schema.model_validate(_values(schema, **{field: f"{number:g}"}))


def test_an_ambiguous_unit_is_accepted_and_echoed_with_how_it_was_read():
    model = EnvironmentCreate.model_validate(
        {"name": "echo", "database_size_bytes": "20 GB", "link_bandwidth_bits_per_second": "1 GB/s"}
    )
    assert model.database_size_bytes == 20 * 1024**3
    assert model.link_bandwidth_bits_per_second == 8 * 1024**3
    readings = model.unit_readings
    assert readings["database_size_bytes"].startswith("Database size: 20 GB read as 20 GiB (21,474,836,480 bytes)")
    assert readings["link_bandwidth_bits_per_second"].startswith(
        "Link bandwidth: 1 GB/s read as 8,589.93 Mbit/s (1 GiB/s, binary GB as Oracle tools mean it; "
        "a decimal 1 GB/s would be 8,000 Mbit/s)"
    )


def test_an_exact_unit_is_not_echoed():
    model = EnvironmentCreate.model_validate(
        {"name": "exact", "database_size_bytes": "20 GiB", "link_bandwidth_bits_per_second": "10 Gbit/s"}
    )
    assert model.unit_readings == {}
    assert unit_readings_of(RunCreate, {"rate_bits_per_second": "800 Mbit/s", "message_bytes": 65536}) == {}


def test_runs_echo_their_byte_rates_too():
    run = RunCreate.model_validate({**PAIR, "rate_bits_per_second": "100 MB/s"})
    assert run.rate_bits_per_second == 100 * 1024**2 * 8
    assert run.unit_readings["rate_bits_per_second"].startswith("Rate: 100 MB/s read as 838.86 Mbit/s")


def test_field_labels_read_as_words():
    assert field_label("database_size_bytes") == "Database size"
    assert field_label("link_bandwidth_bits_per_second") == "Link bandwidth"
    assert field_label("link_rtt_seconds") == "Link RTT"
    assert field_label(None) == "This quantity"


# -- through the web form and the JSON API -------------------------------------------------------


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """Form and API behaviour, the same on either database: these run once, on SQLite."""
    return migrated_sqlite(tmp_path_factory)


FORM = {
    "name": "form units",
    "platform": "dataguard",
    "database_size_bytes": "20",
    "primary_rac_nodes": "1",
    "standby_rac_nodes": "1",
    "protection_mode": "max_performance",
    "transport_mode": "ASYNC",
    "link_bandwidth_bits_per_second": "1 GB/s",
    "link_rtt_seconds": "25 ms",
    "instantiation_goal_seconds": "48 h",
    "headroom_percent": "30",
    "apply_overhead_percent": "30",
    "time_zone": "UTC",
    "notes": "",
}


def test_the_form_refuses_a_size_without_a_unit_next_to_the_field(browser_client):
    response = browser_client.post("/environments", data=FORM, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert "Database size: &#39;20&#39; has no unit: write e.g. 20 GiB, 20 TiB or 20 MiB" in response.text
    assert browser_client.get("/api/v1/environments").json()["count"] == 0


def test_the_form_says_how_an_ambiguous_unit_was_read(browser_client):
    response = browser_client.post(
        "/environments", data={**FORM, "database_size_bytes": "2 TiB"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert 'id="unit-readings"' in response.text
    assert "Link bandwidth: 1 GB/s read as 8,589.93 Mbit/s" in response.text


def test_the_api_refuses_a_size_without_a_unit(api_client):
    response = api_client.post("/api/v1/environments", json={"name": "api units", "database_size_bytes": "20"})
    assert response.status_code == 422
    problems = {tuple(item["loc"]): item["msg"] for item in response.json()["detail"]}
    assert problems[("body", "database_size_bytes")].startswith("Database size: '20' has no unit")
    plain = api_client.post("/api/v1/environments", json={"name": "api bytes", "database_size_bytes": 20})
    assert plain.status_code == 201 and plain.json()["database_size_bytes"] == 20


def test_the_api_answer_says_how_an_ambiguous_unit_was_read(api_client):
    response = api_client.post(
        "/api/v1/environments", json={"name": "api echo", "link_bandwidth_bits_per_second": "1 GB/s"}
    )
    assert response.status_code == 201
    assert response.json()["link_bandwidth_bits_per_second"] == 8 * 1024**3
    assert response.json()["unit_readings"]["link_bandwidth_bits_per_second"].startswith(
        "Link bandwidth: 1 GB/s read as 8,589.93 Mbit/s"
    )


def test_a_sweeps_size_list_refuses_a_size_without_a_unit_naming_the_field():
    message = _problem(SweepCreate, "sizes", "65536, 1M")
    assert message.startswith("Sizes: '65536' has no unit: write e.g. 65536 GiB"), message
    assert SweepCreate.model_validate(_values(SweepCreate, kind="sockbuf", sizes=[65536])).sizes == [65536]


def test_the_transports_offered_are_the_platforms(session, browser_client):
    """Issue 58: an environment's form offers its platform's modes; a new one's names the platform of each
    mode only one platform has."""
    from tests.factories import make_environment

    new = browser_client.get("/environments/new").text
    assert ">NEARSYNC (Db2 HADR only)<" in new and ">FASTSYNC (Oracle Data Guard only)<" in new
    dataguard = make_environment(session, name="dg")
    edit = browser_client.get(f"/environments/{dataguard.id}/edit").text
    assert 'value="FASTSYNC"' in edit and 'value="NEARSYNC"' not in edit and 'value="SUPERASYNC"' not in edit
