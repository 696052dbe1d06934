"""`memsql run` re-evaluates a partition Dagster reports current when it holds only a sample (or fewer
epochs than asked for), and a re-evaluation keeps the epochs a partition has."""

from __future__ import annotations

import json

from memsql_assets import cli
from memsql_assets.lib.harness.results import SUMMARY_FILE, partition_dir


def _write_summary(home, **fields):
    path = partition_dir(home, "gold", "A") / SUMMARY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"ex_strict": 100.0, **fields}), encoding="utf-8")


def test_a_current_sample_is_evaluated_in_full_and_a_complete_one_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    ran = []
    monkeypatch.setattr(cli, "_evaluate", lambda instance, m, c, **kw: ran.append((m, c)) or {"model": m})
    _write_summary(tmp_path, complete=False, sessions=30)
    out = cli._evaluate_if_out_of_date(None, "gold", "A", None)
    assert ran == [("gold", "A")] and out["why"].startswith("a sample of 30 sessions")
    _write_summary(tmp_path, complete=True, sessions=300)
    out = cli._evaluate_if_out_of_date(None, "gold", "A", None)
    assert ran == [("gold", "A")] and out["skipped"] == "up to date"
    _write_summary(tmp_path)  # a summary from before sample runs: complete
    assert cli._evaluate_if_out_of_date(None, "gold", "A", None)["skipped"] == "up to date"


def test_epochs_are_part_of_what_a_partition_was_evaluated_with(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    ran = []
    monkeypatch.setattr(cli, "_evaluate", lambda instance, m, c, epochs=None: ran.append(epochs) or {"model": m})
    _write_summary(tmp_path, complete=True, epochs=2)
    assert cli._evaluate_if_out_of_date(None, "gold", "A", None)["skipped"] == "up to date", "more than asked"
    out = cli._evaluate_if_out_of_date(None, "gold", "A", None, epochs=3)
    assert ran == [3] and out["why"] == "2 of 3 epochs: only the new epochs ask the model"
    cli._evaluate_if_out_of_date(None, "gold", "A", "has a new code version")
    assert ran == [3, 2], "a stale partition is re-evaluated with the epochs it has"
    _write_summary(tmp_path, complete=True)  # a summary from before epochs: one
    cli._evaluate_if_out_of_date(None, "gold", "A", "has a new code version")
    assert ran == [3, 2, 1]
