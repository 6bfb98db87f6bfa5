"""A start that leads: a new environment shows its first steps, each ticked by what exists and linking
to its form; empty sections say what the current user can do and who does the rest, for an admin, an
operator and a viewer."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from redolab.auth.models import Role
from redolab.runs.models import RunStatus
from tests.conftest import log_in
from tests.factories import make_environment, make_host, make_measured_run, make_user
from tests.web.test_environments import HOST, HTMX

STEPS = ("history", "hosts", "keys", "run", "plan")


@pytest.fixture
def client_as(app, session):
    """A logged-in client for a new user of `role`."""
    clients = []

    def login(role: Role) -> TestClient:
        user = make_user(session, f"{role.value}-{len(clients)}", role=role)
        client = TestClient(app, follow_redirects=False)
        client.__enter__()
        clients.append(client)
        assert log_in(client, user.username).status_code == 303
        return client

    yield login
    for client in clients:
        client.__exit__(None, None, None)


def steps(page: str) -> dict[str, tuple[bool, str, str]]:
    """The checklist as (done, link, the line's text) per step."""
    section = re.search(r'<section class="first-steps".*?</section>', page, re.S)
    if section is None:
        return {}
    found = {}
    for key, done, body in re.findall(r'data-step="(\w+)" data-done="(yes|no)">(.*?)</li>', section.group(0), re.S):
        href = re.search(r'href="([^"]+)"', body).group(1)
        found[key] = (done == "yes", href, " ".join(re.sub(r"<[^>]+>", " ", body).split()))
    return found


def anchors(page: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page))


def test_an_admin_sees_every_step_open_each_linking_to_its_form(client_as, session):
    environment = make_environment(session)
    page = client_as(Role.admin).get(f"/environments/{environment.id}").text
    found = steps(page)
    assert tuple(found) == STEPS
    assert not any(done for done, _, _ in found.values())
    assert found["history"][1] == "#redo-upload-panel" and found["hosts"][1] == "#host-panel-form"
    for key, (_, href, text) in found.items():
        assert href[1:] in anchors(page), (key, href)  # every link lands on this page
        assert "does this" not in text  # an admin does every step
    assert "No host yet. Add the primary and standby hosts" in page and 'id="host-form"' in page
    assert "experiments run between a primary and a standby host: add them first" in page


def test_an_operator_is_told_an_admin_adds_hosts(client_as, session):
    environment = make_environment(session)
    page = client_as(Role.operator).get(f"/environments/{environment.id}").text
    found = steps(page)
    assert found["hosts"][2].endswith("an admin does this") and found["keys"][2].endswith("an admin does this")
    assert found["hosts"][1] == "#hosts"  # no form for an operator: the section that says who adds them
    assert "does this" not in found["history"][2] and found["history"][1] == "#redo-upload-panel"
    assert "An admin adds the primary and standby hosts; you are an operator: once they are in" in page
    assert 'id="host-form"' not in page
    assert "which an admin adds; you are an operator" in page
    assert "start one with New experiment below" not in page


def test_a_viewer_sees_what_they_can_read(client_as, session):
    environment = make_environment(session)
    page = client_as(Role.viewer).get(f"/environments/{environment.id}").text
    found = steps(page)
    assert found["history"][2].endswith("an operator or an admin does this")
    assert found["run"][2].endswith("an operator or an admin does this") and found["run"][1] == "#experiments"
    assert "you are a viewer: you can read the plan, the redo history and the runs" in page
    assert "an operator or an admin starts experiments; you are a viewer" in page
    assert "An operator or an admin uploads it; you are a viewer" in page
    assert "New experiment below" not in page and 'id="run-form"' not in page and 'id="redo-upload"' not in page
    assert "You are a viewer: the steps marked for another role wait for them." in page


def test_steps_are_ticked_by_what_exists_and_the_list_goes_when_all_are(client_as, session):
    environment = make_environment(session, link_bandwidth_bits_per_second=10**9, link_rtt_seconds=0.02)
    admin = client_as(Role.admin)
    primary = make_host(session, environment, role="primary", name="db1")
    page = admin.get(f"/environments/{environment.id}").text
    found = steps(page)
    assert not found["hosts"][0] and not found["keys"][0]  # a primary alone is not the pair
    assert 'id="host-panel-form" open' in page  # the step's link lands on an open form
    standby = make_host(session, environment, role="standby", name="db2")
    page = admin.get(f"/environments/{environment.id}").text
    found = steps(page)
    assert found["hosts"][0] and not found["keys"][0] and 'id="host-panel-form" open' not in page
    for host in (primary, standby):
        host.host_key_fingerprint = "SHA256:" + "a" * 43  # as Verify host pins it
    session.commit()
    make_measured_run(session, environment.id, primary, standby, status=RunStatus.succeeded)
    found = steps(admin.get(f"/environments/{environment.id}").text)
    assert found["keys"][0] and found["run"][0]
    assert not found["history"][0] and not found["plan"][0]  # no history: the transport card judges nothing yet


