#!/usr/bin/env bash
# The whole test suite: lint, then pytest (SQLite and a real PostgreSQL the fixtures start,
# headless Chromium for the browser tests). Called by `make test` after dependencies are in place.
set -euo pipefail
cd "$(dirname "$0")/.."

UV="${PYTHON:-python3} -m uv"
echo "== ruff"
$UV run ruff check .
$UV run ruff format --check .

echo "== redoprobe unit tests (make check)"
make -s -C backend/redolab/redoprobe check

# Three pytest-xdist workers on CI's 2 cores: the tests wait on probes, sshd, Chromium and servers
# (two workers kept the cores 65 % busy; three 69 %, 14:10 against 15:40 on the same machine; three
# took 14:20 and 14:52 in fresh-clone CI runs; four 13:55 and 14:18, but two browser waits timed out).
# TEST_WORKERS=auto uses one per core, 0 runs in this process.
# --dist loadgroup: test by test to a free worker, with the groups and the tests that must run alone
# named in tests/conftest.py.
echo "== pytest (${TEST_WORKERS:=3} workers)"
$UV run pytest -n "$TEST_WORKERS" --dist loadgroup "$@"
