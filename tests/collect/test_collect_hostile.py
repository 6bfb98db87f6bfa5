"""A hostile database host (or a login script on it) over the real sshd: its output is refused at a cap
on bytes, lines or rows, or at the reading child's limits, naming the host, the step and the cap, and
nothing is stored. The server's memory and /healthz meanwhile: bench/collect_output.py."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.collect import execution, output, reading, service
from redolab.collect.errors import CollectionError
from redolab.collect.execution import CollectionExecution
from redolab.collect.models import CollectionStatus
from redolab.collect.steps import OUTPUT_CAPS, OutputCaps
from redolab.core.db import make_sessionmaker
from redolab.core.isolate import ChildLimits
from redolab.environments.models import ProtectionMode, TransportMode
from tests.collect.test_collect_ssh import collect, stored
from tests.collect.test_standins import sqlplus
from tests.standins.standin_common import DEFAULT_DATA


def refused(session, engine, secret_key, oracle_env, database, scenario: str):
    environment_, primary = oracle_env
    database.scenario = scenario
    database.write()
    collection = collect(session, engine, secret_key, environment_)
    assert collection.status is CollectionStatus.failed
    assert collection.failure_kind == "too_large", (collection.failure_kind, collection.failure_message)
    assert collection.failure_message.startswith(f"{primary.name}, step session: ")
    assert "nothing was stored" in collection.failure_message and collection.failure_hint
    assert stored(session) == (0, 0)
    return collection


def test_63_mib_of_short_lines_is_refused_at_the_line_cap(session, engine, secret_key, oracle_env, database):
    """The issue's login script: 63 MiB of short lines passed the 64 MiB cap, and the lines kept as str
    took the server from 285 to 2,191 MiB. Now the 2,000,001st line stops the command."""
    collection = refused(session, engine, secret_key, oracle_env, database, "short_lines")
    assert f"{OUTPUT_CAPS.lines:,} lines" in collection.failure_message


def test_four_byte_characters_are_refused_at_the_byte_cap(
    session, engine, secret_key, oracle_env, database, monkeypatch
):
    """240 MB of four-byte characters passed a '64 MiB' cap that counted characters: bytes are counted
    now (the same at 160 MiB and 240 MB: bench/collect_output.py; here 1 MiB and 3 MB)."""
    monkeypatch.setattr(CollectionExecution, "output_caps", OutputCaps(1024 * 1024, 10**6, 128 * 1024))
    database.flood_bytes = 3_000_000  # 750,000 characters: under the cap had it counted them
    collection = refused(session, engine, secret_key, oracle_env, database, "wide_chars")
    assert "1 MiB (1,048,576 bytes)" in collection.failure_message


def test_rows_past_the_row_cap_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(output, "MAX_ROWS", 10)  # the stand-in's database has 11 archived logs
    done = sqlplus(tmp_path)
    with pytest.raises(CollectionError) as caught:
        output.read_sqlplus(done.stdout, exit_code=done.returncode)
    assert caught.value.kind == "too_large" and caught.value.step == "archived_log"
    assert "more than 10 rows" in caught.value.message


def test_output_is_read_in_a_child_under_limits(tmp_path):
    """The reader runs in another process; one that needs more memory than RLIMIT_AS allows is a
    refusal naming the limit and its setting, and the caller's process is untouched."""
    path = tmp_path / "out"
    path.write_bytes(b"redolab-step: database\n" + b"x|\n" * 4_000_000)  # 12 MB of lines, garbage
    limits = ChildLimits(cpu_seconds=30, memory_bytes=256 * 1024 * 1024, wall_seconds=60)
    with pytest.raises(CollectionError) as caught:
        reading.read_isolated(reading.sqlplus_file, str(path), step="session", limits=limits)
    assert caught.value.kind in ("garbage", "too_large")
    pid = reading.read_isolated(_pid, step="session", limits=limits)
    assert pid != os.getpid()


def _pid() -> int:
    return os.getpid()


