"""The `memsql` command as a user runs it from a test: a subprocess on its own home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memsql_assets.defs.resources import BENCHMARK_SESSIONS_ENV

# The size setting of the homes most integration tests share (main_job_home and its copies): the paper
# benchmark built by the same code as the whole one, as the sample of this many sessions that
# `memsql eval --sessions 45` takes from it. The tests that prove the 300 / 1,400 invariants or the
# whole main job build it whole.
SMALL_BENCHMARK_SESSIONS = 45


def home_env(home: Path, benchmark_sessions: int | None = None) -> dict[str, str]:
    """The environment of a user whose home (and Dagster instance) is `home`, with the default sources
    and the whole benchmark, or the benchmark built at `benchmark_sessions` sessions."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSQL_SOURCE_") and k != BENCHMARK_SESSIONS_ENV}
    env["MEMSQL_HOME"] = str(home)
    env["DAGSTER_HOME"] = str(home / "dagster_home")
    if benchmark_sessions is not None:
        env[BENCHMARK_SESSIONS_ENV] = str(benchmark_sessions)
    return env


def small_env(home: Path) -> dict[str, str]:
    """home_env of a home whose benchmark is built at SMALL_BENCHMARK_SESSIONS (main_job_home's copies:
    the same setting, or Dagster would find the benchmark's code version changed and rebuild it)."""
    return home_env(home, SMALL_BENCHMARK_SESSIONS)


def memsql(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "memsql_assets.cli", *args], capture_output=True, text=True, env=env, timeout=600
    )
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc
