"""Building and inspecting the SQLite files that every source asset produces.

A built database carries a `_memsql_meta` table (key/value) saying how it was made: kind
(embedded / real), whether its values are synthetic, seed, inputs. Tables whose name starts with
`_memsql` are bookkeeping: schema listings and row counts leave them out.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path

from memsql_assets.lib.atomic import atomic_path
from memsql_assets.lib.errors import SourceError

META_TABLE = "_memsql_meta"
SQLITE_MAGIC = b"SQLite format 3\x00"


@contextlib.contextmanager
def new_database(target: Path) -> Iterator[sqlite3.Connection]:
    """Create a fresh SQLite file atomically; the caller fills it through the yielded connection.

    Settings are fixed so that the same statements in the same order give a byte-identical file.
    """
    with atomic_path(target) as tmp:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=OFF")
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA page_size=4096")
            conn.execute("BEGIN")
            yield conn
            conn.execute("COMMIT")
            conn.execute("VACUUM")  # compacts pages: output independent of insert history
        finally:
            conn.close()


def write_meta(conn: sqlite3.Connection, meta: Mapping[str, object]) -> None:
    conn.execute(f"CREATE TABLE {META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.executemany(
        f"INSERT INTO {META_TABLE} (key, value) VALUES (?, ?)",
        [(k, json.dumps(v, sort_keys=True)) for k, v in sorted(meta.items())],
    )


def check_sqlite_file(path: Path) -> None:
    """Raise SourceError unless `path` is an existing, intact SQLite database."""
    if not path.exists():
        raise SourceError(path, "database file does not exist", "a SQLite database built by its source asset")
    if not path.is_file():
        raise SourceError(path, "is not a file", "a SQLite database file")
    with open(path, "rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise SourceError(
            path, "is not a SQLite database (bad header)", "a file starting with 'SQLite format 3'"
        )
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("PRAGMA quick_check").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise SourceError(path, f"corrupt SQLite database: {exc}") from exc
    if row is None or row[0] != "ok":
        raise SourceError(path, f"corrupt SQLite database: quick_check says {row[0] if row else 'nothing'}")


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to a checked source database (nothing can modify the file)."""
    check_sqlite_file(path)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    conn.execute("PRAGMA query_only=ON")
    return conn


def user_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
        "AND substr(name, 1, 7) != '_memsql' ORDER BY name"
    ).fetchall()
    return [r[0] for r in rows]


def row_counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in user_tables(conn)}


def read_meta(conn: sqlite3.Connection) -> dict[str, object]:
    try:
        rows = conn.execute(f"SELECT key, value FROM {META_TABLE}").fetchall()
    except sqlite3.OperationalError:
        return {}
    return {k: json.loads(v) for k, v in rows}


def require_tables(conn: sqlite3.Connection, path: Path, required: Mapping[str, list[str]]) -> None:
    """Fail with the file, table and column when a database lacks what the benchmark needs."""
    present = set(user_tables(conn))
    for table, columns in required.items():
        if table not in present:
            raise SourceError(path, f"table '{table}' is missing", f"tables {sorted(required)}")
        cols = {r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')}
        for col in columns:
            if col not in cols:
                raise SourceError(
                    path, f"column '{table}.{col}' is missing", f"columns {columns} in '{table}'"
                )
