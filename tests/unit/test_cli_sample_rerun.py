"""`memsql run` re-evaluates a partition Dagster reports current when it holds only a sample, and a
re-evaluation keeps the epochs the partition has."""

from __future__ import annotations

import json

from memsql_assets import cli
from memsql_assets.lib.harness.results import SUMMARY_FILE, partition_dir

CELL = ("gold", "A")


def _write_summary(home, **fields):
    path = partition_dir(home, "gold", "A") / SUMMARY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"ex_strict": 100.0, **fields}), encoding="utf-8")


def test_a_current_sample_is_evaluated_in_full_and_a_complete_one_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    ran = []
    monkeypatch.setattr(cli, "_evaluate_in_run_worker", lambda m, c, **kw: ran.append((m, c)) or {"model": m})
    _write_summary(tmp_path, complete=False, sessions=30)
    out = cli._evaluate_out_of_date(None, [CELL], {CELL: None})[0]
    assert ran == [("gold", "A")] and out["why"].startswith("a sample of 30 sessions")
    _write_summary(tmp_path, complete=True, sessions=300)
    out = cli._evaluate_out_of_date(None, [CELL], {CELL: None})[0]
    assert ran == [("gold", "A")] and out["skipped"] == "up to date"
    _write_summary(tmp_path)  # a summary from before sample runs: complete
    assert cli._evaluate_out_of_date(None, [CELL], {CELL: None})[0]["skipped"] == "up to date"


def test_a_partition_run_in_waves_of_another_size_is_evaluated_again(tmp_path, monkeypatch):
    # rows of C and D are a function of the wave size, which Dagster does not observe
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    ran = []
    monkeypatch.setattr(cli, "_evaluate_in_run_worker", lambda m, c, **kw: ran.append((m, c)) or {"model": m})
    _write_summary(tmp_path, complete=True, wave_size=3)
    out = cli._evaluate_out_of_date(None, [CELL], {CELL: None}, wave_size=5)[0]
    assert out["why"] == "ran in waves of 3, now 5"
    assert cli._evaluate_out_of_date(None, [CELL], {CELL: None}, wave_size=3)[0]["skipped"] == "up to date"
    assert ran == [CELL]


def test_a_partition_is_evaluated_again_with_the_epochs_it_has(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    ran = []
    monkeypatch.setattr(cli, "_evaluate_in_run_worker", lambda m, c, epochs=None, benchmark=None, wave_size=None: ran.append(epochs) or {"model": m})
    _write_summary(tmp_path, complete=True, epochs=2)
    assert cli._evaluate_out_of_date(None, [CELL], {CELL: None})[0]["skipped"] == "up to date"
    cli._evaluate_out_of_date(None, [CELL], {CELL: "has a new code version"})
    assert ran == [2], "a stale partition of two epochs is evaluated again with two"
    _write_summary(tmp_path, complete=True)  # a summary from before epochs: one (the resource's default)
    cli._evaluate_out_of_date(None, [CELL], {CELL: "has a new code version"})
    assert ran == [2, None]
