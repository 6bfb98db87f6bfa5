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

echo "== pytest"
$UV run pytest "$@"
