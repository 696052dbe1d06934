"""The `memsql` command as a user runs it from a test: a subprocess on its own home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def home_env(home: Path) -> dict[str, str]:
    """The environment of a user whose home (and Dagster instance) is `home`, with the default sources."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSQL_SOURCE_")}
    env["MEMSQL_HOME"] = str(home)
    env["DAGSTER_HOME"] = str(home / "dagster_home")
    return env


def memsql(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "memsql_assets.cli", *args], capture_output=True, text=True, env=env, timeout=600
    )
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc
