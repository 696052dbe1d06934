#!/usr/bin/env bash
# README command 1: set up .venv/ and run the main job on the embedded defaults, then print a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/memsql run "$@"
