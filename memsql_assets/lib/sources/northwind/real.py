"""Northwind (jpwhite3's SQLite edition): the real-data adapter.

`build_real` accepts the real `northwind.db` (copied table by table, views, indexes, triggers and
sqlite_sequence included) or a folder with upstream's `create.sql` + `update.sql` dump, executed in
the order of upstream's makefile. A folder that holds `northwind.db` is read as that database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources.northwind.schema import (
    NORTHWIND_BUILDER_VERSION,
    NORTHWIND_REQUIRED,
    NORTHWIND_SOURCE,
    read_sql,
)
from memsql_assets.lib.sources.sqlite_db import new_database, require_tables, write_meta
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.schema import quote_ident


def build_real(target: Path, input_path: Path) -> None:
    """Build from the real `northwind.db`, or from a folder with upstream's create.sql + update.sql."""
    input_path = Path(input_path)
    expected = "northwind.db, or a folder with jpwhite3's create.sql and update.sql"
    if not input_path.exists():
        raise SourceError(input_path, "does not exist", expected)
    if input_path.is_dir():
        db = input_path / "northwind.db"
        if db.is_file():
            _build_from_db(target, db)
            return
        for name in ("create.sql", "update.sql"):
            if not (input_path / name).is_file():
                raise SourceError(input_path / name, f"'{name}' is missing from the folder", expected)
        _build_from_dump(target, input_path / "create.sql", input_path / "update.sql")
    else:
        _build_from_db(target, input_path)


def _build_from_dump(target: Path, create_sql: Path, update_sql: Path) -> None:
    scripts = [(create_sql, read_sql(create_sql)), (update_sql, read_sql(update_sql))]
    with new_database(target) as conn:
        for path, text in scripts:
            # executescript commits first and runs statement by statement, as the sqlite3 shell of
            # upstream's makefile does; a transaction is reopened for new_database's final COMMIT.
            try:
                conn.executescript(text)
            except sqlite3.Error as exc:
                raise SourceError(path, f"SQL script failed: {exc}", "jpwhite3's Northwind SQL dump") from exc
            if not conn.in_transaction:
                conn.execute("BEGIN")
        require_tables(conn, create_sql, NORTHWIND_REQUIRED)
        write_meta(
            conn,
            {
                "kind": "real",
                "synthetic": False,
                "source": NORTHWIND_SOURCE,
                "builder_version": NORTHWIND_BUILDER_VERSION,
                "inputs": [create_sql.name, update_sql.name],
                "input_format": "sql_dump",
                "input_sha256": {p.name: sha256_file(p) for p, _ in scripts},
            },
        )


def _build_from_db(target: Path, db: Path) -> None:
    src = open_readonly(db)
    try:
        require_tables(src, db, NORTHWIND_REQUIRED)
        objects = src.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' AND substr(name, 1, 7) != '_memsql' ORDER BY rowid"
        ).fetchall()
        has_sequence = src.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").fetchone()
        with new_database(target) as conn:
            tables = [(name, sql) for kind, name, sql in objects if kind == "table"]
            for _, sql in tables:
                conn.execute(sql)
            for name, _ in tables:
                cols = [r[1] for r in src.execute(f"PRAGMA table_info({quote_ident(name)})")]
                col_list = ", ".join(quote_ident(c) for c in cols)
                cursor = src.execute(f"SELECT {col_list} FROM {quote_ident(name)}")
                conn.executemany(
                    f"INSERT INTO {quote_ident(name)} ({col_list}) VALUES ({', '.join('?' * len(cols))})", cursor
                )
            if has_sequence:
                # AUTOINCREMENT counters as in the source, not as re-derived by our inserts
                conn.execute("DELETE FROM sqlite_sequence")
                conn.executemany(
                    "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
                    src.execute("SELECT name, seq FROM sqlite_sequence ORDER BY rowid"),
                )
            # indexes, triggers, views after the data: triggers must not fire on the copy
            for kind, _, sql in objects:
                if kind != "table":
                    conn.execute(sql)
            require_tables(conn, db, NORTHWIND_REQUIRED)
            write_meta(
                conn,
                {
                    "kind": "real",
                    "synthetic": False,
                    "source": NORTHWIND_SOURCE,
                    "builder_version": NORTHWIND_BUILDER_VERSION,
                    "inputs": [db.name],
                    "input_format": "sqlite",
                    "input_sha256": {db.name: sha256_file(db)},
                },
            )
    except sqlite3.Error as exc:
        raise SourceError(
            db, f"cannot copy the database: {exc}", "a readable Northwind SQLite database"
        ) from exc
    finally:
        src.close()
