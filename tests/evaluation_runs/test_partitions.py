"""Evaluation partitions over a reduced benchmark: window effects, gold, cache, resume, Dagster wiring."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import (
    RESULT_FILE,
    comparable_rows,
    partition_dir,
    progress_dir,
    read_results,
)


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


# A registry: a reference model at a known latency, 16 in flight (W = 16).
SLOW_MODELS = """
models:
  recall-probe-200ms:
    litellm_model: memsql/recall-probe
    kind: builtin
    reasoning: {type: none}
    provider_params: {simulated_latency_ms: 200}
    max_concurrency: 16
    price_per_mtok: {input: 0, output: 0}
    enabled: true
"""
SLOW = "recall-probe-200ms"

RUNNER = """
import sys
from pathlib import Path
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.settings import EvalSettings
evaluate_partition(Path(sys.argv[1]), sys.argv[2], sys.argv[3], settings=EvalSettings(wave_size=int(sys.argv[4])))
"""


def _waves(rows, size):
    """Each session's wave: (its source, the wave's position in that source's chain)."""
    from memsql_assets.lib.harness.schedule import waves

    source = {r["session_id"]: r["source"] for r in rows}
    chains = waves(sorted(source), size, source)
    return {sid: (src, k) for src, chain in chains.items() for k, wave in enumerate(chain) for sid in wave}


def test_sessions_never_see_their_own_wave_and_w1_is_sequential(small_home):
    from memsql_assets.lib.harness.settings import EvalSettings

    w4 = evaluate_partition(small_home, "recall-probe", "C", settings=EvalSettings(wave_size=4))
    w1 = evaluate_partition(small_home, "recall-probe", "C", settings=EvalSettings(wave_size=1))
    assert (w4.summary["wave_size"], w1.summary["wave_size"]) == (4, 1)
    wave = _waves(w4.rows, 4)
    seen = [
        (r["session_id"], other)
        for r in w4.rows
        for other in json.loads(r["retrieved_sessions"]) + json.loads(r["supplying_sessions"])
    ]
    assert any(other != sid for sid, other in seen), "episodic retrieval across sessions must be exercised"
    # Another session only of the same source, from an earlier wave of its chain.
    assert all(other == sid or (wave[other][0] == wave[sid][0] and wave[other][1] < wave[sid][1]) for sid, other in seen)
    # W = 1: every session sees every earlier one, its wave-of-4 mates included.
    order = sorted(wave)
    seen_1 = [
        (r["session_id"], other) for r in w1.rows for other in json.loads(r["retrieved_sessions"])
    ]
    assert all(order.index(other) <= order.index(sid) for sid, other in seen_1)
    assert any(other != sid and wave[other] == wave[sid] for sid, other in seen_1)
    assert comparable_rows(w1.rows) != comparable_rows(w4.rows)  # W is part of the experiment
    assert evaluate_partition(small_home, "gold", "A").summary["wave_size"] is None  # no shared memory


def test_a_wave_size_below_one_is_a_clear_error(small_home, monkeypatch, capsys):
    from memsql_assets import cli
    from memsql_assets.defs.evaluation.resources import EvaluationSettings
    from memsql_assets.lib.errors import MemsqlError
    from memsql_assets.lib.harness.settings import EvalSettings

    for bad in (0, -3):
        with pytest.raises(MemsqlError, match=f"wave size must be an integer >= 1 .*got {bad}"):
            evaluate_partition(small_home, "gold", "C", settings=EvalSettings(wave_size=bad))
        with pytest.raises(MemsqlError, match=f"wave size must be an integer >= 1 .*got {bad}"):
            evaluate_partition(small_home, "gold", "C", settings=EvaluationSettings(wave_size=bad).settings())
    monkeypatch.setenv("MEMSQL_HOME", str(small_home))
    for bad, got in (("many", "'many'"), ("0", "0")):
        assert cli.main(["eval", "--model", "gold", "--condition", "C", "--wave-size", bad]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("memsql eval: --wave-size: wave size must be an integer >= 1")
        assert line.endswith(f"got {got}")
    assert EvaluationSettings().settings().wave_size is None  # the model's max_concurrency
    assert EvaluationSettings(wave_size=4).settings().wave_size == 4


def test_resume_after_kill_9_gives_the_clean_runs_rows(small_home, tmp_path):
    """C at 200 ms, 16 in flight, W = 4 (each source's 10 sessions in waves of 4, 4, 2): killed once
    a wave is checkpointed, the resumed run keeps exactly the whole waves (and only those whose earlier
    waves are whole) and ends with the rows of an uninterrupted W = 4 run."""
    import shutil

    from memsql_assets.lib.harness.settings import EvalSettings
    from memsql_assets.lib.models.registry import load_registry

    models = tmp_path / "models.yaml"
    models.write_text(SLOW_MODELS, encoding="utf-8")
    registry = load_registry(models)
    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "requests", "redis"))
    progress = progress_dir(home, SLOW, "C")  # epoch 1's checkpoints
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(home), SLOW, "C", "4"],
        start_new_session=True,
        env={**os.environ, "MEMSQL_MODELS_FILE": str(models)},
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(progress.glob("*-*.json"))) < 10:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    checkpointed = {p.stem for p in progress.glob("*-*.json")}
    assert 10 <= len(checkpointed) < 30, "the kill must land after a wave and before the last"
    assert not (partition_dir(home, SLOW, "C") / RESULT_FILE).exists(), "no partial file is published"

    w4 = EvalSettings(wave_size=4)
    resumed = evaluate_partition(home, SLOW, "C", registry=registry, settings=w4)
    wave = _waves(resumed.rows, 4)
    whole = [  # the session's wave and every earlier one of its source are wholly checkpointed
        s for s in wave if all(o in checkpointed for o in wave if wave[o][0] == wave[s][0] and wave[o][1] <= wave[s][1])
    ]
    assert resumed.summary["resumed_sessions"] == len(whole) >= 4, "only whole waves count as done"
    assert resumed.summary["wave_size"] == 4
    clean = evaluate_partition(small_home, SLOW, "C", registry=registry, settings=w4)
    diffs = [
        (a["session_id"], a["turn_index"], k, a[k], b[k])
        for a, b in zip(comparable_rows(resumed.rows), comparable_rows(clean.rows), strict=True)
        for k in a
        if a[k] != b[k]
    ]
    assert not diffs, diffs[:5]
    on_disk = read_results(partition_dir(home, SLOW, "C") / RESULT_FILE)
    assert len(on_disk) == len({(r["session_id"], r["turn_index"]) for r in on_disk}) == len(clean.rows)


def test_memsql_eval_sets_the_wave_size_and_retry_errors_in_the_runs_config(small_home, tmp_path, monkeypatch):
    import shutil

    import dagster as dg

    from memsql_assets.orchestration.partition import evaluate_partition_run, wave_size_now

    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report"))
    monkeypatch.setenv("MEMSQL_HOME", str(home))
    with dg.instance_for_test() as instance:
        out = evaluate_partition_run(instance, "gold", "C", retry_errors=True, wave_size=2)
        assert out.success and out.summary.wave_size == 2
        config = instance.get_run_by_id(out.run_id).run_config["resources"]["evaluation"]["config"]
        assert config == {"retry_errors": True, "wave_size": 2}
        default = evaluate_partition_run(instance, "gold", "C")
        assert default.summary.wave_size == wave_size_now("gold", None) != 2
