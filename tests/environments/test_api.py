from redolab.environments.schemas import EnvironmentCreate
from tests.factories import make_environment, make_host

ENV = {
    "name": "SALES prod",
    "platform": "dataguard",
    "database_size_bytes": "2 TiB",
    "primary_rac_nodes": 2,
    "standby_rac_nodes": 2,
    "transport_mode": "ASYNC",
    "link_bandwidth_bits_per_second": "10 Gbit/s",
    "link_rtt_seconds": "25 ms",
    "instantiation_goal_seconds": 172800,
}
HOST = {
    "role": "primary",
    "node_number": 1,
    "name": "db1",
    "ssh_address": "db1.example.com",
    "ssh_user": "oracle",
}


def test_create_read_list(api_client):
    created = api_client.post("/api/v1/environments", json=ENV)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["database_size_bytes"] == 2 * 1024**4
    assert body["link_bandwidth_bits_per_second"] == 10_000_000_000
    assert body["link_rtt_seconds"] == 0.025
    assert body["protection_mode"] == "max_performance"
    assert body["headroom_percent"] == 30.0
    assert api_client.get(f"/api/v1/environments/{body['id']}").json()["name"] == "SALES prod"
    listing = api_client.get("/api/v1/environments").json()
    assert listing["count"] == 1
    assert listing["data"][0]["id"] == body["id"]


def test_duplicate_name_is_a_conflict(api_client, session):
    make_environment(session, name="sales prod")
    response = api_client.post("/api/v1/environments", json=ENV)
    assert response.status_code == 409
    assert response.json()["detail"][0]["loc"] == ["body", "name"]
    assert api_client.get("/api/v1/environments").json()["count"] == 1


def test_bad_input_names_the_field_and_writes_nothing(api_client):
    response = api_client.post(
        "/api/v1/environments",
        json={**ENV, "database_size_bytes": "2 Tb", "link_rtt_seconds": "25"},
    )
    assert response.status_code == 422
    problems = {tuple(item["loc"]): item["msg"] for item in response.json()["detail"]}
    assert "looks like bits" in problems[("body", "database_size_bytes")]
    assert "has no unit" in problems[("body", "link_rtt_seconds")]
    assert api_client.get("/api/v1/environments").json()["count"] == 0


def test_the_database_time_zone_is_an_iana_name(api_client):
    response = api_client.post("/api/v1/environments", json={**ENV, "time_zone": "../../etc/passwd"})
    assert response.status_code == 422
    problems = {tuple(item["loc"]): item["msg"] for item in response.json()["detail"]}
    assert (
        "is not a time zone name" in problems[("body", "time_zone")]
        and "Europe/Berlin" in problems[("body", "time_zone")]
    )
    created = api_client.post("/api/v1/environments", json={**ENV, "time_zone": "America/New_York"})
    assert created.status_code == 201 and created.json()["time_zone"] == "America/New_York"
    default = api_client.post("/api/v1/environments", json={**ENV, "name": "other"}).json()
    assert default["time_zone"] == "UTC"


def test_hadr_modes_are_checked(api_client):
    response = api_client.post(
        "/api/v1/environments",
        json={"name": "db2", "platform": "hadr", "transport_mode": "FASTSYNC"},
    )
    assert response.status_code == 422
    assert "FASTSYNC is not a transport mode of Db2 HADR" in response.text
    ok = api_client.post(
        "/api/v1/environments",
        json={"name": "db2", "platform": "hadr", "transport_mode": "NEARSYNC"},
    )
    assert ok.status_code == 201
    assert ok.json()["protection_mode"] is None


