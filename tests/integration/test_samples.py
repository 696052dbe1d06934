"""A sample run never replaces a full evaluation, and a run says what it would ask before it asks:
the `memsql` command as a user runs it (real subprocesses, real Dagster runs, a private Redis)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.results import partition_dir, sample_dir
from memsql_assets.lib.paths import benchmark_dir
from tests.conftest import copy_built_home
from tests.integration.memsql_cli import home_env, small_env
from tests.integration.memsql_cli import memsql as _memsql

pytestmark = pytest.mark.integration


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, main_job_home):
    """A home with the (small) benchmark and full evaluations of recall-probe (epochs 1) and gold under B."""
    home = copy_built_home(main_job_home, tmp_path_factory.mktemp("samples") / "home")
    env = small_env(home)
    for model in ("recall-probe", "gold"):
        _memsql(env, "eval", "--model", model, "--condition", "B", "--json")
    return home, env


def _cells(home: Path, epochs: int = 1) -> str:
    """The evaluation cells of one partition of the home's benchmark, as the plans print them."""
    return f"{epochs * len(read_turns(benchmark_dir(home))):,}"


def test_a_sample_with_two_epochs_leaves_the_full_evaluation_current(evaluated):
    home, env = evaluated
    turns = len(read_turns(benchmark_dir(home)))
    full = partition_dir(home, "recall-probe", "B") / "turn_results.parquet"
    before = (_sha(full), pq.read_metadata(full).num_rows)
    args = ("eval", "--model", "recall-probe", "--condition", "B", "--sessions", "30", "--epochs", "2", "--json")
    out = json.loads(_memsql(env, *args).stdout)
    assert out["success"] and out["sessions"] == 30 and out["epochs"] == 2 and out["complete"] is False
    assert (_sha(full), pq.read_metadata(full).num_rows) == before == (before[0], turns)
    sample = sample_dir(home, "recall-probe", "B", 30) / "turn_results.parquet"
    assert pq.read_metadata(sample).num_rows == out["n_turns"] == 2 * out["turns"]

    with dg.DagsterInstance.from_config(str(home / "dagster_home")) as instance:
        key = dg.AssetKey("turn_results")
        part = str(partition_key("recall-probe", "B"))
        latest = instance.get_latest_materialization_event(key)
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, asset_partitions=[part]), limit=10
        ).records
        assert len(records) == 1 and records[0].asset_materialization.metadata["n_turns"].value == turns
        observations = instance.fetch_observations(
            dg.AssetRecordsFilter(asset_key=key, asset_partitions=[part]), limit=10
        ).records
        meta = observations[0].asset_observation.metadata
        assert meta["sample"].value is True and meta["sessions"].value == 30 and meta["epochs"].value == 2
        run = instance.get_run_by_id(observations[0].run_id)
        assert run.tags["memsql/sample"] == "30" and latest is not None

    plan = _memsql(env, "eval", "--model", "recall-probe", "--condition", "B", "--dry-run").stdout
    assert plan.splitlines()[0].startswith(f"recall-probe/B: 0 model calls of {_cells(home)} cells"), plan
    again = json.loads(_memsql(env, "eval", "--model", "recall-probe", "--condition", "B", "--json").stdout)
    assert again["epochs"] == 1 and again["n_turns"] == turns, "a sample's epochs never become the partition's"
    assert again["model_calls_this_run"] == 0


def test_dry_run_counts_the_calls_not_in_the_request_store_and_changes_nothing(evaluated, tmp_path):
    home, env = evaluated
    stored = sorted(p.name for p in (home / "requests").glob("??/*.json"))
    plan = _memsql(env, "eval", "--model", "gold", "--condition", "B", "--dry-run").stdout
    assert plan.splitlines()[0] == f"gold/B: 0 model calls of {_cells(home)} cells, at most $0.00"
    plan = _memsql(env, "eval", "--model", "gold", "--condition", "C", "--epochs", "2", "--dry-run").stdout
    assert plan.splitlines()[0] == f"gold/C: {_cells(home, 2)} model calls of {_cells(home, 2)} cells, at most $0.00"
    assert sorted(p.name for p in (home / "requests").glob("??/*.json")) == stored
    assert not partition_dir(home, "gold", "C").exists()

    new = tmp_path / "new_home"  # no benchmark yet: the whole one's turns are its cells
    plan = _memsql(home_env(new), "eval", "--model", "gold", "--condition", "B", "--dry-run").stdout
    assert plan.splitlines()[0] == "gold/B: 1,400 model calls of 1,400 cells, at most $0.00"
    assert not new.exists(), "a dry run creates nothing"


@pytest.mark.parametrize("value", ["-1", "abc", "nan"])
def test_max_cost_below_zero_or_not_a_number_is_one_line_and_runs_nothing(evaluated, value):
    home, env = evaluated
    for command in (("run",), ("eval", "--model", "gold", "--condition", "D")):
        proc = _memsql(env, *command, "--max-cost", value, check=False)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.strip() == f"memsql {command[0]}: --max-cost {value}: expected a number of USD >= 0"
    assert not partition_dir(home, "gold", "D").exists()


def test_max_cost_stops_before_a_run_whose_estimate_exceeds_it(evaluated, tmp_path):
    home, env = evaluated
    registry = tmp_path / "models.yaml"
    registry.write_text(
        "models:\n  priced:\n    litellm_model: openai/priced\n    kind: api\n    reasoning: {type: none}\n"
        "    api_base: http://127.0.0.1:9/v1\n    provider_params: {max_tokens: 100}\n"
        "    max_concurrency: 1\n    price_per_mtok: {input: 1.0, output: 1.0}\n    enabled: true\n"
    )
    env = {**env, "MEMSQL_MODELS_FILE": str(registry)}
    # Below the estimate of the small benchmark's every turn at $1 a million tokens (about $0.19).
    proc = _memsql(env, "eval", "--model", "priced", "--condition", "A", "--max-cost", "0.05", check=False)
    assert proc.returncode == 1 and "above --max-cost $0.05: not run" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert f"priced/A: {_cells(home)} model calls of {_cells(home)} cells, about $" in proc.stdout
    assert "prompt tokens, 150 output tokens a call (a typical answer)), at most $" in proc.stdout
    assert not partition_dir(home, "priced", "A").exists()
