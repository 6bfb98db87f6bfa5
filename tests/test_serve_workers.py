"""`redolab serve --workers N`: several web processes on one PostgreSQL database, one setup link
(which makes one admin however many posts arrive at once, in whichever process), one login for all
of them; refused on SQLite with what to do instead."""

import re
import time
from contextlib import ExitStack
from functools import partial
from pathlib import Path

import httpx2 as httpx

from tests.auth.test_races import _at_once, _setup_form
from tests.cli_runner import run_process as run
from tests.conftest import _fresh_postgres_database
from tests.services import start_redolab


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


def _get_or_none(client, path: str):
    try:
        return client.get(path)
    except httpx.ConnectError:  # the processes are still starting
        return None


def test_several_web_processes_need_postgresql(tmp_path):
    result = run(tmp_path, "serve", "--workers", "2")
    assert result.returncode == 1
    assert "several web processes need PostgreSQL" in result.stderr and "REDOLAB_DATABASE_URL" in result.stderr


def test_two_web_processes_share_the_setup_link_the_login_and_the_data(tmp_path, postgres_server):
    """Also the race of tests/auth/test_races.py on the setup link shared by the processes: each
    process of `serve --workers 2` holds the link; only the database can tell them apart (one server
    started for both: a `serve --workers 2` on a fresh database costs some 20 s of CPU)."""
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
        with ExitStack() as stack:  # the link used at once from six clients: one admin
            clients = [stack.enter_context(httpx.Client(base_url=server.url, timeout=30)) for _ in range(6)]
            for client in clients:
                while (page := _get_or_none(client, f"/setup?token={token}")) is None:
                    assert time.monotonic() < deadline, "".join(server.output)
                    time.sleep(0.2)
                assert page.status_code == 200, "".join(server.output)
                client.headers.update({"X-CSRFToken": client.cookies["csrftoken"], "Origin": server.url})
            forms = [{**_setup_form(i), "token": token} for i in range(len(clients))]
            answers = _at_once([partial(c.post, "/setup", data=f) for c, f in zip(clients, forms, strict=True)])
        assert sorted(a.status_code for a in answers) == [303] + [404] * 5, [a.text[:200] for a in answers]
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


def test_a_taken_port_is_named_with_how_to_choose_another_and_no_setup_link(tmp_path):
    """Issue 58: with the port in use, `redolab serve` stops before printing a setup link (it would be the
    other server's), names the port and prints the line to run instead."""
    import socket
    import subprocess

    from tests.services import REDOLAB, redolab_env

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [str(REDOLAB), "serve", "--port", str(port)],
            env=redolab_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
    printed = result.stdout + result.stderr
    assert result.returncode != 0, printed
    assert f"port {port} on 127.0.0.1 is in use" in printed and f"REDOLAB_PORT={port + 1} make run" in printed
    assert "/setup?token=" not in printed and "Traceback" not in printed


# What a newcomer runs, as typed in a shell: the Makefile's uv with the system's certificates, its sync and probe
# steps, then `redolab serve`. The front-end assets and the manual count as built (make -o): rebuilding them is
# make test's work, not these tests'.
_MADE = ("frontend/static/vendor/htmx.min.js", "frontend/manual/index.html")


def _make_run(tmp_path, port: int):
    import os
    import subprocess

    from redolab.core.config import PROJECT_ROOT
    from tests.services import redolab_env

    # python3 is the system's (with uv), not this test's virtual environment's
    venv = os.environ.get("VIRTUAL_ENV") or str(PROJECT_ROOT / ".venv")
    outside_the_venv = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if not d.startswith(venv))
    return subprocess.Popen(
        ["make", "-s", *(f"--old-file={name}" for name in _MADE), "run"],
        env=redolab_env(tmp_path, REDOLAB_PORT=str(port), UV_NO_PROGRESS="1", PATH=outside_the_venv),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=PROJECT_ROOT,
        start_new_session=True,
    )


def _red_lines(printed: str) -> list[str]:
    """Lines a terminal would show as a warning or an error, other than the port's own refusal and make's."""
    red = [line for line in printed.splitlines() if re.search(r"\b(warning|error|externally-managed)\b", line, re.I)]
    return [line for line in red if "is in use" not in line and not line.startswith("make")]


def test_make_run_with_its_port_taken_prints_the_hint_and_nothing_red(tmp_path):
    """Issue 58's "Done when": with the port busy, `make run` names the port, prints the REDOLAB_PORT line
    and no setup link, and prints no warning or error it then works around."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        process = _make_run(tmp_path, port)
        printed, _ = process.communicate(timeout=120)
    assert process.returncode != 0, printed
    assert f"port {port} on 127.0.0.1 is in use" in printed and f"REDOLAB_PORT={port + 1} make run" in printed
    assert "/setup?token=" not in printed and "Traceback" not in printed
    assert _red_lines(printed) == []


def test_make_run_on_a_free_port_serves_the_dashboard_and_prints_nothing_red(tmp_path):
    """The other half: on a free port, `make run` serves the login page there, prints the setup link for
    that port (its own server's), and no warning or error."""
    import os
    import signal

    from tests.services import free_port

    port = free_port()
    process = _make_run(tmp_path, port)
    try:
        answered = None
        for _ in range(240):
            try:
                answered = httpx.get(f"http://127.0.0.1:{port}/login", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stdout.read()
                time.sleep(0.25)
        assert answered is not None and answered.status_code == 200, answered
        assert "<h1>Log in</h1>" in answered.text, answered.text[:500]
    finally:
        os.killpg(process.pid, signal.SIGINT)
        printed, _ = process.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/setup?token=" in printed, printed
    assert "Traceback" not in printed
    assert _red_lines(printed) == [], printed


def test_the_setup_hint_is_a_command_that_can_be_pasted(tmp_path):
    from tests.services import start_redolab

    server = start_redolab(tmp_path)
    try:
        printed = "".join(server.output)
        assert "python3 -m uv run redolab user create admin" in printed, printed
        assert "NAME" not in printed
    finally:
        server.stop()
