"""The wall-clock bound of a SQLite statement: one thread interrupts connections past their deadline.

`Connection.interrupt()` (sqlite3_interrupt) is thread-safe, and the engine checks its flag on
every loop jump, so a statement stops within one row's work of its deadline. A progress handler
looks at the clock only every N VM instructions: rows that each spend long in one instr() call put
those looks far apart, and a smaller N makes every query take the GIL far more often.

The thread sleeps until the earliest pending deadline. A finished query stays queued until the
thread wakes anyway, so a query costs one lock and one heap push, not a thread hand-off.
"""

from __future__ import annotations

import heapq
import itertools
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class _Guard:
    """One watched statement; `conn` is None once it finished or was interrupted."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection):
        self.conn: sqlite3.Connection | None = conn


class Watchdog:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._due: list[tuple[float, int, _Guard]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    @contextmanager
    def deadline(self, conn: sqlite3.Connection, seconds: float) -> Iterator[None]:
        """Interrupt `conn` if the block is still running after `seconds` (it then raises
        sqlite3.OperationalError "interrupted" inside the block)."""
        guard = _Guard(conn)
        due = time.monotonic() + seconds
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memsql-sql-watchdog", daemon=True)
                self._thread.start()
            earliest = not self._due or due < self._due[0][0]
            heapq.heappush(self._due, (due, next(self._seq), guard))
            if earliest:
                self._cond.notify()
        try:
            yield
        finally:
            with self._cond:  # after this, the thread can no longer interrupt conn's next statement
                guard.conn = None

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                while self._due and (self._due[0][2].conn is None or self._due[0][0] <= now):
                    guard = heapq.heappop(self._due)[2]
                    if guard.conn is not None:
                        guard.conn.interrupt()
                        guard.conn = None
                self._cond.wait(self._due[0][0] - now if self._due else None)


WATCHDOG = Watchdog()


def _reset_after_fork() -> None:
    global WATCHDOG
    WATCHDOG = Watchdog()  # the parent's thread does not exist in a forked child


os.register_at_fork(after_in_child=_reset_after_fork)


def deadline(conn: sqlite3.Connection, seconds: float):
    """`WATCHDOG.deadline`, looked up at call time (a forked child gets its own watchdog)."""
    return WATCHDOG.deadline(conn, seconds)
