#!/usr/bin/env bash
# Create or update .venv/ at the repository root: torch (CPU build) first, then the project
# with every dependency pinned by constraints.txt. Re-runs are no-ops until the pins change.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.memsql-install-stamp
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "memsql: installing dependencies into .venv (first time: a few minutes)" >&2
  .venv/bin/pip install -q --disable-pip-version-check --upgrade "pip>=24" 2> >(grep -v "is ignored: it is neither" >&2)
  # torch first, pinned: otherwise sentence-transformers pulls a multi-GB CUDA build.
  .venv/bin/pip install -q --disable-pip-version-check torch==2.13.0 2> >(grep -v "is ignored: it is neither" >&2)
  .venv/bin/pip install -q --disable-pip-version-check -c constraints.txt -e ".[dev]" 2> >(grep -v "is ignored: it is neither" >&2)
  echo "$want" > "$stamp"
fi
