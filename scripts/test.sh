#!/usr/bin/env bash
# The whole test suite: lint, then pytest (SQLite and a real PostgreSQL the fixtures start,
# headless Chromium for the browser tests). Called by `make test` after dependencies are in place.
set -euo pipefail
cd "$(dirname "$0")/.."

UV="${PYTHON:-python3} -m uv"

# pytest keeps each test module, its asserts rewritten, in __pycache__, but not where
# PYTHONDONTWRITEBYTECODE is set (it is on CI's build machine): there each of the four workers
# rewrote all the test modules again, 26 CPU-s of collection per worker against 5.5 s from the cache.
# The cache is allowed here and filled beside the lint, by two collections of half the tests each
# (11.5 s on 2 cores, 20.5 CPU-s).
unset PYTHONDONTWRITEBYTECODE
mapfile -t parts < <(ls -d tests/*/ tests/test_*.py)
$UV run pytest --collect-only -q -p no:randomly "${parts[@]:0:${#parts[@]}/2}" > /dev/null 2>&1 &
first=$!
$UV run pytest --collect-only -q -p no:randomly "${parts[@]:${#parts[@]}/2}" > /dev/null 2>&1 &
second=$!

echo "== ruff"
$UV run ruff check .
$UV run ruff format --check .

echo "== redoprobe unit tests (make check)"
make -s -C backend/redolab/redoprobe check

# Four pytest-xdist workers on CI's 2 cores: the tests wait on probes, sshd, Chromium and servers
# (two workers kept the cores 65 % busy; three 69 %, 14:10 against 15:40 on the same machine). On
# 2026-11-28 three took 13:31 and four 13:05 back to back (four had timed out two browser waits at
# expect()'s default 5 s; the browser tests wait 15 s now).
# TEST_WORKERS=auto uses one per core, 0 runs in this process.
# --dist loadgroup: test by test to a free worker, with the groups and the lab tests that measure first
# named in tests/conftest.py.
wait "$first" "$second" || true  # a module that fails to collect is reported by the run itself
echo "== pytest (${TEST_WORKERS:=4} workers)"
$UV run pytest -n "$TEST_WORKERS" --dist loadgroup "$@"
