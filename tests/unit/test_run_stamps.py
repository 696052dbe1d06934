"""The fingerprints `memsql run` compares before skipping the main job or the metrics build."""

from __future__ import annotations

import os

from memsql_assets.lib import run_stamps
from memsql_assets.lib.atomic import write_text_atomic


def _home(tmp_path):
    home = tmp_path / "home"
    write_text_atomic(home / "benchmark" / "turns.jsonl", '{"a": 1}\n')
    write_text_atomic(home / "sources" / "northwind.sqlite", "db")
    write_text_atomic(home / "results" / "model=gold" / "condition=A" / "summary.json", "{}")
    (home / "chroma").mkdir()
    return home


def test_main_job_fingerprint_is_stable_and_sees_rewritten_outputs(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMSQL_EXTRA_SETTING", raising=False)
    home = _home(tmp_path)
    before = run_stamps.main_job_fingerprint(home)
    assert run_stamps.main_job_fingerprint(home) == before
    run_stamps.record(home, "main", before, run_id="r1", checks={"c": True})
    assert run_stamps.current_stamp(home, "main", before)["run_id"] == "r1"

    write_text_atomic(home / "benchmark" / "turns.jsonl", '{"a": 1}\n')  # same bytes, rewritten
    after = run_stamps.main_job_fingerprint(home)
    assert after["outputs"] != before["outputs"] and after["code"] == before["code"]
    assert run_stamps.current_stamp(home, "main", after) is None

    monkeypatch.setenv("MEMSQL_EXTRA_SETTING", "1")
    assert run_stamps.main_job_fingerprint(home)["config"] != after["config"]


def test_main_job_fingerprint_sees_a_deleted_chroma_directory(tmp_path):
    home = _home(tmp_path)
    before = run_stamps.main_job_fingerprint(home)
    os.rmdir(home / "chroma")
    assert run_stamps.main_job_fingerprint(home)["outputs"] != before["outputs"]


def test_metrics_fingerprint_sees_new_results_and_ignores_dbt_build_output(tmp_path):
    home = _home(tmp_path)
    before = run_stamps.metrics_fingerprint(home)
    write_text_atomic(home / "results" / "model=gold" / "condition=B" / "summary.json", "{}")
    after = run_stamps.metrics_fingerprint(home)
    assert after["results"] != before["results"] and after["dbt_project"] == before["dbt_project"]
    write_text_atomic(home / "dbt" / "memsql.duckdb", "warehouse")
    assert run_stamps.metrics_fingerprint(home)["outputs"] != after["outputs"]


def test_a_corrupt_stamp_means_not_current(tmp_path):
    home = _home(tmp_path)
    fingerprint = run_stamps.main_job_fingerprint(home)
    run_stamps.stamp_path(home, "main").parent.mkdir(parents=True)
    run_stamps.stamp_path(home, "main").write_text("{not json")
    assert run_stamps.current_stamp(home, "main", fingerprint) is None
