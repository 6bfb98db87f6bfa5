"""Running the stand-ins (tests/standins) as the collection will run the real tools: the script on
standard input, the scenario and the database's content in the environment."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

STANDINS = Path(__file__).resolve().parents[1] / "standins"
LOGON = ["-S", "-L", "/", "as", "sysdba"]


def environment(tmp_path: Path, scenario: str = "ok", data: dict | None = None, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("STANDIN_")}
    env.update(STANDIN_SCENARIO=scenario, STANDIN_LOG=str(tmp_path / "standin.log"), ORACLE_SID="ORCL1")
    if data is not None:
        path = tmp_path / "standin-data.json"
        path.write_text(json.dumps(data))
        env["STANDIN_DATA"] = str(path)
    env.update(extra)
    return env


def run(tool: str, args: list[str], *, stdin: str = "", env: dict[str, str], timeout: float = 30):
    return subprocess.run(
        [str(STANDINS / tool), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def logged(tmp_path: Path) -> list[dict]:
    path = tmp_path / "standin.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
