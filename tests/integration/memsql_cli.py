"""The `memsql` command as a user runs it from a test: a subprocess on its own home."""

from __future__ import annotations

import os
import shutil
import stat
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


def _sockets(folder: str, names: list[str]) -> list[str]:
    """What a running service left in the home (a Unix socket) is not copied."""
    return [n for n in names if stat.S_ISSOCK(os.lstat(os.path.join(folder, n)).st_mode)]


def copy_run_home(run_home_built: Path, target: Path) -> Path:
    """A copy of the built home whose Dagster instance (DAGSTER_HOME under it) is the copy's own."""
    shutil.copytree(run_home_built, target, ignore=_sockets)
    return target