def test_the_list_goes_when_every_step_is_done():
    """Every step ticked by what exists: an import, the pair with pinned keys, a succeeded run, a verdict."""
    from types import SimpleNamespace as Thing

    from redolab.planning.card import PASS
    from redolab.web.workspace import first_steps

    def host(role):
        return Thing(role=Thing(value=role), transport=Thing(value="ssh"), host_key_fingerprint="SHA256:x")

    plan = Thing(card=lambda key: Thing(status=PASS))
    context = {"imports": [1], "hosts": [host("primary"), host("standby")], "host_options": [("1", "db1")],
               "matching_runs": [Thing(status=RunStatus.succeeded)], "plan": plan}  # fmt: skip
    viewer = Thing(is_admin=False, can_operate=False)
    done = first_steps(context, viewer)
    assert [step.key for step in done] == list(STEPS) and all(step.done for step in done)
    context["hosts"][1].host_key_fingerprint = None
    assert [step.key for step in first_steps(context, viewer) if not step.done] == ["keys"]


def test_an_import_alone_does_not_tick_read_the_plan():
    """Issue 58.5: an import judges the nominal link (the transport card has a verdict), but the plan is
    not yet what the checklist means by it: it waits for a run as well."""
    from types import SimpleNamespace as Thing

    from redolab.planning.card import PASS
    from redolab.web.workspace import first_steps

    plan = Thing(card=lambda key: Thing(status=PASS))
    context = {"imports": [1], "hosts": [], "host_options": [], "matching_runs": [], "plan": plan}
    viewer = Thing(is_admin=False, can_operate=False)
    assert {step.key: step.done for step in first_steps(context, viewer)}["plan"] is False


def test_a_failed_run_does_not_tick_the_run_step(client_as, session):
    environment = make_environment(session)
    primary = make_host(session, environment, role="primary", name="db1")
    standby = make_host(session, environment, role="standby", name="db2")
    make_measured_run(session, environment.id, primary, standby, status=RunStatus.failed)
    found = steps(client_as(Role.operator).get(f"/environments/{environment.id}").text)
    assert not found["run"][0] and found["run"][1] == "#run-panel"


def test_delete_is_not_the_primary_button(client_as, session):
    environment = make_environment(session)
    page = client_as(Role.admin).get(f"/environments/{environment.id}").text
    assert re.search(r'<a class="button danger" href="/environments/\d+/delete">Delete</a>', page)
    css = client_as(Role.viewer).get("/static/app.css").text
    rule = re.search(r"\.button\.danger, a\.button\.danger \{([^}]*)\}", css).group(1)
    assert "background: #fff" in rule and "color: var(--danger)" in rule


def test_the_checklist_reloads_itself_when_hosts_change(client_as, session):
    environment = make_environment(session)
    admin = client_as(Role.admin)
    page = admin.get(f"/environments/{environment.id}").text
    assert f'hx-get="/environments/{environment.id}/first-steps" hx-trigger="hosts-changed from:body"' in page
    added = admin.post(f"/environments/{environment.id}/hosts", data={**HOST, "name": "db1"}, headers=HTMX)
    assert added.status_code == 200 and added.headers["HX-Trigger"] == "hosts-changed"
    admin.post(f"/environments/{environment.id}/hosts", data={**HOST, "role": "standby", "name": "db2"}, headers=HTMX)
    fragment = admin.get(f"/environments/{environment.id}/first-steps", headers=HTMX)
    assert fragment.status_code == 200 and "<html" not in fragment.text
    found = steps(fragment.text)
    assert found["hosts"][0] and not found["keys"][0]  # the pair is in; its keys are not pinned yet
    plain = admin.get(f"/environments/{environment.id}/first-steps")
    assert plain.status_code == 303 and plain.headers["location"].endswith(
        f"/environments/{environment.id}#first-steps"
    )


def test_an_empty_list_says_who_creates_environments(client_as):
    assert "create one to record its hosts" in client_as(Role.operator).get("/environments").text
    page = client_as(Role.viewer).get("/environments").text
    assert "an operator or an admin creates it; you are a viewer" in page and "New environment" not in page
