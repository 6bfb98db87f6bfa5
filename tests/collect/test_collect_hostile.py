"""A hostile database host (or a login script on it) over the real sshd: its output is refused at a cap
on bytes, lines or rows, or at the reading child's limits, naming the host, the step and the cap, and
nothing is stored. The server's memory and /healthz meanwhile: bench/collect_output.py."""

from __future__ import annotations

import os

import pytest

from redolab.collect import output, reading
from redolab.collect.errors import CollectionError
from redolab.collect.execution import CollectionExecution
from redolab.collect.models import CollectionStatus
from redolab.collect.steps import OUTPUT_CAPS, OutputCaps
from redolab.core.isolate import ChildLimits
from tests.collect.test_collect_ssh import collect, stored
from tests.collect.test_standins import sqlplus


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
