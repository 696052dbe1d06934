"""Building the SQLite files that every source asset produces.

A built database carries a `_memsql_meta` table (key/value) saying how it was made: kind
(embedded / real), whether its values are synthetic, seed, inputs. Tables whose name starts with
`_memsql` are bookkeeping: schema listings and row counts (lib/sql/schema.py) leave them out.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path

from memsql_assets.lib.atomic import atomic_path
from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sql.schema import user_tables

META_TABLE = "_memsql_meta"


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
