#!/usr/bin/env bash
# README command 2: set up .venv/ and run the linters and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check memsql_assets tests bench
.venv/bin/python -m pytest "$@"
