#!/usr/bin/env bash
# README command 2 (and exactly what CI runs): set up .venv/, then the linters (ruff, vulture) and the whole test
# suite spread over two processes (pytest-xdist, a test file's shared home staying in one process).
# Files go out in collection order, not xdist's default of most tests first: the long integration
# files (few tests each) then start early, and the short unit tests fill the end of both workers.
# Extra arguments go to pytest, e.g. `scripts/test.sh -m quick` or `scripts/test.sh -n 0 tests/unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check memsql_assets tests bench
# Dead code: what vulture cannot see being used (entry points, columns, hooks) is listed, each with why.
.venv/bin/vulture memsql_assets tests bench scripts/vulture_allowlist.py
.venv/bin/python -m pytest -q -rs -n 2 --dist loadfile --no-loadscope-reorder --durations=25 "$@"
