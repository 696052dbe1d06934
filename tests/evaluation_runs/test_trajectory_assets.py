"""The trajectory store materialized through Dagster, then used by condition E_prompt and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dagster as dg

from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.defs.trajectories.assets import synthetic_questions, trajectory_store
from memsql_assets.defs.trajectories.resources import TrajectorySettings
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.trajectories.lookup import trajectory_lookup
from memsql_assets.lib.vocabulary import PROMPT_TRAJECTORY_CONDITION


def test_store_materializes_and_feeds_condition_e(small_home, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(small_home))
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [synthetic_questions, trajectory_store],
            instance=instance,
            resources={"memsql": MemsqlSettings(), "trajectories": TrajectorySettings(budget=24)},
        )
        assert result.success
        (check,) = result.get_asset_check_evaluations()
        assert check.check_name == "final_sql_executes" and check.passed
        mats = {
            m.asset_key.to_user_string(): m.materialization.metadata
            for m in result.get_asset_materialization_events()
        }
        assert sum(mats["synthetic_questions"]["questions_per_db"].value.values()) == 24
        store = mats["trajectory_store"]
        assert mats["composite_tools"]["composites_found"].value == store["composites_found"].value >= 1
        assert set(store["phase_distribution"].value) >= {"explore", "execute"}
        assert store["classifier_accuracy"].value["accuracy"] >= 0.9

    plan = json.loads((small_home / "trajectories" / "questions.json").read_text())
    benchmark = {t["question"].lower() for t in read_turns(benchmark_dir(small_home))}
    generated = [q["text"] for qs in plan["questions"].values() for q in qs]
    assert generated and not {g.lower() for g in generated} & benchmark

    lookup = trajectory_lookup(small_home)
    markdown = lookup("NW", "What were total sales to Alfreds Futterkiste in 2017?")
    assert markdown and "## " in markdown

    out = evaluate_partition(small_home, "gold", PROMPT_TRAJECTORY_CONDITION, trajectory_factory=trajectory_lookup)
    assert out.summary["ex_strict"] == 100.0
    e_rows = evaluate_partition(
        small_home, "recall-probe", PROMPT_TRAJECTORY_CONDITION, trajectory_factory=trajectory_lookup
    ).rows
    b5_rows = evaluate_partition(small_home, "recall-probe", "B_wm5").rows
    assert [r["ex_strict"] for r in e_rows] == [r["ex_strict"] for r in b5_rows], (
        "E_prompt adds a trajectory to B_wm5's prompt; the probe reads only the Resolved block, so EX must match"
    )
    assert e_rows[0]["prompt_hash"] != b5_rows[0]["prompt_hash"]

    env = dict(os.environ, MEMSQL_HOME=str(small_home))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "memsql_assets.cli",
            "trajectory",
            "search",
            "northwind",
            "total sales by customer",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "northwind-" in proc.stdout and "--- trajectory of" in proc.stdout
