"""Results of deterministic SQL on one database content, shared by partitions, processes and runs.

The same ground-truth queries run in the ground_truth_executes and answers_unambiguous checks and
then in every partition of a `memsql run` (each turn's GT plus the next session's fallback), and
a model writes much the same SQL under every condition and epoch (the paraphrase model: the
paraphrases answers_unambiguous already ran). The source databases are read-only files, so a query's
rows are a function of the file's content, the SQL text and the SQLite library: computing them once
is exact, not an approximation. Keys name the database by the sha256 of its content (a rebuilt
source with new content is another database; its old entries are dropped when it is first seen) and
carry the row cap, which decides truncation. Two tiers: a bounded in-process LRU of small results,
and a persistent SQLite file (`sql_cache_path`) that every process reads on a miss in memory and
writes in single-row transactions (atomic; WAL lets readers and a writer of other processes proceed
together). SQL that calls random() or the clock is never cached, and neither is a timeout or a
memory limit, which depend on the machine's load and on the queries running beside it (the heap cap
is process-wide) rather than on the query, nor a result of more than MAX_CACHED_ROWS rows (a model's
SQL may return up to the row cap every turn: re-running it is cheaper than holding it).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import json
import re
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol

from memsql_assets.lib.sql.execute import (
    DEFAULT_ROW_CAP,
    DEFAULT_TIMEOUT_S,
    LOAD_DEPENDENT_ERRORS,
    QueryResult,
    run_query,
)

NONDETERMINISTIC = re.compile(r"random|\bnow\b|current_|julianday\s*\(\s*\)|changes\s*\(", re.IGNORECASE)
DEFAULT_MAX_ENTRIES = 20_000  # the benchmark has ~1,300 distinct GT queries; results are small
MAX_CACHED_ROWS = 1_000


def bare_sql(sql: str) -> str:
    """SQL text without surrounding blanks or trailing semicolons, which change nothing it returns."""
    return sql.strip().rstrip(";").rstrip()


def cacheable(sql: str) -> bool:
    return not NONDETERMINISTIC.search(sql)


def database_identity(path: Path) -> str:
    """sha256 of the file's content and the SQLite library that answers it (hashed once per file state)."""
    st = path.stat()
    return _content_identity(str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _content_identity(path: str, _ino: int, _size: int, _mtime_ns: int) -> str:
    digest = hashlib.sha256(f"sqlite {sqlite3.sqlite_version}\n".encode())
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _encode(result: QueryResult) -> str:
    def value(v: Any) -> Any:
        return {"b64": base64.b64encode(v).decode()} if isinstance(v, bytes) else v

    rows = None if result.rows is None else [[value(v) for v in row] for row in result.rows]
    return json.dumps(
        {"rows": rows, "columns": result.columns, "error": result.error, "truncated": result.truncated}
    )


def _decode(text: str) -> QueryResult:
    def value(v: Any) -> Any:
        return base64.b64decode(v["b64"]) if isinstance(v, dict) else v

    d = json.loads(text)
    rows = None if d["rows"] is None else [tuple(value(v) for v in row) for row in d["rows"]]
    return QueryResult(rows=rows, columns=d["columns"], error=d["error"], truncated=d["truncated"])


def _to_wal(conn: sqlite3.Connection, timeout_s: float = 30.0) -> None:
    """WAL mode (it persists in the file). Two processes creating the file at once: the switch fails
    with 'database is locked' at once, SQLite does not wait there, so it is retried for a while."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class DiskResults:
    """The persistent tier: one SQLite file of (database sha256, row cap, SQL) -> result JSON."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        _to_wal(self._conn)
        self._conn.execute("PRAGMA synchronous=NORMAL")  # a lost tail after an OS crash is re-executed
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS results (database TEXT, name TEXT, row_cap INTEGER, sql TEXT, "
            "result TEXT, PRIMARY KEY (database, row_cap, sql))"
        )
        self._lock = threading.Lock()

    def forget_other_contents(self, name: str, database: str) -> None:
        """Entries of an earlier content of the database file `name` can never be read again."""
        with self._lock:
            self._conn.execute("DELETE FROM results WHERE name = ? AND database != ?", (name, database))

    def get(self, database: str, row_cap: int, sql: str) -> QueryResult | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT result FROM results WHERE database = ? AND row_cap = ? AND sql = ?", (database, row_cap, sql)
            ).fetchone()
        return None if row is None else _decode(row[0])

    def put(self, name: str, database: str, row_cap: int, sql: str, result: QueryResult) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
                (database, name, row_cap, sql, _encode(result)),
            )

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._conn.close()


