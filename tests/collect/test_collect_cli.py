"""`redolab collect --env NAME [--wait] [--json]`, run as a real process against the test's database."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time

from sqlalchemy import select

from redolab.collect.models import Collection
from tests.execution import execute_next
from tests.factories import make_environment
from tests.services import REDOLAB, redolab_env


def cli(tmp_path, database_url, *args):
    return subprocess.run(
        [str(REDOLAB), "collect", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=redolab_env(tmp_path, REDOLAB_DATABASE_URL=database_url),
    )


def test_collect_waits_and_prints_json(session, engine, secret_key, database_url, oracle_env, tmp_path):
    environment, primary = oracle_env
    done = threading.Event()

    def worker():  # plays `redolab serve`'s worker: runs the job as soon as the CLI queues it
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not execute_next(engine, secret_key):
            time.sleep(0.2)
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    result = cli(tmp_path, database_url, "--env", environment.name, "--wait", "--json")
    thread.join(40)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["status"] == "succeeded" and document["host_name"] == primary.name
    assert document["row_counts"]["archived_log"] == 11 and document["import_id"]


def test_collect_wait_prints_no_escapes(session, engine, secret_key, database_url, oracle_env, database, tmp_path):
    """A host that prints escapes in its error (stand-in scenario escapes): neither the stored message
    nor `redolab collect --wait`'s text carries them."""
    environment, primary = oracle_env
    database.scenario = "escapes"
    database.write()

    def worker():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not execute_next(engine, secret_key):
            time.sleep(0.2)

    thread = threading.Thread(target=worker)
    thread.start()
    result = cli(tmp_path, database_url, "--env", environment.name, "--wait")
    thread.join(40)
    assert result.returncode == 1, result.stderr
    assert f"{primary.name}, step connect: ORA-01017: invalid username??; logon denied" in result.stdout
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", result.stdout)
    session.expire_all()
    stored = session.scalars(select(Collection)).one()
    assert "\x1b" not in stored.failure_message and "owned" not in stored.failure_message


def test_collect_names_what_is_missing(session, engine, database_url, tmp_path):
    environment = make_environment(session)
    result = cli(tmp_path, database_url, "--env", environment.name)
    assert result.returncode == 1
    assert "No primary host of this environment has database access" in result.stderr