def test_patch_is_validated_whole(api_client, session):
    environment = make_environment(session, name="e1")
    response = api_client.patch(f"/api/v1/environments/{environment.id}", json={"protection_mode": "max_protection"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "transport_mode"]
    assert "Maximum Protection needs SYNC" in response.text
    ok = api_client.patch(
        f"/api/v1/environments/{environment.id}",
        json={"protection_mode": "max_protection", "transport_mode": "SYNC", "description": "DR"},
    )
    assert ok.status_code == 200
    assert ok.json()["transport_mode"] == "SYNC"
    assert ok.json()["name"] == "e1"


def test_unknown_fields_refused(api_client):
    response = api_client.post("/api/v1/environments", json={**ENV, "colour": "red"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "colour"]


def test_missing_environment_is_404(api_client):
    response = api_client.get("/api/v1/environments/999")
    assert response.status_code == 404
    assert "Environment 999 does not exist" in response.json()["detail"]


def test_delete_environment_removes_hosts(api_client, session):
    environment = make_environment(session)
    make_host(session, environment)
    assert api_client.delete(f"/api/v1/environments/{environment.id}").status_code == 204
    assert api_client.get(f"/api/v1/environments/{environment.id}").status_code == 404
    from sqlalchemy import func, select

    from redolab.environments.models import Host

    assert session.scalar(select(func.count()).select_from(Host)) == 0


def test_host_crud(api_client, session):
    environment = make_environment(session)
    base = f"/api/v1/environments/{environment.id}/hosts"
    created = api_client.post(base, json=HOST)
    assert created.status_code == 201, created.text
    host = created.json()
    assert host["ssh_port"] == 22
    assert host["data_address"] is None
    standby = api_client.post(base, json={**HOST, "role": "standby", "name": "sb1", "data_address": "10.9.0.2"})
    assert standby.status_code == 201
    listing = api_client.get(base).json()
    assert [h["role"] for h in listing["data"]] == ["primary", "standby"]
    patched = api_client.patch(f"{base}/{host['id']}", json={"ssh_port": 2222, "data_interface": "eth1"})
    assert patched.status_code == 200
    assert patched.json()["ssh_port"] == 2222
    assert patched.json()["data_interface"] == "eth1"
    assert api_client.delete(f"{base}/{host['id']}").status_code == 204
    assert api_client.get(base).json()["count"] == 1


def test_host_slot_is_unique(api_client, session):
    environment = make_environment(session)
    base = f"/api/v1/environments/{environment.id}/hosts"
    assert api_client.post(base, json=HOST).status_code == 201
    clash = api_client.post(base, json={**HOST, "name": "other"})
    assert clash.status_code == 409
    assert clash.json()["detail"][0]["loc"] == ["body", "node_number"]
    assert api_client.get(base).json()["count"] == 1


def test_host_injection_attempts_are_refused(api_client, session):
    environment = make_environment(session)
    base = f"/api/v1/environments/{environment.id}/hosts"
    for field, value in [
        ("ssh_address", "db1; rm -rf /"),
        ("ssh_address", "-oProxyCommand=id"),
        ("ssh_user", "oracle$(id)"),
        ("data_address", "`reboot`"),
        ("data_interface", "eth0 && id"),
        ("ssh_port", 70000),
    ]:
        response = api_client.post(base, json={**HOST, field: value})
        assert response.status_code == 422, (field, value)
        assert response.json()["detail"][0]["loc"] == ["body", field]
    assert api_client.get(base).json()["count"] == 0


def test_host_of_another_environment_is_404(api_client, session):
    first, second = make_environment(session), make_environment(session)
    host = make_host(session, first)
    assert api_client.get(f"/api/v1/environments/{second.id}/hosts/{host.id}").status_code == 404


def test_the_dba_facts_round_trip_through_the_api_and_the_form(api_client, browser_client):
    fields = {"database_release": "19c", "rto_goal_seconds": "15 min", "apply_rate_bytes_per_second": "120 MiB/s"}
    created = api_client.post("/api/v1/environments", json={**ENV, **fields, "fast_start_failover": True})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["database_release"] == "19c" and body["rto_goal_seconds"] == 900
    assert body["apply_rate_bytes_per_second"] == 120 * 1024**2 and body["fast_start_failover"] is True
    assert body["advanced_compression_licensed"] is False
    refused = api_client.patch(f"/api/v1/environments/{body['id']}", json={"database_release": "12c"})
    assert refused.status_code == 422 and "12.1 or 12.2" in refused.text
    assert api_client.get(f"/api/v1/environments/{body['id']}").json()["database_release"] == "19c"
    form = browser_client.get(f"/environments/{body['id']}/edit")
    assert 'value="120 MiB/s"' in form.text and 'value="15 min"' in form.text and 'value="19c"' in form.text


def test_the_instantiation_copy_settings_round_trip_through_the_api_and_the_form(api_client, browser_client):
    fields = {
        "copy_channels_per_node": 8,
        "copy_nodes": 2,
        "copy_section_bytes": "64 GiB",
        "archive_free_bytes": "4 TiB",
    }
    created = api_client.post("/api/v1/environments", json={**ENV, **fields})
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["copy_channels_per_node"], body["copy_nodes"]) == (8, 2)
    assert body["copy_section_bytes"] == 64 * 2**30 and body["archive_free_bytes"] == 4 * 2**40
    for refused in ({"copy_channels_per_node": 0}, {"copy_channels_per_node": 65}, {"copy_section_bytes": "512 KiB"}):
        answer = api_client.patch(f"/api/v1/environments/{body['id']}", json=refused)
        assert answer.status_code == 422, refused
    form = browser_client.get(f"/environments/{body['id']}/edit")
    assert (
        'value="64 GiB"' in form.text and 'value="4 TiB"' in form.text and 'name="copy_channels_per_node"' in form.text
    )


def test_blank_copy_settings_in_the_form_mean_not_set():
    """The form posts every field, blank when not filled: blank channels, nodes and sizes are not set."""
    blank = {"copy_channels_per_node": "", "copy_nodes": "", "copy_section_bytes": "", "archive_free_bytes": ""}
    created = EnvironmentCreate.model_validate({"name": "blank copy", **blank})
    assert (created.copy_channels_per_node, created.copy_nodes, created.copy_section_bytes) == (None, None, None)
    typed = EnvironmentCreate.model_validate({"name": "typed", "copy_channels_per_node": "8"})
    assert typed.copy_channels_per_node == 8