class ResultCache:
    """A bounded LRU of QueryResults, safe to use from the scorer's worker threads."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES):
        self.max_entries = max_entries
        self._items: OrderedDict[tuple[object, ...], QueryResult] = OrderedDict()
        self._lock = threading.Lock()
        self._disks: dict[Path, DiskResults] = {}
        self._seen: set[tuple[Path, str]] = set()
        self.hits = 0
        self.misses = 0

    def for_database(
        self, path: Path, row_cap: int = DEFAULT_ROW_CAP, store: Path | None = None
    ) -> DatabaseResults:
        """The cache seen from one database; `store` (a `sql_cache_path`) adds the persistent tier."""
        identity = database_identity(path)
        disk = None
        if store is not None:
            with self._lock:
                disk = self._disks.get(store) or self._disks.setdefault(store, DiskResults(store))
                first = (store, identity) not in self._seen
                self._seen.add((store, identity))
            if first:
                disk.forget_other_contents(path.name, identity)
        return DatabaseResults(self, identity, row_cap, disk, path.name)

    def _get(self, key: tuple[object, ...], disk: DiskResults | None = None) -> QueryResult | None:
        with self._lock:
            result = self._items.get(key)
            if result is not None:
                self.hits += 1
                self._items.move_to_end(key)
                return result
        result = disk.get(*key) if disk is not None else None  # type: ignore[arg-type]
        with self._lock:
            if result is None:
                self.misses += 1
                return None
            self.hits += 1
        self._put(key, result)
        return result

    def _put(self, key: tuple[object, ...], result: QueryResult) -> None:
        with self._lock:
            self._items[key] = result
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Forget everything in this process (the persistent files stay)."""
        with self._lock:
            self._items.clear()
            for disk in self._disks.values():
                disk.close()
            self._disks.clear()
            self._seen.clear()
            self.hits = self.misses = 0


class NotCached(Exception):  # noqa: N818 - a signal, not an error: the caller moves the work to a thread
    """`run_cached(..., execute=False)` met SQL whose result is not cached."""


class ResultMemo(Protocol):
    """What run_cached needs of a cache: a plain dict of SQL text -> QueryResult will do."""

    def get(self, sql: str) -> QueryResult | None: ...

    def __setitem__(self, sql: str, result: QueryResult) -> None: ...


class DatabaseResults:
    """The shared cache seen from one database file and row cap, as a ResultMemo keyed by SQL text."""

    def __init__(
        self, cache: ResultCache, identity: str, row_cap: int, disk: DiskResults | None = None, name: str = ""
    ):
        self._cache = cache
        self._prefix = (identity, row_cap)
        self._disk = disk  # the persistent tier, read on a miss in memory
        self._name = name  # the database's file name, recorded beside each persisted entry

    def get(self, sql: str) -> QueryResult | None:
        return self._cache._get((*self._prefix, sql), self._disk)

    def __setitem__(self, sql: str, result: QueryResult) -> None:
        self._cache._put((*self._prefix, sql), result)
        if self._disk is not None:
            self._disk.put(self._name, *self._prefix, sql, result)


def run_cached(
    conn: sqlite3.Connection,
    sql: str,
    memo: ResultMemo | None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
    execute: bool = True,
) -> QueryResult:
    """`run_query`, answered from `memo` when the same SQL (up to surrounding blanks and semicolons)
    already ran on the same file. `execute=False`: never run SQL; raise NotCached instead.

    `memo` must belong to `conn`'s database (and, for a DatabaseResults, to the same row cap).
    """
    if memo is None or not cacheable(sql):
        if not execute:
            raise NotCached(sql)
        return run_query(conn, sql, timeout_s, row_cap)
    key = bare_sql(sql)
    result = memo.get(key)
    if result is None:
        if not execute:
            raise NotCached(sql)
        result = run_query(conn, sql, timeout_s, row_cap)
        small = result.rows is None or len(result.rows) <= MAX_CACHED_ROWS
        if small and not (result.error or "").startswith(LOAD_DEPENDENT_ERRORS):
            memo[key] = result
    return result


# One per process; with a `store`, shared with every other process and later run through the file.
RESULTS = ResultCache()
