"""Run one SQL statement on a read-only source database with a time limit and a row cap.

The time limit is a SQLite progress handler: it interrupts the statement inside the engine, so
a runaway query cannot outlive it the way a watchdog thread could.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_ROW_CAP = 100_000


@dataclass(frozen=True)
class QueryResult:
    rows: list[tuple[Any, ...]] | None
    columns: list[str]
    error: str | None = None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


def run_query(
    conn: sqlite3.Connection,
    sql: str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
) -> QueryResult:
    deadline = time.monotonic() + timeout_s

    def _over_time() -> int:
        return 1 if time.monotonic() > deadline else 0

    conn.set_progress_handler(_over_time, 10_000)
    try:
        cur = conn.execute(sql)
        columns = [d[0] for d in cur.description or ()]
        rows = cur.fetchmany(row_cap + 1)
        truncated = len(rows) > row_cap
        return QueryResult(rows=rows[:row_cap], columns=columns, truncated=truncated)
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            return QueryResult(rows=None, columns=[], error=f"timeout: query exceeded {timeout_s:g} s")
        return QueryResult(rows=None, columns=[], error=f"{type(exc).__name__}: {exc}")
    except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError) as exc:
        return QueryResult(rows=None, columns=[], error=f"{type(exc).__name__}: {exc}")
    finally:
        conn.set_progress_handler(None, 0)