def test_a_size_beyond_the_bounds_is_named_not_offered(session, engine, secret_key, oracle_env, database, api_client):
    """A database size of 10^30 bytes (beyond 1 EiB, core.fields.MAX_SIZE_BYTES) was offered as a fact,
    and Apply answered 500."""
    environment_, _ = oracle_env
    database.data = dict(DEFAULT_DATA, size=[[10**30, 0, 10**30]])
    database.write()
    collection = collect(session, engine, secret_key, environment_)
    assert collection.status is CollectionStatus.succeeded, collection.failure_message
    assert "database_size_bytes" not in collection.facts["offered"]
    assert collection.facts["offered"]["primary_rac_nodes"] == 2  # the others still are
    note = next(note for note in collection.notes if note.startswith("Not offered: Database size"))
    assert "1000000000000000000000000000000" in note and "1 EiB" in note
    response = api_client.post(f"/api/v1/collections/{collection.id}/apply-facts", json={})
    assert response.status_code == 200, response.text
    session.expire_all()
    assert session.get(type(environment_), environment_.id).database_size_bytes != 10**30


def test_apply_with_a_stale_or_bad_fact_answers_4xx(session, engine, secret_key, oracle_env, database, api_client):
    environment_, _ = oracle_env
    collection = collect(session, engine, secret_key, environment_)
    # stored before facts were checked when read: never offered, never applied
    collection.facts = dict(collection.facts, offered=dict(collection.facts["offered"], database_size_bytes=10**30))
    session.commit()
    assert "database_size_bytes" not in service.offered_changes(environment_, collection)
    # stale: the environment now needs SYNC (Maximum Protection), the host said ASYNC
    environment_.protection_mode, environment_.transport_mode = ProtectionMode.max_protection, TransportMode.sync
    session.commit()
    response = api_client.post(f"/api/v1/collections/{collection.id}/apply-facts", json={})
    assert response.status_code == 409, response.text
    assert "Transport mode" in response.text
    session.expire_all()
    assert session.get(type(environment_), environment_.id).transport_mode is TransportMode.sync


def test_an_infinite_rate_is_not_a_value():
    with pytest.raises(CollectionError) as caught:
        output.value("float", "1e999", "line 3, MAXVAL", "awr_sysmetric")
    assert caught.value.kind == "garbage"


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([b"a", b"\r", b"\n", b"\r\n", b"\xe2\x82", b"\xac", b"\xff", "é😀".encode(), b" "])))
def test_lines_of_a_file_split_as_the_text_is(tmp_path, parts):
    """The child reads the spool file a line at a time; the lines are those output._lines makes of the
    whole text (LF, CRLF and CR; undecodable bytes replaced alike)."""
    data = b"".join(parts)
    path = tmp_path / "out"
    path.write_bytes(data)
    text = data.decode(errors="replace")
    assert reading.lines_of(str(path)) == text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def test_a_long_import_keeps_the_heartbeat(session, engine, secret_key, oracle_env, monkeypatch):
    """A first collection of a year of 32 threads imports for minutes; without a heartbeat meanwhile the
    worker's job was taken for stopped after 30 s and the collection failed ("the worker running it
    stopped"). The import waits now beat as the commands' waits do."""
    environment_, _ = oracle_env
    importing: list[float] = []
    beats: list[float] = []
    slow_import = execution.import_now

    def import_now(**kwargs):
        importing.append(time.monotonic())
        time.sleep(1.5)
        importing.append(time.monotonic())
        return slow_import(**kwargs)

    monkeypatch.setattr(execution, "import_now", import_now)
    collection = service.queue_collection(session=session, environment=environment_, requested_by="alice")
    run = CollectionExecution(
        make_sessionmaker(engine), secret_key, collection.id, heartbeat=lambda: beats.append(time.monotonic())
    )
    assert asyncio.run(run.execute()) == "succeeded"
    assert any(importing[0] < beat < importing[1] for beat in beats), (importing, beats)


def test_the_archived_logs_come_back_as_their_import_file(tmp_path):
    """The web process gets the archived logs as the import CSV the child wrote, not as a million rows."""
    done = sqlplus(tmp_path)
    path = tmp_path / "spool.out"
    path.write_text(done.stdout)
    collected = reading.sqlplus_file(str(path), exit_code=done.returncode)
    logs = collected.steps["archived_log"]
    assert isinstance(logs, reading.SpooledRows) and len(logs) == 11
    rows = output.read_sqlplus(done.stdout, exit_code=done.returncode).steps["archived_log"]
    assert Path(logs.path).read_bytes().decode() == output.to_import_csv(rows)
