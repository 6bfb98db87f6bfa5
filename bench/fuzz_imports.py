#!/usr/bin/env python3
"""Fuzz: tens of thousands of mutated import files through the HTTP API; prints counts.

Every input is one of the test suite's real-format files (archived-log and AWR exports, collector
output, SQL*Plus spools, AWR reports, Db2 log history, oratcptest and iperf3 output, db2pd
captures) with one to three mutations (tests/fuzzing.py lists them), sent as an operator would:
redo files are previewed then imported, results files imported as runs, db2pd files as captures.
After each answer the rules are checked: no server error, a refused import stores nothing, an
accepted one stores only finite values within the physical bounds (and is then deleted).

    python3 bench/fuzz_imports.py                       # 20,000 inputs on SQLite
    python3 bench/fuzz_imports.py --inputs 2000 --seed 7
    python3 bench/fuzz_imports.py --database-url postgresql+psycopg://...

Prints figures (inputs, accepted, refused, server errors, broken rules, by kind and mutation)
and the first broken rules with the input that broke them (saved under --keep); asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import secrets
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--database-url", default=None, help="a migrated-on-start database (default: SQLite in a temp dir)"
    )
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "redolab-fuzz-failures")
    arguments = parser.parse_args()

    import logging

    from fastapi.testclient import TestClient
    from tests.factories import PASSWORD, make_environment, make_host, make_user
    from tests.fuzzing import KINDS, Fuzzer, mutate, seeds

    from redolab.core.config import Settings
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.core.migrate import upgrade
    from redolab.main import create_app

    logging.disable(logging.ERROR)  # a 500's traceback would flood the output; it is counted instead
    workdir = Path(tempfile.mkdtemp(prefix="redolab-fuzz-"))
    url = arguments.database_url or f"sqlite:///{workdir / 'redolab.db'}"
    engine = make_engine(url)
    upgrade(engine)
    with make_sessionmaker(engine)() as session:
        user = make_user(session, f"fuzz{secrets.token_hex(3)}")
        environment = make_environment(session, name=f"fuzz-{secrets.token_hex(3)}")
        primary = make_host(session, environment, role="primary", name="p1", transport="local")
        standby = make_host(session, environment, role="standby", name="s1", transport="local")
        ids = environment.id, primary.id, standby.id
        username = user.username
    settings = Settings(
        database_url=url,
        data_dir=workdir / "var",
        secret_key=secrets.token_urlsafe(48),
        worker_enabled=False,
        _env_file=None,
    )
    app = create_app(settings)
    rng = random.Random(arguments.seed)
    corpus = seeds()
    totals: Counter = Counter()
    by_kind: dict[str, Counter] = {kind: Counter() for kind in KINDS}
    by_mutation: dict[str, Counter] = {}
    failures: list[tuple[str, str, list[str], list[str]]] = []
    slowest: list[tuple[float, int, str, str, int]] = []
    arguments.keep.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with TestClient(app, follow_redirects=False, raise_server_exceptions=False) as client:
        client.get("/login")
        assert client.post("/login", data={"username": username, "password": PASSWORD}).status_code == 303
        client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
        fuzzer = Fuzzer(client, engine, *ids)
        for number in range(1, arguments.inputs + 1):
            seed = rng.choice(corpus)
            names, data = mutate(rng, seed)
            began = time.perf_counter()
            outcome = fuzzer.submit(seed.kind, f"fuzz-{number}-{seed.name}", data)
            took = time.perf_counter() - began
            slowest.append((took, number, seed.name, "+".join(names), outcome.status))
            slowest = sorted(slowest, reverse=True)[:5]
            verdict = "server error" if outcome.status >= 500 else "accepted" if outcome.accepted else "refused"
            totals[verdict] += 1
            by_kind[seed.kind][verdict] += 1
            for name in set(names):
                by_mutation.setdefault(name, Counter())[verdict] += 1
            if outcome.broken:
                totals["broken"] += 1
                totals["absurd accepted"] += outcome.accepted and outcome.status < 500
                by_kind[seed.kind]["broken"] += 1
                saved = arguments.keep / f"{number}-{seed.name}"
                saved.write_bytes(data)
                failures.append((str(saved), seed.name, names, outcome.broken[:3]))
            if number % 1000 == 0:
                rate = number / (time.perf_counter() - started)
                print(
                    f"  {number:,} inputs, {rate:.0f}/s, {totals['server error']} server errors, "
                    f"{totals['broken']} broken",
                    flush=True,
                )
    elapsed = time.perf_counter() - started
    print(
        f"\nfuzz_imports: {arguments.inputs:,} inputs in {elapsed:.0f} s on {url.split(':')[0]} (seed {arguments.seed})"
    )
    print(
        f"  accepted {totals['accepted']:,}, refused with a 4xx {totals['refused']:,}, "
        f"server errors {totals['server error']:,}"
    )
    print(
        f"  inputs breaking a rule: {totals['broken']:,} (accepted with absurd values: {totals['absurd accepted']:,})"
    )
    print("\n  by import:")
    for kind, counter in by_kind.items():
        print(
            f"    {kind:5} {sum(counter[v] for v in ('accepted', 'refused', 'server error')):>7,} inputs: "
            f"{counter['accepted']:,} accepted, {counter['refused']:,} refused, "
            f"{counter['server error']:,} server errors, {counter['broken']:,} broken"
        )
    print("\n  by mutation (an input may have several):")
    for name, counter in sorted(by_mutation.items()):
        print(
            f"    {name:11} {counter['accepted']:>6,} accepted {counter['refused']:>7,} refused "
            f"{counter['server error']:>4,} server errors"
        )
    print("\n  slowest inputs (all of the input's requests):")
    for took, number, name, names, status in slowest:
        print(f"    {took * 1000:>7,.0f} ms  input {number} from {name} ({names}): HTTP {status}")
    for path, seed, names, broken in failures[:15]:
        print(f"\n  {path} (from {seed}, {'+'.join(names)}):")
        for line in broken:
            print(f"    {line}")


if __name__ == "__main__":
    main()
