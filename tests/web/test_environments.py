from tests.factories import make_environment, make_host

FORM = {
    "name": "SALES prod",
    "description": "",
    "platform": "dataguard",
    "database_size_bytes": "2 TiB",
    "primary_rac_nodes": "2",
    "standby_rac_nodes": "1",
    "protection_mode": "max_performance",
    "transport_mode": "ASYNC",
    "instantiation_goal_seconds": "48 h",
    "headroom_percent": "30",
    "apply_overhead_percent": "30",
    "link_bandwidth_bits_per_second": "10 Gbit/s",
    "link_rtt_seconds": "25 ms",
    "notes": "",
}
HOST = {
    "role": "primary",
    "node_number": "1",
    "name": "db1",
    "ssh_address": "db1.example.com",
    "ssh_port": "22",
    "ssh_user": "oracle",
    "data_address": "",
    "data_interface": "",
}


HTMX = {"HX-Request": "true"}


def test_empty_list_explains_what_an_environment_is(browser_client):
    page = browser_client.get("/environments")
    assert page.status_code == 200
    assert "No environment yet" in page.text


def test_create_environment_from_form(browser_client):
    response = browser_client.post("/environments", data=FORM)
    assert response.status_code == 303
    page = browser_client.get(response.headers["location"])
    assert page.status_code == 200
    for shown in ("SALES prod", "2 TiB", "10 Gbit/s", "25 ms", "48 h", "Oracle Data Guard"):
        assert shown in page.text
    for section in ('id="plan"', 'id="hosts"', 'id="history"', 'id="experiments"'):
        assert section in page.text


