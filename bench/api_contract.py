#!/usr/bin/env python3
"""The API document is the contract (issue 57): Schemathesis against a served redolab for N minutes.

Seeds a fresh SQLite database (an admin, one environment with a primary and a standby host), starts
`redolab serve` without its worker on a free port, and runs Schemathesis's CLI over every operation of
/api/v1/openapi.json, authenticated as the admin, until the time is spent (fuzzing repeats). Checks:
no server error, status code conformance (no undeclared status), response schema conformance and
positive data acceptance (no schema-valid request refused), as tests/test_api_contract.py runs them
with a few examples per operation on every CI run. Prints requests sent, server errors, undeclared
statuses and refusals; asserts nothing. A 422 of an operation in the test's REFUSED_BY_RULES (a rule
the schema cannot express, named there) and the declared 502 of a host-key scan (the seeded hosts do
not answer SSH) are counted apart. DELETE /api/v1/users/{id}/sessions, PUT .../role and POST
.../disable are left out: Schemathesis learns the admin's id from the answers and would end the run's
own sessions, or demote or disable it once it has made another admin.

    python3 bench/api_contract.py                 # 10 minutes
    python3 bench/api_contract.py --minutes 2 --seed 57
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT))

import httpx2 as httpx  # noqa: E402  (the maintained httpx fork starlette uses)

PASSWORD = "bench password 123"  # a throwaway admin in a throwaway database
ACTOR_ID = 1_999_999_957
CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance,positive_data_acceptance"
# What each failing check counts as in the figures.
KINDS = {
    "not_a_server_error": "server errors",
    "status_code_conformance": "undeclared statuses",
    "positive_data_acceptance": "schema-valid refusals",
    "response_schema_conformance": "responses off their schema",
}


def seed(database_url: str) -> None:
    """An admin (the Schemathesis user) and one environment with two hosts, so ids 1 and 2 name rows."""
    from sqlalchemy import update

    import redolab.models  # noqa: F401  (every table known)
    from redolab.auth.models import Role, User
    from redolab.auth.service import create_user
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.core.migrate import upgrade
    from redolab.environments.schemas import EnvironmentCreate, HostCreate
    from redolab.environments.service import create_environment, create_host

    engine = make_engine(database_url)
    upgrade(engine)
    with make_sessionmaker(engine)() as session:
        admin = create_user(session=session, username="bench", password=PASSWORD, role=Role.admin)
        # an id generated ones hardly meet: ending its sessions, disabling or demoting it would log the run out
        session.execute(update(User).where(User.id == admin.id).values(id=ACTOR_ID))
        session.commit()
        environment = create_environment(session=session, env_in=EnvironmentCreate(name="contract"))
        for number, role in enumerate(("primary", "standby"), start=1):
            host_in = HostCreate(
                name=f"db{number}", ssh_address=f"db{number}.example.com", ssh_user="oracle", role=role
            )
            create_host(session=session, environment=environment, host_in=host_in)
    engine.dispose()


def bearer(url: str) -> str:
    response = httpx.post(f"{url}/api/v1/auth/token", data={"username": "bench", "password": PASSWORD}, timeout=30)
    response.raise_for_status()
    return response.json()["access_token"]


def run_schemathesis(url: str, token: str, seconds: int, seed_value: int, report: Path) -> int:
    command = [
        str(Path(sys.executable).parent / "st"),
        "run",
        f"{url}/api/v1/openapi.json",
        "--url",
        url,
        "-H",
        f"Authorization: Bearer {token}",
        "--checks",
        CHECKS,
        "--max-time",
        str(seconds),
        "--seed",
        str(seed_value),
        "--workers",
        "2",
        "--phases",
        "examples,coverage,fuzzing",
        # Schemathesis learns the admin's id from the answers and ends its sessions, or demotes it once it
        # has made another admin: the rest of the run would be 401s or 403s (tests/test_api_contract.py
        # sends these with its own user's id only where the last-admin rule refuses them)
        "--exclude-path",
        "/api/v1/users/{user_id}/sessions",
        "--exclude-path",
        "/api/v1/users/{user_id}/role",
        "--exclude-path",
        "/api/v1/users/{user_id}/disable",
        "--continue-on-failure",
        "--report",
        "ndjson",
        "--report-ndjson-path",
        str(report),
        "--no-color",
    ]
    return subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode


def figures(report: Path) -> dict:
    """Requests sent, their statuses, and the failing checks of each kind by operation. A refusal by
    a rule of tests/test_api_contract.py's REFUSED_BY_RULES, and the declared 502 of an operation that
    reaches a host, are counted apart."""
    from tests.test_api_contract import REACHES_A_HOST, REFUSED_BY_RULES

    sent, failures, statuses = 0, Counter(), Counter()
    examples: dict[str, Counter] = {}
    for line in report.read_text().splitlines():
        recorder = (json.loads(line).get("ScenarioFinished") or {}).get("recorder") or {}
        label = recorder.get("label", "")
        for interaction in (recorder.get("interactions") or {}).values():
            sent += 1
            statuses[((interaction or {}).get("response") or {}).get("status_code")] += 1
        for checks in (recorder.get("checks") or {}).values():
            for check in checks:
                if check.get("status") == "success":
                    continue
                kind = KINDS.get(check["name"], check["name"])
                if kind == "schema-valid refusals" and label in REFUSED_BY_RULES:
                    kind = "refusals by named rules"
                if kind == "server errors" and label in REACHES_A_HOST:
                    kind = "declared 502s (SSH)"
                failures[kind] += 1
                failure = (check.get("failure_info") or {}).get("failure") or {}
                said = failure.get("message", "").replace("\n", " ")[:100]
                examples.setdefault(kind, Counter())[f"{label}: {said}"] += 1
    return {"sent": sent, "failures": failures, "statuses": statuses, "examples": examples}


LOG_LEVEL = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):")
SERVER_ERROR_LINE = re.compile(r'"([A-Z]+ \S+) HTTP/[0-9.]+" 5[0-9][0-9]')


def server_tracebacks(log: Path) -> dict[str, tuple[int, str]]:
    """The served app's log read for its server errors: {the request and the exception's last line:
    (how often, the first traceback)}. uvicorn writes the 5xx access line, then "Exception in ASGI
    application" and the traceback."""
    found: dict[str, tuple[int, str]] = {}
    request, block = "", None
    for line in [*log.read_text(errors="replace").splitlines(), "INFO: end"]:
        if block is not None and LOG_LEVEL.match(line):
            last = next((text for text in reversed(block) if text.strip()), "")
            key = f"{request}: {last.strip()[:160]}"
            count, first = found.get(key, (0, "\n".join(block)))
            found[key], block = (count + 1, first), None
        if (match := SERVER_ERROR_LINE.search(line)) and not line.startswith("  "):
            request = match.group(1)
        elif "Exception in ASGI application" in line:
            block = []
        elif block is not None:
            block.append(line)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=57)
    parser.add_argument("--report", type=Path, help="keep Schemathesis's NDJSON events here")
    parser.add_argument("--server-log", type=Path, help="keep the served app's log (access lines, tracebacks) here")
    args = parser.parse_args()
    from bench.load import start_server

    with tempfile.TemporaryDirectory(prefix="redolab-contract-") as directory:
        data_dir = Path(directory)
        database_url = f"sqlite:///{data_dir / 'redolab.db'}"
        seed(database_url)
        log = args.server_log or data_dir / "server.log"
        process, url = start_server(database_url, data_dir, log=log)
        try:
            started = time.monotonic()
            report = args.report or data_dir / "events.ndjson"
            code = run_schemathesis(url, bearer(url), round(args.minutes * 60), args.seed, report)
            elapsed = time.monotonic() - started
            found = figures(report)
        finally:
            process.terminate()
            process.wait(timeout=30)
        tracebacks = server_tracebacks(log)
    print(f"Schemathesis {CHECKS.replace(',', ', ')}: {elapsed:.0f} s, seed {args.seed}, exit code {code}")
    print(f"{'requests sent:':<28}{found['sent']:,}")
    kinds = ("server errors", "undeclared statuses", "schema-valid refusals", "responses off their schema")
    for kind in (*kinds, "refusals by named rules", "declared 502s (SSH)"):
        print(f"{kind + ':':<28}{found['failures'][kind]}")
        for label, count in found["examples"].get(kind, Counter()).most_common(12):
            print(f"    {count:>5}  {label}")
    # every 5xx the app raised, with its traceback: a server error the run met once may not come back
    print(f"{'server tracebacks:':<28}{sum(count for count, _ in tracebacks.values())}")
    for where, (count, traceback) in tracebacks.items():
        print(f"    {count:>5}  {where}")
        print("\n".join(f"           {line}" for line in traceback.splitlines()[-40:]))
    print("statuses:", ", ".join(f"{code}: {count}" for code, count in sorted(found["statuses"].items(), key=str)))


if __name__ == "__main__":
    main()
