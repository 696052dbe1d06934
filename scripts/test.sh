#!/usr/bin/env bash
# README command 2 (and exactly what CI runs): set up .venv/, then the linters and the whole test
# suite spread over two processes (pytest-xdist, a test file's shared home staying in one process).
# Extra arguments go to pytest, e.g. `scripts/test.sh -m quick` or `scripts/test.sh -n 0 tests/unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check memsql_assets tests bench
.venv/bin/python -m pytest -q -rs -n 2 --dist loadfile --durations=25 "$@"
