"""`memsql run` evaluates out-of-date partitions as concurrent Dagster runs, one per core, each in a run
worker forked from a preloaded server. The rows are those of one-at-a-time evaluation."""

from __future__ import annotations

import os
import threading

import dagster as dg
import pandas as pd

from memsql_assets.defs.evaluation import concurrent_runs
from memsql_assets.defs.evaluation.concurrent_runs import run_concurrently
from memsql_assets.defs.instance import ensure_dagster_home
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, comparable_rows, partition_dir
from memsql_assets.orchestration.evaluations import evaluate_out_of_date
from tests.metrics.conftest import fresh_home

CELLS = [("gold", "A"), ("recall-probe", "B"), ("recall-probe", "C")]


def _failed(cell: tuple[str, str], exc: Exception) -> dict:
    return {"model": cell[0], "condition": cell[1], "success": False, "error": repr(exc)}


def test_cells_run_at_the_same_time_and_each_once():
    started = threading.Barrier(2, timeout=60)  # each run waits for the other: both must be in flight

    def run(model: str, condition: str) -> dict:
        started.wait()
        return {"model": model, "condition": condition, "thread": threading.get_ident()}

    done = run_concurrently([("m", "X"), ("m", "Y")], run, threads=2, failed=_failed)
    assert set(done) == {("m", "X"), ("m", "Y")}
    assert len({r["thread"] for r in done.values()}) == 2


def test_a_run_that_raises_fails_its_cell_and_the_others_go_on():
    def run(model: str, condition: str) -> dict:
        if condition == "Y":
            raise RuntimeError("no instance")
        return {"model": model, "condition": condition, "success": True}

    ended = []
    done = run_concurrently(
        [("m", "X"), ("m", "Y"), ("m", "Z")], run, threads=2, failed=_failed, on_result=lambda c, r: ended.append(c)
    )
    assert sorted(ended) == [("m", "X"), ("m", "Y"), ("m", "Z")]
    assert done[("m", "Y")]["success"] is False and "no instance" in done[("m", "Y")]["error"]
    assert done[("m", "X")]["success"] and done[("m", "Z")]["success"]


def test_concurrent_runs_give_the_rows_of_one_at_a_time(tmp_path, monkeypatch, small_home):
    sequential = fresh_home(small_home, tmp_path / "sequential")
    for cell in CELLS:
        evaluate_partition(sequential, *cell)
    home = fresh_home(small_home, tmp_path / "concurrent")
    monkeypatch.setenv("MEMSQL_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster_home"))  # restored after the test
    ensure_dagster_home(home)
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("model", sorted({m for m, _ in CELLS}))
        out = evaluate_out_of_date(instance, CELLS, dict.fromkeys(CELLS, "missing"))
        runs = instance.get_runs(filters=dg.RunsFilter(job_name="evaluate"))
        # Each run ran in a run worker of its own, not in this process.
        workers = {
            e.dagster_event.pid
            for r in runs
            for e in instance.all_logs(r.run_id)
            if e.dagster_event_type == dg.DagsterEventType.STEP_START
        }
    assert [(e.model, e.condition, e.success) for e in out] == [(*c, True) for c in CELLS]
    assert len(runs) == len(CELLS) and all(r.is_success for r in runs)
    assert sorted(
        r.tags["dagster/partition/model"] + "/" + r.tags["dagster/partition/condition"] for r in runs
    ) == [f"{m}/{c}" for m, c in sorted(CELLS)]
    assert len(workers) == len(CELLS) and os.getpid() not in workers
    for cell in CELLS:
        rows = [
            pd.read_parquet(partition_dir(h, *cell) / RESULT_FILE).to_dict("records")
            for h in (sequential, home)
        ]
        assert comparable_rows(rows[0]) == comparable_rows(rows[1]), cell


def _home_summary() -> dict:
    return {"home": os.environ.get("MEMSQL_HOME")}


def test_a_run_worker_sees_the_callers_environment_not_the_fork_servers(monkeypatch, tmp_path):
    concurrent_runs.start()  # the fork server runs with the environment of now
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    assert concurrent_runs.in_run_worker(_home_summary) == {"home": str(tmp_path)}
