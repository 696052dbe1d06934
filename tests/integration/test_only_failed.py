"""`memsql eval --only-failed` asks again only for the turns whose answer was wrong, marks each row
it retried, and every later run replays the retried answers: the `memsql` command as a user runs
it (real subprocesses, real Dagster runs, a private Redis)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from memsql_assets.lib.harness.results import partition_dir
from memsql_assets.lib.viewer.data import TurnIndex, list_turns
from tests.conftest import copy_built_home
from tests.integration.memsql_cli import memsql as _memsql
from tests.integration.memsql_cli import small_env as _env

pytestmark = pytest.mark.integration


def _rows(home: Path) -> dict[tuple[str, int], dict]:
    table = pq.read_table(partition_dir(home, "recall-probe", "B") / "turn_results.parquet")
    return {(r["session_id"], r["turn_index"]): r for r in table.to_pylist()}


@pytest.fixture(scope="module")
def home_env(tmp_path_factory, main_job_home):
    home = copy_built_home(main_job_home, tmp_path_factory.mktemp("only_failed") / "home")
    return home, _env(home)


def test_only_failed_retries_exactly_the_wrong_turns_and_later_runs_replay_them(home_env):
    home, env = home_env
    _memsql(env, "eval", "--model", "recall-probe", "--condition", "B", "--json")
    before = _rows(home)
    failed = {k for k, r in before.items() if not r["ex_strict"]}
    assert failed and len(failed) < len(before) and all(r["retries"] == 0 for r in before.values())

    plan = _memsql(env, "eval", "--model", "recall-probe", "--condition", "B", "--only-failed", "--dry-run")
    assert f"{len(failed):,} model calls of {len(before):,} cells" in plan.stdout + plan.stderr

    out = json.loads(_memsql(env, "eval", "--model", "recall-probe", "--condition", "B", "--only-failed", "--json").stdout)
    assert out["model_calls_this_run"] == len(failed) and out["retried_turns"] == len(failed)
    after = _rows(home)
    assert {k for k, r in after.items() if r["retries"] == 1} == failed
    assert all(after[k]["retries"] == 0 for k in before.keys() - failed)
    # recall-probe is deterministic: asked again, it answers the same
    assert all(after[k]["ex_strict"] == before[k]["ex_strict"] for k in before)

    index = TurnIndex(home)  # the viewer's "retried" filter lists exactly these turns
    assert list_turns(index, {"model": "recall-probe", "condition": "B", "retried": "yes"})[0] == len(failed)

    again = json.loads(_memsql(env, "eval", "--model", "recall-probe", "--condition", "B", "--json").stdout)
    assert again["model_calls_this_run"] == 0 and again["retried_turns"] == len(failed)
    assert {k for k, r in _rows(home).items() if r["retries"] == 1} == failed


def test_only_failed_without_an_evaluation_or_with_a_sample_is_one_line(home_env):
    home, env = home_env
    proc = _memsql(env, "eval", "--model", "gold", "--condition", "A", "--only-failed", check=False)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0
    assert "gold/A has no evaluation yet" in proc.stderr
    proc = _memsql(env, "eval", "--model", "gold", "--condition", "A", "--only-failed", "--sessions", "30", check=False)
    assert proc.returncode == 2 and "takes no --sessions" in proc.stderr
    assert not (partition_dir(home, "gold", "A") / "turn_results.parquet").exists()
