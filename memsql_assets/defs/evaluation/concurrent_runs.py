"""Run several Dagster runs at once, as many as the machine has cores, each an ordinary run on the
instance (the UI shows them side by side).

Each run has a run worker process of its own, as Dagster's run launchers give one: forked from a
fork server that imported memsql and dagster-dbt once (`PRELOAD`), so a run starts warm, and started
when its slot is free; it executes the run and sends back its summary. The threads here only wait
on their workers. Runs as threads of one process would share Python's logging, and Dagster
reconfigures it (`logging.config.dictConfig`) as each run starts: two runs starting and logging at
once deadlock in the logging locks. The fork server starts when `start` is called, so that its
imports overlap the work before the first run (`memsql run` calls it when the main job has work).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from memsql_assets.lib.errors import MemsqlError

Cell = tuple[str, str]  # (model, condition)
Result = TypeVar("Result")
# What a run worker needs imported: the orchestration's run functions, the evaluation and the dbt metrics, and
# what a run imports when it starts (the instance's storage: sqlalchemy, alembic; the memories'
# chromadb; the result files' pyarrow.dataset and upath). None of them starts a thread on import.
PRELOAD = (
    "memsql_assets.orchestration.partition",
    "memsql_assets.orchestration.metrics",
    "memsql_assets.definitions",
    "memsql_assets.lib.harness.evaluate",
    "sqlalchemy",
    "alembic",
    "chromadb",
    "pyarrow.dataset",
    "upath",
)
FORKSERVER = "forkserver"


def slots(cells: int) -> int:
    """Runs at once: one per core, never more than there is work for."""
    return max(1, min(os.cpu_count() or 1, cells))


def start() -> None:
    """Start the fork server with memsql imported (a no-op once it runs)."""
    multiprocessing.get_context(FORKSERVER).set_forkserver_preload(list(PRELOAD))
    forkserver.ensure_running()


class RunWorkerError(MemsqlError):
    """A run worker exited before it answered."""


def _work(send: Connection, env: dict[str, str], run: Callable[..., Any], args: tuple[Any, ...]) -> None:
    # A fork server's children inherit the environment it started with, not the caller's: a run
    # worker takes the caller's (MEMSQL_HOME, DAGSTER_HOME) as a launched run would.
    os.environ.clear()
    os.environ.update(env)
    send.send(run(*args))


def in_run_worker(run: Callable[..., Result], *args: Any) -> Result:
    """`run(*args)` (a module-level function returning a picklable result) in a run worker process."""
    start()
    context = multiprocessing.get_context(FORKSERVER)
    receive, send = context.Pipe(duplex=False)
    worker = context.Process(target=_work, args=(send, dict(os.environ), run, args), daemon=True)
    worker.start()
    send.close()
    try:
        return receive.recv()
    except EOFError:  # the worker died before it answered
        worker.join()
        raise RunWorkerError(f"the run worker exited with code {worker.exitcode}") from None
    finally:
        worker.join()
        receive.close()


def run_concurrently(
    cells: Iterable[Cell],
    run: Callable[[str, str], Result],
    threads: int,
    failed: Callable[[Cell, Exception], Result],
    on_result: Callable[[Cell, Result], None] | None = None,
) -> dict[Cell, Result]:
    """`run(model, condition)` for every cell, `threads` at a time, taken from one queue in order.
    A cell whose run raises gets `failed(cell, error)`; the others go on. `on_result(cell, result)`
    is called as each cell ends, from the thread that ran it."""
    queue = deque(cells)
    results: dict[Cell, Result] = {}

    def feed() -> None:
        while True:
            try:
                cell = queue.popleft()
            except IndexError:
                return
            try:
                result = run(*cell)
            except Exception as exc:  # the run could not even start, or its worker died: this cell fails
                result = failed(cell, exc)
            results[cell] = result
            if on_result is not None:
                on_result(cell, result)

    feeders = [threading.Thread(target=feed, daemon=True) for _ in range(max(1, threads))]
    for t in feeders:
        t.start()
    for t in feeders:
        t.join()
    return results
