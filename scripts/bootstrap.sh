#!/usr/bin/env bash
# Create or update .venv/ at the repository root: torch (CPU build) first, then the project
# with every dependency pinned by constraints.txt. Re-runs are no-ops until the pins change.
# pip's output (setuptools' notices about the editable install, index warnings) goes to
# .venv/install.log; the terminal gets one line, and the log's tail only when an install fails.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.memsql-install-stamp
log=.venv/install.log
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)

pip_install() {
  if ! .venv/bin/pip install -q --disable-pip-version-check "$@" >>"$log" 2>&1; then
    echo "memsql: pip install $* failed; the end of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
}

if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "memsql: installing dependencies into .venv (first time: a few minutes; pip's output: $log)" >&2
  : >"$log"
  pip_install --upgrade "pip>=24"
  # torch first, pinned: otherwise sentence-transformers pulls a multi-GB CUDA build.
  # pip byte-compiles each file it installs on one core; compileall does it afterwards on every
  # core (a file it cannot compile is left to the interpreter, as pip leaves it).
  pip_install --no-compile torch==2.13.0
  pip_install --no-compile -c constraints.txt -e ".[dev]"
  .venv/bin/python -m compileall -q -j 0 "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" >>"$log" 2>&1 || true
  echo "$want" > "$stamp"
fi