def test_form_errors_are_shown_next_to_fields_and_nothing_written(browser_client):
    bad = {**FORM, "database_size_bytes": "2 Tb", "primary_rac_nodes": "two", "name": ""}
    response = browser_client.post("/environments", data=bad, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert 'id="e-database_size_bytes"' in response.text
    assert "looks like bits" in response.text
    assert "Enter a whole number." in response.text
    assert "This field is required." in response.text
    assert "<html" not in response.text  # only the form fragment
    assert 'value="2 Tb"' in response.text  # what the user typed is kept
    assert "No environment yet" in browser_client.get("/environments").text


def test_edit_form_round_trips_without_change(browser_client, session):
    environment = make_environment(
        session,
        name="e1",
        database_size_bytes=123_456_789,
        link_rtt_seconds=0.0277,
        link_bandwidth_bits_per_second=1_234_567,
    )
    page = browser_client.get(f"/environments/{environment.id}/edit")
    assert 'value="123456789 B"' in page.text
    assert 'value="27.7 ms"' in page.text
    import re

    values = dict(re.findall(r'name="([a-z_]+)"[^>]*value="([^"]*)"', page.text))
    values.update(platform="dataguard", protection_mode="max_performance", transport_mode="ASYNC", notes="")
    response = browser_client.post(f"/environments/{environment.id}/edit", data=values)
    assert response.status_code == 303
    session.refresh(environment)
    assert environment.database_size_bytes == 123_456_789
    assert environment.link_rtt_seconds == 0.0277
    assert environment.link_bandwidth_bits_per_second == 1_234_567


def test_edit_with_error_changes_nothing(browser_client, session):
    environment = make_environment(session, name="e1")
    other = make_environment(session, name="e2")
    response = browser_client.post(f"/environments/{environment.id}/edit", data={**FORM, "name": "E2"})
    assert response.status_code == 422
    assert "already exists" in response.text
    session.refresh(environment)
    assert environment.name == "e1"
    assert other.name == "e2"


def test_delete_environment_asks_for_its_name(browser_client, session):
    environment = make_environment(session, name="gone")
    page = browser_client.get(f"/environments/{environment.id}/delete")
    assert page.status_code == 200 and "Type the name, gone, to confirm" in page.text
    wrong = browser_client.post(f"/environments/{environment.id}/delete", data={"confirm": "gon"}, headers=HTMX)
    assert wrong.status_code == 422 and "Type the environment&#39;s name, gone" in wrong.text
    assert browser_client.get(f"/environments/{environment.id}").status_code == 200  # still there
    response = browser_client.post(f"/environments/{environment.id}/delete", data={"confirm": "gone"}, headers=HTMX)
    assert response.headers["HX-Redirect"] == "/environments"
    assert browser_client.get(f"/environments/{environment.id}").status_code == 404


def test_hosts_inline_add_edit_delete(browser_client, session):
    environment = make_environment(session)
    base = f"/environments/{environment.id}/hosts"
    htmx = {"HX-Request": "true"}
    added = browser_client.post(base, data=HOST, headers=htmx)
    assert added.status_code == 200
    assert 'id="hosts"' in added.text and "<html" not in added.text
    assert "oracle@db1.example.com:22" in added.text
    standby = browser_client.post(
        base,
        data={**HOST, "role": "standby", "name": "sb1", "ssh_address": "sb1.example.com"},
        headers=htmx,
    )
    assert "sb1" in standby.text
    session.refresh(environment)
    host = next(h for h in environment.hosts if h.name == "db1")
    form = browser_client.get(f"{base}?edit={host.id}", headers=htmx)
    assert "Edit host db1" in form.text
    saved = browser_client.put(f"{base}/{host.id}", data={**HOST, "ssh_port": "2222"}, headers=htmx)
    assert saved.status_code == 200
    assert "oracle@db1.example.com:2222" in saved.text
    deleted = browser_client.delete(f"{base}/{host.id}", headers=htmx)
    assert "oracle@db1.example.com" not in deleted.text
    assert "oracle@sb1.example.com:22" in deleted.text


def test_host_form_errors(browser_client, session):
    environment = make_environment(session)
    make_host(session, environment, node_number=1, role="primary")
    base = f"/environments/{environment.id}/hosts"
    clash = browser_client.post(base, data=HOST, headers={"HX-Request": "true"})
    assert clash.status_code == 422
    assert "already a primary host with node number 1" in clash.text
    bad = browser_client.post(
        base,
        data={**HOST, "node_number": "2", "ssh_address": "db1;reboot"},
        headers={"HX-Request": "true"},
    )
    assert bad.status_code == 422
    assert "is not a host name or IP address" in bad.text
    session.refresh(environment)
    assert len(environment.hosts) == 1


def test_unknown_environment_page_is_404(browser_client):
    response = browser_client.get("/environments/424242")
    assert response.status_code == 404
    assert "Environment 424242 does not exist" in response.text


def test_unknown_environment_answers_htmx_with_the_message_alone(browser_client):
    """Shown in the page's error box by app.js, as every other 4xx: not a whole page as text."""
    response = browser_client.get("/environments/424242", headers=HTMX)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "Environment 424242 does not exist."


def test_a_viewer_sees_no_button_it_cannot_use(anonymous, session):
    """Viewers read everything; the pages offer them no action the server would refuse."""
    from redolab.auth.models import Role
    from tests.conftest import log_in
    from tests.factories import make_environment, make_host, make_user

    environment = make_environment(session)
    make_host(session, environment, role="primary", transport="local")
    make_host(session, environment, role="standby", transport="local")
    make_user(session, "vera", role=Role.viewer)
    log_in(anonymous, "vera")
    listing = anonymous.get("/environments")
    assert listing.status_code == 200 and environment.name in listing.text
    assert "New environment" not in listing.text
    page = anonymous.get(f"/environments/{environment.id}")
    assert page.status_code == 200 and 'id="runs-table"' not in page.text
    body = page.text.replace('hx-post="/logout"', "")  # logging out is everyone's
    for action in ("hx-post", "hx-delete", "hx-put", "/edit", "/delete", 'id="run-form"', 'id="redo-upload"'):
        assert action not in body, action
