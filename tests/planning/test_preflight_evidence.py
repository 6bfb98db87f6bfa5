"""Pasted evidence on the Pre-flight card (issue 56, items 2 and 3): the Broker's VALIDATE outputs become
rows with their dates, V$RECOVERY_PROGRESS gives the Apply card its rate, a malformed paste is a 422
naming the label and the line and stores nothing, and viewers read but cannot paste."""

from __future__ import annotations

from pathlib import Path

import pytest

from redolab.auth.models import Role
from tests.factories import PASSWORD, make_environment, make_user

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "preflight"


def paste(client, environment_id: int, kind: str, label: str, name: str | None = None, text: str | None = None):
    body = {"kind": kind, "label": label, "text": text if text is not None else (FIXTURES / name).read_text()}
    return client.post(f"/api/v1/environments/{environment_id}/preflight/evidence", json=body)


@pytest.mark.parametrize(
    ("name", "kind", "failing"),
    [("validate_database_19c_standby_verbose.txt", "validate_database", "Insufficient SRLs"),
     ("validate_network_19c_failed.txt", "validate_network", "Failed"),
     ("validate_database_23ai_strict_all.txt", "validate_database_strict", "Ready for Switchover: No")],
)  # fmt: skip
def test_pasted_validate_outputs_become_rows_with_their_dates(session, api_client, name, kind, failing):
    environment = make_environment(session, name="SALES")
    response = paste(api_client, environment.id, "broker", "validate 2 Dec", name)
    assert response.status_code == 201, response.text
    assert response.json()["kind"] == kind and response.json()["pasted_by"] == "alice"
    card = api_client.get(f"/api/v1/environments/{environment.id}/preflight").json()
    pasted = [row for row in card["checks"] if row["source"].startswith("validate 2 Dec:")]
    assert pasted and all("pasted 20" in row["source"] and ", line " in row["source"] for row in pasted)
    assert any(row["status"] == "FAIL" and failing in row["detail"] for row in pasted), pasted
    assert card["status"] == "FAIL"
    # without a collection, the configuration rows say what would tell
    assert any(row["status"] == "UNKNOWN" and "collect from the primary" in row["detail"] for row in card["checks"])


def test_a_malformed_paste_names_its_label_and_line_and_stores_nothing(session, api_client):
    environment = make_environment(session, name="SALES")
    response = paste(api_client, environment.id, "broker", "my paste", text="hello\nworld\n")
    assert response.status_code == 422 and "my paste" in response.text and "line" in response.text
    response = paste(api_client, environment.id, "recovery_progress", "rp", text="ITEM\n----\nnothing\n")
    assert response.status_code == 422 and "rp" in response.text
    assert api_client.get(f"/api/v1/environments/{environment.id}/preflight").json()["evidence"] == []


def test_a_pasted_recovery_progress_gives_the_apply_card_its_rate(session, api_client):
    environment = make_environment(session, name="SALES")
    response = paste(
        api_client, environment.id, "recovery_progress", "stby apply", "recovery_progress_sqlplus_dd_mon_rr.txt"
    )
    assert response.status_code == 201, response.text
    assert response.json()["figures"]["active_apply_bytes_per_second"] == 55082 * 1024
    plan = api_client.get(f"/api/v1/environments/{environment.id}/plan").json()
    apply = plan["cards"]["apply"]
    assert apply["status"] == "missing" and "no redo history" in apply["headline"]  # the rate alone judges nothing
    assert apply["values"]["apply_bytes_per_second"] == 55082 * 1024
    assert apply["values"]["apply_source"].startswith("Active Apply Rate, pasted V$RECOVERY_PROGRESS 'stby apply', 20")
    # the environment's own entered rate wins over a pasted one
    api_client.patch(f"/api/v1/environments/{environment.id}", json={"apply_rate_bytes_per_second": "10 MiB/s"})
    values = api_client.get(f"/api/v1/environments/{environment.id}/plan").json()["cards"]["apply"]["values"]
    assert values == {"apply_bytes_per_second": 10 * 1024**2, "apply_source": "entered on the environment"}
    evidence_id = response.json()["id"]
    assert (
        api_client.delete(f"/api/v1/environments/{environment.id}/preflight/evidence/{evidence_id}").status_code == 204
    )
    assert api_client.get(f"/api/v1/environments/{environment.id}/preflight").json()["evidence"] == []


def test_viewers_read_the_card_but_cannot_paste(session, anonymous):
    make_user(session, "vic", role=Role.viewer)
    environment = make_environment(session, name="SALES")
    token = anonymous.post("/api/v1/auth/token", data={"username": "vic", "password": PASSWORD}).json()
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    assert anonymous.get(f"/api/v1/environments/{environment.id}/preflight", headers=headers).status_code == 200
    body = {"kind": "broker", "label": "x", "text": (FIXTURES / "validate_network_23ai_all.txt").read_text()}
    url = f"/api/v1/environments/{environment.id}/preflight/evidence"
    assert anonymous.post(url, json=body, headers=headers).status_code == 403
    assert anonymous.get(f"/api/v1/environments/{environment.id}/preflight").status_code == 401
