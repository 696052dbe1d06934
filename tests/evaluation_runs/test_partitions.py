"""Evaluation partitions over a reduced benchmark: window effects, gold, cache, resume, Dagster wiring."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import dagster as dg
import pytest

from memsql_assets.defs.evaluation.resources import EvaluationSettings
from memsql_assets.lib.harness.evaluate import EvalSettings, evaluate_partition, partition_staleness
from memsql_assets.lib.harness.results import RESULT_FILE, comparable_rows, partition_dir, read_results
from memsql_assets.lib.models.registry import load_registry


def _by_depth(rows, critical_only=True):
    depth: dict[int, list[bool]] = {}
    for r in rows:
        if r["memory_critical"] or not critical_only:
            depth.setdefault(r["turn_index"], []).append(r["ex_strict"])
    return {t: 100.0 * sum(v) / len(v) for t, v in sorted(depth.items())}


def test_gold_is_perfect_under_every_memory_condition(small_home):
    for condition in ("A", "B", "C", "D"):
        out = evaluate_partition(small_home, "gold", condition)
        assert out.summary["ex_strict"] == 100.0, (condition, out.summary["error_classes"])
        assert out.summary["gt_errors"] == 0
        assert (partition_dir(small_home, "gold", condition) / RESULT_FILE).exists()


def test_recall_probe_measures_what_each_window_delivers(small_home):
    results = {c: evaluate_partition(small_home, "recall-probe", c).rows for c in ("A", "B", "B_wm5")}
    a, b, b5 = (_by_depth(results[c]) for c in ("A", "B", "B_wm5"))
    assert set(a.values()) == {0.0}, "stateless: no memory-critical turn can be answered"
    assert all(v == 100.0 for t, v in b.items() if t <= 3)
    assert all(v < 100.0 for t, v in b.items() if t >= 4), "window 2 loses turn-1 keys from turn 4 on"
    assert all(v == 100.0 for t, v in b5.items() if t <= 6)
    assert all(v < 100.0 for t, v in b5.items() if t >= 7), "window 5 loses turn-1 keys from turn 7 on"
    first = [r for r in results["A"] if r["turn_index"] == 1]
    assert all(r["ex_strict"] for r in first), "turn 1 states everything it needs"


def test_rerun_makes_zero_model_calls(small_home):
    first = evaluate_partition(small_home, "recall-probe", "B")
    again = evaluate_partition(small_home, "recall-probe", "B")
    assert again.summary["calls"] == 0 and again.summary["cache_hits"] == again.summary["turns"]
    assert comparable_rows(first.rows) == comparable_rows(again.rows)


def test_unknown_condition_and_model_are_clear_errors(small_home):
    from memsql_assets.lib.errors import MemsqlError

    with pytest.raises(MemsqlError, match="unknown condition 'Z'"):
        evaluate_partition(small_home, "gold", "Z")
    with pytest.raises(MemsqlError, match="no-such-model"):
        evaluate_partition(small_home, "no-such-model", "A")


def test_api_model_without_key_is_reported_unavailable(small_home, monkeypatch):
    from memsql_assets.lib.harness.evaluate import ModelUnavailableError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelUnavailableError, match="OPENAI_API_KEY"):
        evaluate_partition(small_home, "gpt-5-mini", "A")


RUNNER = """
import sys
from pathlib import Path
from memsql_assets.defs.evaluation.resources import EvaluationSettings
from memsql_assets.lib.harness.evaluate import EvalSettings, evaluate_partition, partition_staleness
from memsql_assets.lib.models.registry import load_registry
evaluate_partition(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
"""


def test_resume_after_kill_9_gives_the_clean_runs_rows(small_home, tmp_path):
    import shutil

    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "requests", "redis"))
    progress = partition_dir(home, "recall-probe", "C") / "_progress"
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(home), "recall-probe", "C"], start_new_session=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(progress.glob("*-*.json"))) < 4:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list(progress.glob("*-*.json")))
    assert 4 <= done_before < 30, "the kill must land mid-run"
    assert not (partition_dir(home, "recall-probe", "C") / RESULT_FILE).exists(), (
        "no partial file is published"
    )

    resumed = evaluate_partition(home, "recall-probe", "C")
    assert resumed.summary["resumed_sessions"] == done_before
    clean = evaluate_partition(small_home, "recall-probe", "C")
    diffs = [
        (a["session_id"], a["turn_index"], k, a[k], b[k])
        for a, b in zip(comparable_rows(resumed.rows), comparable_rows(clean.rows), strict=True)
        for k in a
        if a[k] != b[k]
    ]
    assert not diffs, diffs[:5]
    on_disk = read_results(partition_dir(home, "recall-probe", "C") / RESULT_FILE)
    assert len(on_disk) == len({(r["session_id"], r["turn_index"]) for r in on_disk}) == len(clean.rows)


def test_sensor_adds_new_models_and_requests_every_condition(tmp_path, monkeypatch):
    from memsql_assets.defs.evaluation.automation import model_registry_sensor
    from memsql_assets.lib.agent.conditions import CONDITIONS

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("model", ["gold"])
        result = model_registry_sensor(dg.build_sensor_context(instance=instance))
        assert isinstance(result, dg.SensorResult)
        added = result.dynamic_partitions_requests[0].partition_keys
        assert "recall-probe" in added and "gold" not in added
        keys = {
            (r.partition_key.keys_by_dimension["model"], r.partition_key.keys_by_dimension["condition"])
            for r in result.run_requests
        }
        assert {("recall-probe", c) for c in CONDITIONS} <= keys
        assert not any(m.startswith("gpt-") for m, _ in keys), "models without API keys are not run"
        instance.add_dynamic_partitions("model", list(added))
        again = model_registry_sensor(dg.build_sensor_context(instance=instance))
        assert isinstance(again, dg.SkipReason)


def test_schedule_requests_missing_and_stale_partitions(small_home, monkeypatch):
    from memsql_assets.defs.evaluation.automation import reevaluate_stale_partitions

    monkeypatch.setenv("MEMSQL_HOME", str(small_home))
    evaluate_partition(small_home, "gold", "A")
    summary_path = partition_dir(small_home, "gold", "A") / "summary.json"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("model", ["gold"])
        context = dg.build_schedule_context(instance=instance, resources={"evaluation": EvaluationSettings()})
        requests = reevaluate_stale_partitions(context)
        wanted = {r.partition_key.keys_by_dimension["condition"] for r in requests}
        assert "A" not in wanted and "E" in wanted  # gold/A is current; gold/E was never run here
        summary = json.loads(summary_path.read_text())
        summary["inputs"]["benchmark"] = "0000000000000000"
        summary_path.write_text(json.dumps(summary))
        requests = reevaluate_stale_partitions(context)
        stale = {r.partition_key.keys_by_dimension["condition"]: r.tags["memsql/trigger"] for r in requests}
        assert stale["A"] == "stale: benchmark changed"


def test_staleness_names_what_changed(small_home):
    gold = load_registry().get("gold")
    evaluate_partition(small_home, "gold", "B")
    assert partition_staleness(small_home, gold, "B") is None
    assert (
        partition_staleness(small_home, gold, "B", EvalSettings(episodic_k=5))
        == "evaluation settings changed"
    )
    assert partition_staleness(small_home, gold, "B_wm5") == "missing"
    changed = gold.model_copy(update={"litellm_model": "memsql/recall-probe"})
    assert partition_staleness(small_home, changed, "B") == "model configuration changed"
