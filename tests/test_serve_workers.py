"""`redolab serve --workers N`: several web processes on one PostgreSQL database, one setup link,
one login for all of them; refused on SQLite with what to do instead."""

import time
from pathlib import Path

import httpx2 as httpx

from tests.conftest import _fresh_postgres_database
from tests.services import start_redolab
from tests.test_cli import run


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _health(client) -> int | None:
    try:
        return client.get("/healthz").status_code
    except httpx.ConnectError:  # the processes are still starting
        return None


def test_several_web_processes_need_postgresql(tmp_path):
    result = run(tmp_path, "serve", "--workers", "2")
    assert result.returncode == 1
    assert "several web processes need PostgreSQL" in result.stderr and "REDOLAB_DATABASE_URL" in result.stderr


def test_two_web_processes_share_the_setup_link_the_login_and_the_data(tmp_path, postgres_server):
    url = _fresh_postgres_database(postgres_server)
    server = start_redolab(tmp_path, "--workers", "2", timeout=120, REDOLAB_DATABASE_URL=url)  # a busy machine
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            deadline = time.monotonic() + 120  # both processes up: seconds here, longer on a busy machine
            while len(_children(server.process.pid)) < 2 or _health(client) != 200:
                assert time.monotonic() < deadline, "".join(server.output)
                time.sleep(0.2)
            token = server.setup_url.split("token=")[1]
            answers = {client.get(f"/setup?token={token}").status_code for _ in range(12)}
            assert answers == {200}, "".join(server.output)  # every process knows the one-time link
        assert (
            run(
                tmp_path, "user", "create", "alice", stdin="a long enough password\n", REDOLAB_DATABASE_URL=url
            ).returncode
            == 0
        )
        with httpx.Client(base_url=server.url, timeout=10) as browser:
            browser.get("/login")
            response = browser.post(
                "/login",
                data={"username": "alice", "password": "a long enough password"},
                headers={"X-CSRFToken": browser.cookies["csrftoken"], "Origin": server.url},
            )
            assert response.status_code == 303, response.text
            pages = [browser.get("/environments").status_code for _ in range(20)]
            assert pages == [200] * 20  # whichever process answers, the session is valid
        assert len(_children(server.process.pid)) >= 2
    finally:
        server.stop()
