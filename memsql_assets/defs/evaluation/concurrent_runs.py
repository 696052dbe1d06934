"""Evaluate several `turn_results` partitions as concurrent Dagster runs: one in this process, one in
each worker process (one per further core). Each is an ordinary run of the evaluate job on the same
instance, so the UI shows them side by side; the cells are taken from one queue, largest first."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

Cell = tuple[str, str]  # (model, condition)
MAX_WORKERS = 7  # each worker holds its own embedding model and stores (~0.5 GB)


def worker_count(cells: int) -> int:
    """Worker processes beside this one: one per further core, never more than there is work for."""
    return max(0, min((os.cpu_count() or 1) - 1, cells - 1, MAX_WORKERS))


class Workers:
    """Worker processes for concurrent partition runs, started once, on demand: `memsql run` starts
    them when it has work, so that their imports overlap the main job instead of the evaluations.
    One of them also imports the dbt metrics: the metrics run goes there, and the main
    process, which starts everything, never pays for them."""

    def __init__(self, n: int):
        self.n = n
        self.pool: ProcessPoolExecutor | None = None

    def start(self) -> None:
        if self.pool is None and self.n > 0:
            # spawn, not fork: this process may already hold torch's OpenMP threads and open stores
            self.pool = ProcessPoolExecutor(max_workers=self.n, mp_context=multiprocessing.get_context("spawn"))
            for _ in range(self.n):
                self.pool.submit(_warm)
            self.pool.submit(_warm_metrics)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None


def _warm() -> None:
    """What a worker's first run would otherwise spend its first seconds on."""
    import memsql_assets.defs.without_metrics  # noqa: F401
    import memsql_assets.lib.harness.evaluate  # noqa: F401
    from memsql_assets.lib.memory.embeddings import embedding_function

    embedding_function()


def _warm_metrics() -> None:
    import memsql_assets.definitions  # noqa: F401


def run_cells(
    cells: Iterable[Cell],
    here: Callable[[str, str], dict[str, Any]],
    there: Callable[[str, str], dict[str, Any]],
    pool: ProcessPoolExecutor | None,
    workers: int,
    on_result: Callable[[Cell, dict[str, Any]], None] | None = None,
) -> dict[Cell, dict[str, Any]]:
    """`here(model, condition)` in this thread, `there` (a picklable function) in the workers, until
    the queue is empty. A worker that dies leaves its cell failed and the rest to this process.
    `on_result(cell, result)` is called as each cell ends, from the thread that ran it."""
    queue = deque(cells)
    results: dict[Cell, dict[str, Any]] = {}

    def record(cell: Cell, result: dict[str, Any]) -> None:
        results[cell] = result
        if on_result is not None:
            on_result(cell, result)

    def feed() -> None:
        while True:
            try:
                cell = queue.popleft()
            except IndexError:
                return
            try:
                record(cell, pool.submit(there, *cell).result())  # type: ignore[union-attr]
            except Exception as exc:  # a crashed worker process: say so for this cell, stop feeding
                record(cell, {"model": cell[0], "condition": cell[1], "success": False, "error": f"worker: {exc!r}"})
                return

    feeders = [threading.Thread(target=feed, daemon=True) for _ in range(workers if pool else 0)]
    for t in feeders:
        t.start()
    while True:
        try:
            cell = queue.popleft()
        except IndexError:
            break
        record(cell, here(*cell))
    for t in feeders:
        t.join()
    return results
