"""`memsql run` evaluates out-of-date partitions as concurrent Dagster runs: this process and a
spawned worker take cells from one queue. The rows are those of one-at-a-time evaluation."""

from __future__ import annotations

import os
import time

import dagster as dg
import pandas as pd

from memsql_assets import cli
from memsql_assets.defs.evaluation.concurrent_runs import run_cells, start_workers
from memsql_assets.defs.instance import ensure_dagster_home
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, comparable_rows, partition_dir
from tests.metrics.conftest import fresh_home

CELLS = [("gold", "A"), ("recall-probe", "B"), ("recall-probe", "C")]


def _wait_for_a_file(directory, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not any(directory.iterdir()):
        assert time.monotonic() < deadline, "the worker never took a cell"
        time.sleep(0.05)


def _record_pid(model: str, condition: str) -> dict:
    (_marks() / f"{model}-{condition}").write_text(str(os.getpid()))
    return {"pid": os.getpid()}


def _die(model: str, condition: str) -> dict:
    (_marks() / f"{model}-{condition}").write_text("dying")
    os._exit(1)


def _marks():
    from pathlib import Path

    return Path(os.environ["MEMSQL_TEST_MARKS"])


def test_cells_are_spread_over_this_process_and_a_worker(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_TEST_MARKS", str(tmp_path))
    pool = start_workers(1)
    try:
        # this process holds its cell until the worker has done one: both must take part
        here = lambda m, c: _wait_for_a_file(tmp_path) or {"pid": os.getpid()}  # noqa: E731
        done = run_cells([("m", "X"), ("m", "Y")], here, _record_pid, pool, 1)
    finally:
        pool.shutdown()
    assert len({r["pid"] for r in done.values()}) == 2


def test_a_worker_that_dies_fails_its_cell_and_this_process_does_the_rest(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_TEST_MARKS", str(tmp_path))
    pool = start_workers(1)
    try:
        here = lambda m, c: _wait_for_a_file(tmp_path) or {"pid": os.getpid()}  # noqa: E731
        done = run_cells([("m", "X"), ("m", "Y"), ("m", "Z")], here, _die, pool, 1)
    finally:
        pool.shutdown()
    failed = [cell for cell, r in done.items() if r.get("success") is False]
    assert len(done) == 3 and len(failed) == 1 and "worker" in done[failed[0]]["error"]


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
        out = cli._evaluate_out_of_date(instance, CELLS, dict.fromkeys(CELLS, "missing"))
        runs = instance.get_runs(filters=dg.RunsFilter(job_name="evaluate"))
    assert [(e["model"], e["condition"], e["success"]) for e in out] == [(*c, True) for c in CELLS]
    assert len(runs) == len(CELLS) and all(r.is_success for r in runs)
    for cell in CELLS:
        rows = [pd.read_parquet(partition_dir(h, *cell) / RESULT_FILE).to_dict("records") for h in (sequential, home)]
        assert comparable_rows(rows[0]) == comparable_rows(rows[1]), cell
