"""Collections over the real sshd with the stand-ins: each test gets an ORACLE_HOME (bin/sqlplus) and a
Db2 sqllib (db2profile putting db2 and db2pd on the PATH) of its own, whose wrappers run the stand-ins
with the test's scenario. Nothing in redolab passes environment variables through for tests: the wrappers
are the host's tools, as an ORACLE_HOME and a db2profile are."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from redolab.collect.scripts import SQL_DIR
from redolab.environments.schemas import DatabaseAccessUpdate
from redolab.environments.service import set_database_access
from tests.factories import make_ssh_environment

STANDINS = Path(__file__).resolve().parents[1] / "standins"


@dataclass
class Database:
    """The stand-in database of one test: set `scenario` and `data`, then collect."""

    root: Path
    scenario: str = "ok"
    data: dict | None = None
    hang_seconds: float = 3
    password: str | None = None
    flood_bytes: int | None = None  # STANDIN_FLOOD_BYTES of the short_lines and wide_chars scenarios

    @property
    def oracle_home(self) -> Path:
        return self.root / "oracle_home"

    @property
    def sqllib(self) -> Path:
        return self.root / "sqllib"

    @property
    def log(self) -> Path:
        return self.root / "standin.log"

    def write(self) -> None:
        variables = {"STANDIN_SCENARIO": self.scenario, "STANDIN_LOG": str(self.log),
                     "STANDIN_SQL_DIR": str(SQL_DIR), "STANDIN_HANG_SECONDS": str(self.hang_seconds)}  # fmt: skip
        if self.flood_bytes is not None:
            variables["STANDIN_FLOOD_BYTES"] = str(self.flood_bytes)
        if self.password is not None:
            variables["STANDIN_PASSWORD"] = self.password
        if self.data is not None:
            path = self.root / "data.json"
            path.write_text(json.dumps(self.data))
            variables["STANDIN_DATA"] = str(path)
        exports = "".join(f"export {key}={shlex.quote(value)}\n" for key, value in variables.items())
        bin_dir = self.oracle_home / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        tools = self.root / "db2bin"
        tools.mkdir(exist_ok=True)
        for directory, tool in ((bin_dir, "sqlplus"), (tools, "db2"), (tools, "db2pd")):
            wrapper = directory / tool
            wrapper.write_text(
                f'#!/bin/sh\n{exports}exec {shlex.quote(sys.executable)} {shlex.quote(str(STANDINS / tool))} "$@"\n'
            )
            wrapper.chmod(0o755)
        self.sqllib.mkdir(exist_ok=True)
        (self.sqllib / "db2profile").write_text(f"PATH={shlex.quote(str(tools))}:$PATH\nexport PATH\n")

    def calls(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []


@pytest.fixture
def database(tmp_path) -> Database:
    found = Database(tmp_path / "db")
    found.root.mkdir()
    found.write()
    return found


@pytest.fixture
def oracle_env(session, sshd, secret_key, database):
    environment, primary, _ = make_ssh_environment(session, sshd, secret_key=secret_key)
    set_database_access(
        session=session,
        host=primary,
        secret_key=secret_key,
        access_in=DatabaseAccessUpdate(db_kind="oracle", oracle_home=str(database.oracle_home), oracle_sid="ORCL1"),
    )
    return environment, primary


@pytest.fixture
def db2_env(session, sshd, secret_key, database):
    environment, primary, _ = make_ssh_environment(
        session, sshd, secret_key=secret_key, platform="hadr", transport_mode="NEARSYNC", protection_mode=None
    )
    set_database_access(
        session=session,
        host=primary,
        secret_key=secret_key,
        access_in=DatabaseAccessUpdate(db_kind="db2", db2_sqllib=str(database.sqllib), db2_database="SAMPLE"),
    )
    return environment, primary
