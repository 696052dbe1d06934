"""`paraphrase` scores 100.0 % strict EX under every condition, and is blocking like gold: a turn it
gets wrong fails `harness_integrity`."""

from __future__ import annotations

import json
import shutil

import dagster as dg
import pytest

from memsql_assets.definitions import defs
from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.defs.jobs import EVALUATE_JOB
from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.defs.trajectories.assets import synthetic_questions, trajectory_store
from memsql_assets.defs.trajectories.resources import TrajectorySettings
from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.memory.plugins import applies
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.trajectories.lookup import trajectory_lookup
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK


@pytest.fixture(scope="module")
def paraphrase_home(small_home, tmp_path_factory):
    """A copy of the small benchmark with its own trajectory store (conditions E and E_prompt read it)."""
    home = tmp_path_factory.mktemp("paraphrase_home") / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report"))
    with dg.instance_for_test() as instance:
        built = dg.materialize(
            [synthetic_questions, trajectory_store],
            instance=instance,
            resources={
                "memsql": MemsqlSettings(home=str(home)),
                "trajectories": TrajectorySettings(budget=12),
            },
        )
        assert built.success
    return home


@pytest.mark.parametrize("condition", [c for c, spec in CONDITIONS.items() if applies(spec, PAPER_BENCHMARK)])
def test_paraphrase_scores_100_under_every_condition(paraphrase_home, condition):
    outcome = evaluate_partition(
        paraphrase_home, "paraphrase", condition, trajectory_factory=trajectory_lookup
    )
    s = outcome.summary
    assert s["turns"] == len(outcome.rows) > 100
    assert s["ex_strict"] == 100.0, [
        f"{r['session_id']}#{r['turn_index']}" for r in outcome.rows if not r["ex_strict"]
    ][:10]
    assert s["gt_errors"] == 0


def test_a_wrong_paraphrase_fails_harness_integrity(paraphrase_home, tmp_path, monkeypatch):
    home = tmp_path / "home"
    shutil.copytree(paraphrase_home, home, ignore=shutil.ignore_patterns("results", "redis"))
    turns_path = benchmark_dir(home) / "turns.jsonl"
    turns = [json.loads(line) for line in turns_path.read_text().splitlines()]
    broken = next(t for t in turns if t["source"] == "NW" and "COUNT(" in t["paraphrase_sql"])
    broken["paraphrase_sql"] = "SELECT -1 AS order_count"
    turns_path.write_text("".join(json.dumps(t, sort_keys=True) + "\n" for t in turns))
    monkeypatch.setenv("MEMSQL_HOME", str(home))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("model", ["paraphrase"])
        result = defs.resolve_job_def(EVALUATE_JOB).execute_in_process(
            instance=instance, partition_key=partition_key("paraphrase", "A"), raise_on_error=False
        )
        (check,) = result.get_asset_check_evaluations()
        assert check.check_name == "harness_integrity" and not check.passed
        assert check.metadata["failing_turns"].value == [f"{broken['session_id']}#{broken['turn_index']}"]
