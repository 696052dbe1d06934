"""`memsql eval`s started together on one home each register their model as a `model` partition.
Dagster looks for the key, then inserts it, so two processes could both look and the second insert
broke the table's unique key: one of four parallel evals failed before it ran (found by
test_shared_services.py). Here processes released together at a barrier add the same models: none
fails, and every model is a partition once."""

from __future__ import annotations

import contextlib
import multiprocessing
import queue

import dagster as dg

from memsql_assets.defs.evaluation.partitions import add_model_partition, model_partitions
from memsql_assets.defs.instance import ensure_dagster_home

PROCESSES = 4
WAIT_S = 60.0  # a process that failed breaks the barrier for the others: they fail too, not hang
MODELS = [f"model-{i}" for i in range(20)]


def _register_all(dagster_home: str, barrier, missing) -> None:
    with dg.DagsterInstance.from_config(dagster_home) as instance:
        for model in MODELS:
            barrier.wait()  # every process looks for the same model at the same moment
            if add_model_partition(instance, model):
                missing.put(model)


def test_processes_adding_one_model_together_all_succeed(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", "")  # ensure_dagster_home sets it: restored after the test
    dagster_home = str(ensure_dagster_home(tmp_path))
    with dg.DagsterInstance.from_config(dagster_home) as instance:  # the storage's tables, once
        assert instance.get_dynamic_partitions(model_partitions.name) == []
    spawn = multiprocessing.get_context("spawn")
    barrier, missing = spawn.Barrier(PROCESSES, timeout=WAIT_S), spawn.Queue()
    procs = [spawn.Process(target=_register_all, args=(dagster_home, barrier, missing)) for _ in range(PROCESSES)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=WAIT_S * 2)
    assert [proc.exitcode for proc in procs] == [0] * PROCESSES
    seen_missing = set()
    with contextlib.suppress(queue.Empty):
        while True:
            seen_missing.add(missing.get(timeout=2))
    assert seen_missing == set(MODELS)  # each model was found missing, by one process or several
    with dg.DagsterInstance.from_config(dagster_home) as instance:
        assert sorted(instance.get_dynamic_partitions(model_partitions.name)) == sorted(MODELS)
