"""A home after `memsql run --skip-eval` (sources, benchmark, checks, trajectories, all through
Dagster), built once per test run (`build_once`, tests/conftest.py). Modules that need such a home
to start from get their own copy; those that test the run itself run it on a home of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.memsql_cli import home_env, memsql


@pytest.fixture(scope="session")
def run_home_built(build_once) -> Path:
    """Read it, never write into it: copy it with `copy_run_home` (memsql_cli.py)."""
    return build_once("run_home", lambda home: memsql(home_env(home), "run", "--skip-eval"))
