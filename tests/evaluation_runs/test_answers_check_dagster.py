"""The blocking `answers_unambiguous` check on `sessions`, run by Dagster on a benchmark whose
paraphrase disagrees with the ground truth: it fails and names the turn, template, variant and results."""

from __future__ import annotations

import json
import shutil

import dagster as dg

from memsql_assets.defs.benchmark.checks import answers_unambiguous
from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.lib.paths import benchmark_dir


def test_disagreeing_paraphrase_fails_the_sessions_check(small_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report"))
    path = benchmark_dir(home) / "turns.jsonl"
    turns = [json.loads(line) for line in path.read_text().splitlines()]
    turn = next(t for t in turns if t["variant_id"] == "bird-t3-portfolio" and t["turn_index"] == 8)
    turn["paraphrase_sql"] = turn["paraphrase_sql"].replace("ORDER BY ln.amount DESC", "ORDER BY ln.amount")
    path.write_text("".join(json.dumps(t, sort_keys=True) + "\n" for t in turns))

    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [dg.AssetSpec("sessions"), answers_unambiguous],
            instance=instance,
            resources={"memsql": MemsqlSettings(home=str(home))},
            selection=dg.AssetSelection.checks(answers_unambiguous),
            raise_on_error=False,
        )
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed
    turn_id = f"{turn['session_id']}#8"
    assert evaluation.metadata["failing_turns"].value == [turn_id]
    (detail,) = evaluation.metadata["failure_details"].value
    assert detail["template"] == "memsql_assets/lib/benchmark/templates/bird_financial.t3.yaml"
    assert detail["variant"] == "bird-t3-portfolio"
    assert detail["gt_sql_result"].startswith("1 row [largest_amount]")
    assert detail["paraphrase_sql_result"].startswith("1 row [biggest]")
    assert turn_id in evaluation.description and "bird_financial.t3.yaml" in evaluation.description
