"""Measure encryption: `openssl speed` on a host through the real sshd, shown on the host panel and on the
plan's transport card; a host whose PATH has no openssl says so (the JSON API, "This machine")."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from fastapi.testclient import TestClient

from redolab.auth.models import Role
from redolab.environments.models import Host
from redolab.redo import service as redo_service
from redolab.remote.crypto import NO_OPENSSL
from tests.conftest import log_in
from tests.factories import make_environment, make_host, make_ssh_environment, make_user

HISTORY = Path(__file__).parents[1] / "fixtures" / "redo" / "gv_archived_log.csv"


def test_measured_over_ssh_and_shown_on_the_transport_card(session, sshd, secret_key, browser_client):
    environment, primary, _standby = make_ssh_environment(
        session, sshd, secret_key=secret_key, transport_mode="SYNC", database_release="19c"
    )
    redo_service.import_file(
        session=session, environment=environment, path=HISTORY, filename=HISTORY.name, imported_by="alice"
    )
    panel = browser_client.post(f"/environments/{environment.id}/hosts/{primary.id}/crypto-speed")
    assert panel.status_code == 200, panel.text
    assert "Encryption ceiling of db1" in panel.text and "MiB/s per stream" in panel.text
    assert "the SDU the plan sets for SYNC (65535 bytes)" in panel.text
    session.expire_all()
    stored = session.get(Host, primary.id)
    assert stored.crypto_measured_at is not None and stored.crypto_speed["library"].startswith("OpenSSL")
    assert stored.crypto_speed["message_bytes"] == 65535
    assert [c["cipher"] for c in stored.crypto_speed["ciphers"]] == ["aes-256-gcm", "chacha20-poly1305"]
    page = browser_client.get(f"/environments/{environment.id}")
    card = re.search(r'<article class="card (\w+)[^"]*" id="plan-transport"(.*?)</article>', page.text, re.S)
    rows = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", card.group(2)))
    assert re.fullmatch(
        r"AES-256-GCM [\d,.]+ MiB/s per stream, [\d,.]+ MiB/s per host \(\d+ cores\); "
        r"ChaCha20-Poly1305 [\d,.]+ MiB/s per stream, [\d,.]+ MiB/s per host \(\d+ cores\)",
        rows["Encryption ceiling, db1 (primary 1)"],
    )
    assert rows["Encryption ceiling, sb1 (standby 1)"].startswith("not measured yet")
    assert "64 KiB messages (65535 bytes), 1 s per cipher" in card.group(2)
    report = browser_client.get(f"/environments/{environment.id}/plan/report")  # what the PDF prints
    shown = rows["Encryption ceiling, db1 (primary 1)"]
    assert f"<tr><th>Encryption ceiling, db1 (primary 1)</th><td>{shown}</td></tr>" in report.text


def test_a_host_without_openssl_says_so(session, api_client, app, tmp_path, monkeypatch):
    environment = make_environment(session)
    here = make_host(session, environment, name="here", transport="local")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "getconf", "grep", "head", "cut"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    monkeypatch.setenv("PATH", str(bin_dir))  # "This machine" runs the script with the server's PATH
    answer = api_client.post(f"/api/v1/environments/{environment.id}/hosts/{here.id}/crypto-speed")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["library"] is None and body["note"] == NO_OPENSSL and body["ciphers"] == []
    card = api_client.get(f"/api/v1/environments/{environment.id}/plan").json()["cards"]["transport"]
    assert card["values"]["encryption"][0]["library"] is None
    # a viewer may not make a host work
    make_user(session, "val", role=Role.viewer)
    with TestClient(app, follow_redirects=False) as viewer:
        log_in(viewer, "val")
        refused = viewer.post(f"/environments/{environment.id}/hosts/{here.id}/crypto-speed")
    assert refused.status_code == 403
