"""Limits enforced before any work: the body size (before parsing and authentication), key files
of credentials, and uploads that are never imported."""

from __future__ import annotations

import os
import secrets
import select
import socket
import time

import pytest
from fastapi.testclient import TestClient

from redolab.core.config import Settings
from redolab.main import create_app
from redolab.redo.uploads import prune_uploads, store_pasted
from tests import services
from tests.conftest import log_in, migrated_sqlite
from tests.factories import make_environment


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """HTTP behaviour, the same on either database: these tests run once, on SQLite."""
    return migrated_sqlite(tmp_path_factory)


MIB = 1024 * 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`redolab serve` on a free port: the limits are about what a real server reads off a socket."""
    server = services.start_redolab(tmp_path_factory.mktemp("served"))
    yield server
    server.stop()


def _exchange(
    server, path: str, headers: dict, body_bytes: int, chunked: bool, prefix: bytes = b""
) -> tuple[int, int, bytes]:
    """Send a request whose body is `body_bytes` of 'x' (chunked or with the declared length) until
    the server answers; returns (status, bytes of body sent, response head)."""
    host, port = server.url.removeprefix("http://").split(":")
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {body_bytes}")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    sock.setblocking(False)
    sent, answer, block = 0, b"", b"x" * (64 * 1024)
    if prefix:
        sock.sendall(f"{len(prefix):x}\r\n".encode() + prefix + b"\r\n" if chunked else prefix)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and b"\r\n\r\n" not in answer:
        readable, writable, _ = select.select([sock], [sock] if sent < body_bytes else [], [], 0.5)
        if readable:
            data = sock.recv(65536)
            if not data:
                break
            answer += data
        elif writable:
            piece = (f"{len(block):x}\r\n".encode() + block + b"\r\n") if chunked else block
            try:
                sock.send(piece)  # may send part of it: counted as a whole, an overestimate
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                continue
            sent += len(block)
    sock.close()
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
    return status, sent, answer.split(b"\r\n\r\n")[0]


def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_read(served):
    status, sent, head = _exchange(
        served, "/api/v1/environments", {"Content-Type": "application/json"}, 400 * MIB, chunked=False
    )
    assert status == 413, head  # not 401: the limit comes before authentication
    assert sent < 64 * MIB  # the answer came long before the 400 MiB


def test_a_chunked_body_is_cut_off_while_it_streams(served):
    status, sent, head = _exchange(
        served, "/api/v1/environments", {"Content-Type": "application/json"}, 256 * MIB, chunked=True
    )
    assert status == 413, head
    assert sent < 64 * MIB  # the server stopped reading at 1 MiB; the rest is socket buffers


def test_an_anonymous_upload_over_the_result_import_limit_is_refused(served):
    headers = {"Content-Type": "multipart/form-data; boundary=xyz"}
    part = b'--xyz\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\n'
    status, sent, head = _exchange(
        served, "/api/v1/environments/1/runs/import", headers, 400 * MIB, chunked=True, prefix=part
    )
    assert status == 413, head
    assert sent < 160 * MIB


def test_the_message_names_the_limit(anonymous):
    response = anonymous.post(
        "/api/v1/environments", content=b"x" * (2 * MIB), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert "larger than the 1 MiB allowed for /api/v1/environments" in response.json()["detail"]
    page = anonymous.post("/login", content=b"x" * (2 * MIB), headers={"Content-Type": "text/plain"})
    assert page.status_code == 413 and "1 MiB" in page.text


def test_uploads_have_their_own_limit(settings, engine, session, user):
    small = Settings(**{**settings.model_dump(), "max_upload_bytes": 1 * MIB}, _env_file=None)
    app = create_app(small)
    environment = make_environment(session)
    with TestClient(app, follow_redirects=False) as client:
        log_in(client, user.username)
        url = f"/environments/{environment.id}/redo/preview"
        big = client.post(url, files={"file": ("awr.csv", b"x" * (2 * MIB))}, headers={"HX-Request": "true"})
        assert big.status_code == 413 and "1 MiB" in big.text
        uploads = small.data_dir / "uploads"
        assert not uploads.exists() or not list(uploads.glob("*.upload"))  # nothing was stored
        fits = client.post(url, files={"file": ("awr.csv", b"x" * (MIB // 2))}, headers={"HX-Request": "true"})
        assert fits.status_code != 413


# -- key files of credentials ---------------------------------------------------------------------


@pytest.fixture
def credential_url(api_client, session):
    environment = make_environment(session)
    return f"/api/v1/environments/{environment.id}/credentials"


def _key_path(api_client, url, path) -> tuple[int, str]:
    response = api_client.post(url, json={"name": f"k{secrets.token_hex(3)}", "kind": "key_path", "key_path": path})
    return response.status_code, response.text


def test_key_file_must_be_a_small_regular_file(api_client, credential_url, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big"
    big.write_bytes(b"x" * (65 * 1024))
    started = time.monotonic()
    for path in ("/dev/zero", "/dev/urandom", str(fifo), str(big), str(tmp_path), "/proc/self/environ"):
        status, text = _key_path(api_client, credential_url, path)
        assert status == 422 and "regular, readable OpenSSH or PEM private key of at most 64 KiB" in text, (path, text)
    assert time.monotonic() - started < 30  # /dev/zero and the FIFO were not read (they would block)


def test_key_file_messages_do_not_tell_whether_a_file_exists(api_client, credential_url, tmp_path):
    secret = tmp_path / "exists"
    secret.write_text("not a key")
    exists = _key_path(api_client, credential_url, str(secret))[1].replace(str(secret), "PATH")
    missing = _key_path(api_client, credential_url, str(tmp_path / "missing"))[1].replace(
        str(tmp_path / "missing"), "PATH"
    )
    assert exists == missing


# -- uploads never imported -----------------------------------------------------------------------


def test_old_uploads_are_pruned_and_pruning_tolerates_concurrent_deletes(tmp_path):
    uploads = tmp_path / "uploads"
    old, fresh = store_pasted(uploads, "a"), store_pasted(uploads, "b")
    now = time.time()  # the ages on the clock the pruning reads (the file system stamps the real time)
    for token, at in ((old, now - 7200), (fresh, now)):
        os.utime(uploads / f"{token}.upload", (at, at))
    assert prune_uploads(uploads, max_age_seconds=3600) == 1
    assert not (uploads / f"{old}.upload").exists() and not (uploads / f"{old}.name").exists()
    assert (uploads / f"{fresh}.upload").exists()
    assert prune_uploads(tmp_path / "nowhere", 0) == 0


def test_the_server_prunes_uploads_on_a_timer_without_any_new_upload(settings, engine):
    uploads = settings.data_dir / "uploads"
    token = store_pasted(uploads, "never imported")
    stale = time.time() - settings.upload_max_age_seconds - 60
    os.utime(uploads / f"{token}.upload", (stale, stale))
    with TestClient(create_app(settings)):  # the lifespan starts the timer; its first pass runs at once
        for _ in range(50):
            if not (uploads / f"{token}.upload").exists():
                break
            time.sleep(0.1)
    assert not (uploads / f"{token}.upload").exists()
