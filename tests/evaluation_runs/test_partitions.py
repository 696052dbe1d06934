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


# The done-when registry of issue 14: a reference model at a known latency, 16 in flight (W = 16).
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
from memsql_assets.defs.evaluation.resources import EvaluationSettings
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.models.registry import load_registry
evaluate_partition(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
"""


def _wave_of(rows, size):
    order = sorted({r["session_id"] for r in rows})
    return {sid: i // size for i, sid in enumerate(order)}


def test_sessions_never_see_their_own_wave_and_w1_is_sequential(small_home):
    from memsql_assets.lib.harness.settings import EvalSettings

    w16 = evaluate_partition(small_home, "recall-probe", "C", settings=EvalSettings(wave_size=16))
    w1 = evaluate_partition(small_home, "recall-probe", "C", settings=EvalSettings(wave_size=1))
    assert (w16.summary["wave_size"], w1.summary["wave_size"]) == (16, 1)
    wave = _wave_of(w16.rows, 16)
    seen = [
        (r["session_id"], other)
        for r in w16.rows
        for other in json.loads(r["retrieved_sessions"]) + json.loads(r["supplying_sessions"])
    ]
    assert seen, "episodic retrieval must be exercised"
    assert all(other == sid or wave[other] < wave[sid] for sid, other in seen)
    # W = 1: every session sees every earlier one, its wave-of-16 mates included.
    order = sorted(wave)
    seen_1 = [
        (r["session_id"], other) for r in w1.rows for other in json.loads(r["retrieved_sessions"])
    ]
    assert all(order.index(other) <= order.index(sid) for sid, other in seen_1)
    assert any(other != sid and wave[other] == wave[sid] for sid, other in seen_1)
    assert comparable_rows(w1.rows) != comparable_rows(w16.rows)  # W is part of the experiment
    assert evaluate_partition(small_home, "gold", "A").summary["wave_size"] is None  # no shared memory


def test_a_wave_size_below_one_is_a_clear_error(small_home, monkeypatch):
    from memsql_assets.defs.evaluation.resources import EvaluationSettings
    from memsql_assets.lib.errors import MemsqlError
    from memsql_assets.lib.harness.settings import EvalSettings

    for bad in (0, -3):
        with pytest.raises(MemsqlError, match=f"wave size must be an integer >= 1 .*got {bad}"):
            evaluate_partition(small_home, "gold", "C", settings=EvalSettings(wave_size=bad))
    monkeypatch.setenv("MEMSQL_WAVE_SIZE", "many")
    with pytest.raises(MemsqlError, match=r"\$MEMSQL_WAVE_SIZE: expected an integer >= 1, got 'many'"):
        EvaluationSettings().settings()
    monkeypatch.setenv("MEMSQL_WAVE_SIZE", "1")
    assert EvaluationSettings().settings().wave_size == 1
    assert EvaluationSettings(wave_size=4).settings().wave_size == 4


def test_resume_after_kill_9_gives_the_clean_runs_rows(small_home, tmp_path):
    """C at 200 ms and W = 16 (two waves over the 30 sessions): killed in the second wave, the
    resumed run keeps the first wave and ends with exactly the rows of an uninterrupted W = 16 run."""
    import shutil

    from memsql_assets.lib.models.registry import load_registry

    models = tmp_path / "models.yaml"
    models.write_text(SLOW_MODELS, encoding="utf-8")
    registry = load_registry(models)
    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "requests", "redis"))
    progress = progress_dir(home, SLOW, "C")  # epoch 1's checkpoints
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(home), SLOW, "C"],
        start_new_session=True,
        env={**os.environ, "MEMSQL_MODELS_FILE": str(models)},
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(progress.glob("*-*.json"))) < 16:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list(progress.glob("*-*.json")))
    assert 16 <= done_before < 30, "the kill must land in the second wave"
    assert not (partition_dir(home, SLOW, "C") / RESULT_FILE).exists(), "no partial file is published"

    resumed = evaluate_partition(home, SLOW, "C", registry=registry)
    assert resumed.summary["resumed_sessions"] == 16, "only whole waves count as done"
    assert resumed.summary["wave_size"] == 16
    clean = evaluate_partition(small_home, SLOW, "C", registry=registry)
    diffs = [
        (a["session_id"], a["turn_index"], k, a[k], b[k])
        for a, b in zip(comparable_rows(resumed.rows), comparable_rows(clean.rows), strict=True)
        for k in a
        if a[k] != b[k]
    ]
    assert not diffs, diffs[:5]
    on_disk = read_results(partition_dir(home, SLOW, "C") / RESULT_FILE)
    assert len(on_disk) == len({(r["session_id"], r["turn_index"]) for r in on_disk}) == len(clean.rows)
