"""Credentials, host-key pinning and Test connection, through the API, against a real sshd."""

import logging
import subprocess

import pytest

from tests.factories import make_environment, make_host, make_ssh_environment


@pytest.fixture
def env_with_host(session, sshd):
    environment = make_environment(session)
    host = make_host(session, environment, ssh_address="127.0.0.1", ssh_port=sshd.port, ssh_user=sshd.user)
    return environment, host


def test_uploaded_key_is_never_returned_or_logged(api_client, env_with_host, sshd, caplog, session):
    caplog.set_level(logging.DEBUG)
    environment, _host = env_with_host
    base = f"/api/v1/environments/{environment.id}"
    created = api_client.post(
        f"{base}/credentials", json={"name": "dg key", "kind": "uploaded_key", "private_key": sshd.client_key}
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["public_key_fingerprint"].startswith("SHA256:")
    secret_line = sshd.client_key.splitlines()[1]
    for response in (created, api_client.get(f"{base}/credentials"), api_client.get(f"{base}/hosts")):
        assert secret_line not in response.text
        assert "private_key" not in response.text
    from redolab.environments.models import Credential

    stored = session.get(Credential, body["id"])
    assert secret_line not in stored.encrypted_private_key  # encrypted at rest
    assert secret_line not in caplog.text


def test_bad_key_is_refused_and_nothing_stored(api_client, env_with_host):
    environment, _ = env_with_host
    base = f"/api/v1/environments/{environment.id}"
    response = api_client.post(
        f"{base}/credentials", json={"name": "junk", "kind": "uploaded_key", "private_key": "not a key"}
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "private_key"]
    assert api_client.get(f"{base}/credentials").json() == []


def test_encrypted_key_needs_its_passphrase(api_client, env_with_host, tmp_path):
    environment, _ = env_with_host
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "s3cret-pass", "-f", str(tmp_path / "k")], check=True)
    key = (tmp_path / "k").read_text()
    base = f"/api/v1/environments/{environment.id}/credentials"
    missing = api_client.post(base, json={"name": "k", "kind": "uploaded_key", "private_key": key})
    assert missing.status_code == 422 and missing.json()["detail"][0]["loc"] == ["body", "passphrase"]
    ok = api_client.post(
        base, json={"name": "k", "kind": "uploaded_key", "private_key": key, "passphrase": "s3cret-pass"}
    )
    assert ok.status_code == 201 and ok.json()["has_passphrase"] is True
    assert "s3cret-pass" not in ok.text


def test_scan_then_accept_pins_only_the_seen_key(api_client, env_with_host, sshd):
    environment, host = env_with_host
    base = f"/api/v1/environments/{environment.id}/hosts/{host.id}/host-key"
    scanned = api_client.post(f"{base}/scan")
    assert scanned.status_code == 200
    assert scanned.json()["fingerprint"] == sshd.host_key_fingerprint
    wrong = api_client.put(base, json={"fingerprint": "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"})
    assert wrong.status_code == 422
    assert f"offers {sshd.host_key_fingerprint}" in wrong.text
    assert (
        api_client.get(f"/api/v1/environments/{environment.id}/hosts/{host.id}").json()["host_key_fingerprint"] is None
    )
    right = api_client.put(base, json={"fingerprint": sshd.host_key_fingerprint})
    assert right.status_code == 200
    assert right.json()["host_key_fingerprint"] == sshd.host_key_fingerprint
    forgotten = api_client.delete(base)
    assert forgotten.json()["host_key_fingerprint"] is None


def test_scan_unreachable_host_is_502(api_client, session):
    from tests.services import free_port

    environment = make_environment(session)
    host = make_host(session, environment, ssh_address="127.0.0.1", ssh_port=free_port())
    response = api_client.post(f"/api/v1/environments/{environment.id}/hosts/{host.id}/host-key/scan")
    assert response.status_code == 502
    assert "cannot reach 127.0.0.1" in response.json()["detail"]


