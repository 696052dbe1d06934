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


def start_workers(n: int) -> ProcessPoolExecutor | None:
    """Start `n` workers now, importing the definitions while this process does other work."""
    if n < 1:
        return None
    # spawn, not fork: this process may already hold torch's OpenMP threads and open stores
    pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"))
    for _ in range(n):
        pool.submit(_warm)
    return pool


def _warm() -> None:
    import memsql_assets.definitions  # noqa: F401  (the expensive part of a worker's first run)


def run_cells(
    cells: Iterable[Cell],
    here: Callable[[str, str], dict[str, Any]],
    there: Callable[[str, str], dict[str, Any]],
    pool: ProcessPoolExecutor | None,
    workers: int,
) -> dict[Cell, dict[str, Any]]:
    """`here(model, condition)` in this thread, `there` (a picklable function) in the workers, until
    the queue is empty. A worker that dies leaves its cell failed and the rest to this process."""
    queue = deque(cells)
    results: dict[Cell, dict[str, Any]] = {}

    def feed() -> None:
        while True:
            try:
                cell = queue.popleft()
            except IndexError:
                return
            try:
                results[cell] = pool.submit(there, *cell).result()  # type: ignore[union-attr]
            except Exception as exc:  # a crashed worker process: say so for this cell, stop feeding
                results[cell] = {
                    "model": cell[0],
                    "condition": cell[1],
                    "success": False,
                    "error": f"worker: {exc!r}",
                }
                return

    feeders = [threading.Thread(target=feed, daemon=True) for _ in range(workers if pool else 0)]
    for t in feeders:
        t.start()
    while True:
        try:
            cell = queue.popleft()
        except IndexError:
            break
        results[cell] = here(*cell)
    for t in feeders:
        t.join()
    return results