def test_test_connection_reports_the_host(api_client, session, sshd, secret_key):
    environment, primary, _ = make_ssh_environment(session, sshd, secret_key=secret_key)
    report = api_client.post(f"/api/v1/environments/{environment.id}/hosts/{primary.id}/test").json()
    assert report["reachable"] and report["authenticated"]
    assert report["uname"].startswith("Linux") and report["architecture"] == "x86_64"
    assert set(report["probe"]) == {"present", "current", "path"}
    assert report["settings"]["interface"] == "lo" and report["settings"]["mtu_bytes"] == 65536
    assert len(report["settings"]["tcp_wmem"]) == 3


def test_test_connection_says_why_not(api_client, session, sshd, secret_key):
    environment, primary, _ = make_ssh_environment(session, sshd, secret_key=secret_key, pinned=False)
    report = api_client.post(f"/api/v1/environments/{environment.id}/hosts/{primary.id}/test").json()
    assert report["authenticated"] is False
    assert report["reachable"] is None  # nothing was tried before the host key is pinned
    assert "not verified yet" in report["error"]


def test_test_connection_refused_key_means_reachable(api_client, session, sshd, secret_key, tmp_path):
    import subprocess

    from redolab.environments.credentials import CredentialCreate, create_credential

    environment, primary, _ = make_ssh_environment(session, sshd, secret_key=secret_key)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    other = CredentialCreate(name="other", kind="uploaded_key", private_key=(tmp_path / "other").read_text())
    primary.credential_id = create_credential(
        session=session, environment=environment, credential_in=other, secret_key=secret_key
    ).id
    session.commit()
    report = api_client.post(f"/api/v1/environments/{environment.id}/hosts/{primary.id}/test").json()
    assert report["reachable"] is True and report["authenticated"] is False
    assert "was refused" in report["error"]


def test_key_file_credential_runs_a_connection_test(api_client, session, sshd, env_with_host):
    environment, host = env_with_host
    base = f"/api/v1/environments/{environment.id}"
    missing = api_client.post(f"{base}/credentials", json={"name": "f", "kind": "key_path", "key_path": "/nope/id"})
    assert missing.status_code == 422 and "is not a private key file redolab can use" in missing.text
    created = api_client.post(
        f"{base}/credentials", json={"name": "file", "kind": "key_path", "key_path": str(sshd.client_key_path)}
    )
    assert created.status_code == 201, created.text
    api_client.patch(f"{base}/hosts/{host.id}", json={"credential_id": created.json()["id"]})
    api_client.put(f"{base}/hosts/{host.id}/host-key", json={"fingerprint": sshd.host_key_fingerprint})
    report = api_client.post(f"{base}/hosts/{host.id}/test").json()
    assert report["authenticated"] is True, report


def test_verify_accept_and_test_in_the_page(browser_client, session, sshd, secret_key):
    environment, primary, _ = make_ssh_environment(session, sshd, secret_key=secret_key, pinned=False)
    base = f"/environments/{environment.id}/hosts/{primary.id}"
    htmx = {"HX-Request": "true"}
    panel = browser_client.post(f"{base}/verify", headers=htmx)
    assert sshd.host_key_fingerprint in panel.text and "Accept this key" in panel.text
    wrong = browser_client.post(f"{base}/host-key", data={"fingerprint": "SHA256:nottheone"}, headers=htmx)
    assert "nothing was pinned" in wrong.text
    accepted = browser_client.post(f"{base}/host-key", data={"fingerprint": sshd.host_key_fingerprint}, headers=htmx)
    assert accepted.headers["HX-Retarget"] == "#hosts" and "verified" in accepted.text
    report = browser_client.post(f"{base}/test", headers=htmx)
    assert 'id="connection-report"' in report.text and "Authenticated</th><td>yes" in report.text
    assert "MTU 65536 bytes" in report.text
