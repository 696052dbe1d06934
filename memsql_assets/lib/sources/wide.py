"""The `wide` variant of a source (sources.yaml `variant: wide`): the same database, plus the tables
a real warehouse keeps beside it, so that finding the right table and column takes exploration.

The base tables are left as they are (every ground truth reads the same rows); beside each base
table T (its user tables, sqlite_* and the meta table left out) come:

- `T_archive`, `T_snapshot_2023`, `bak_T`: copies of a sample of T's rows, with their own columns
  (when archived and why, the snapshot's date);
- `stg_T`: a staging copy, every column as TEXT under a near-synonym name (amount -> amt), plus the
  loader's columns;
- `rpt_T_denorm`: T joined with the tables its foreign keys name, their columns prefixed with the
  table's name (a denormalized reporting table);
- `T_audit_log`: an empty change log;
- `ref_T_<column>`: a code lookup table of each low-cardinality text column.

Everything is a function of the built database alone (rows are taken in storage order), so the
variant is as deterministic as the database it widens.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from memsql_assets.lib.sources.sqlite_db import META_TABLE
from memsql_assets.lib.sql.schema import SchemaStats, TableInfo, introspect, quote_ident, user_tables

VARIANTS = ("standard", "wide")
COPY_ROWS = 2000  # rows of a base table each copy keeps at most
LOOKUP_MAX_VALUES = 30  # a text column with at most this many distinct values gets a lookup table
# Near-synonyms of column words, as staging copies and legacy loaders name them.
SYNONYMS = {
    "id": "key", "name": "nm", "date": "dt", "amount": "amt", "number": "no", "quantity": "qty",
    "price": "px", "description": "descr", "address": "addr", "customer": "cust", "employee": "emp",
    "product": "prod", "company": "co", "country": "ctry", "city": "town", "region": "area",
    "phone": "tel", "value": "val", "year": "yr", "status": "state", "type": "kind", "code": "cd",
    "account": "acct", "district": "dist", "order": "ord", "category": "cat", "supplier": "vendor",
    "title": "role", "fiscal": "fy", "metric": "measure", "ticker": "symbol", "unit": "uom",
    "postal": "zip", "birth": "born", "balance": "bal", "payment": "pmt", "frequency": "freq",
}  # fmt: skip
_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def snake(name: str) -> str:
    """A table or column name as lower snake case ("Order Details" -> order_details, A11 -> a11)."""
    return "_".join(w.lower() for w in _WORD_RE.findall(name)) or "col"


def synonym(column: str) -> str:
    """A near-synonym of `column` (CustomerID -> cust_key); a name with no known word gets `_val`."""
    words = [w.lower() for w in _WORD_RE.findall(column)]
    swapped = [SYNONYMS.get(w, w) for w in words]
    return "_".join(swapped) if swapped != words else f"{snake(column)}_val"


def _unique(names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        base, n = name, 2
        while name in out:
            name, n = f"{base}_{n}", n + 1
        out.append(name)
    return out


def _create(conn: sqlite3.Connection, table: str, columns: list[tuple[str, str]], select: str | None) -> None:
    cols = ", ".join(f"{quote_ident(c)} {t}".strip() for c, t in columns)
    conn.execute(f"CREATE TABLE {quote_ident(table)} ({cols})")
    if select is not None:
        conn.execute(f"INSERT INTO {quote_ident(table)} {select}")


def _copies(conn: sqlite3.Connection, t: TableInfo) -> None:
    base, src = snake(t.name), quote_ident(t.name)
    own = [(c.name, c.declared_type) for c in t.columns]
    cols = ", ".join(quote_ident(c.name) for c in t.columns)
    sample = f"FROM {src} LIMIT {COPY_ROWS}"
    _create(
        conn,
        f"{base}_archive",
        [*own, ("archived_at", "TEXT"), ("archive_reason", "TEXT")],
        f"SELECT {cols}, '2022-12-31', 'year-end close' {sample}",
    )
    _create(conn, f"{base}_snapshot_2023", [*own, ("snapshot_date", "TEXT")], f"SELECT {cols}, '2023-06-30' {sample}")
    _create(conn, f"bak_{base}", own, f"SELECT {cols} {sample}")
    staged = _unique([synonym(c.name) for c in t.columns])
    loader = [("_batch_id", "INTEGER"), ("_loaded_at", "TEXT"), ("_source_file", "TEXT")]
    texts = ", ".join(f"CAST({quote_ident(c.name)} AS TEXT)" for c in t.columns)
    _create(
        conn,
        f"stg_{base}",
        [*((s, "TEXT") for s in staged), *loader],
        f"SELECT {texts}, 1, '2023-07-01T02:00:00', '{base}.csv' {sample}",
    )
    audit = ["audit_id", "record_key", "column_name", "old_value", "new_value", "changed_at", "changed_by"]
    _create(conn, f"{base}_audit_log", [(c, "INTEGER" if c == "audit_id" else "TEXT") for c in audit], None)


def _denorm(conn: sqlite3.Connection, t: TableInfo, stats: SchemaStats) -> None:
    """T's sample joined with the tables its foreign keys name (declared or inferred), each once."""
    names = [c.name for c in t.columns]
    select = [f"t.{quote_ident(c)}" for c in names]
    joins: list[str] = []
    seen: set[str] = set()
    for i, fk in enumerate(f for f in stats.foreign_keys if f.table == t.name and f.ref_table != t.name):
        if fk.ref_table in seen:
            continue
        seen.add(fk.ref_table)
        target = stats.table(fk.ref_table)
        alias = f"j{i}"
        joins.append(
            f"LEFT JOIN {quote_ident(target.name)} {alias} "
            f"ON {alias}.{quote_ident(fk.ref_column)} = t.{quote_ident(fk.column)}"
        )
        select += [f"{alias}.{quote_ident(c.name)}" for c in target.columns]
        names += [f"{snake(target.name)}_{snake(c.name)}" for c in target.columns]
    cols = _unique([snake(n) for n in names])
    sample = f"(SELECT * FROM {quote_ident(t.name)} LIMIT {COPY_ROWS}) t"
    query = f"SELECT {', '.join(select)} FROM {sample} {' '.join(joins)}"
    _create(conn, f"rpt_{snake(t.name)}_denorm", [(c, "") for c in cols], query)


def _lookups(conn: sqlite3.Connection, t: TableInfo) -> None:
    for c in t.columns:
        if c.affinity != "TEXT" or c.name in t.primary_key:
            continue
        col, src = quote_ident(c.name), quote_ident(t.name)
        n, filled = conn.execute(f"SELECT COUNT(DISTINCT {col}), COUNT({col}) FROM {src}").fetchone()
        if not 2 <= n <= min(LOOKUP_MAX_VALUES, filled - 1):  # codes repeat; a unique key is no code
            continue
        _create(
            conn,
            f"ref_{snake(t.name)}_{snake(c.name)}",
            [("code", "INTEGER PRIMARY KEY"), ("value", "TEXT"), ("label", "TEXT"), ("is_active", "INTEGER"), ("sort_order", "INTEGER")],
            f"SELECT ROW_NUMBER() OVER (ORDER BY v), v, upper(v), 1, ROW_NUMBER() OVER (ORDER BY v) * 10 "
            f"FROM (SELECT DISTINCT {col} AS v FROM {src} WHERE {col} IS NOT NULL)",
        )


def widen(path: Path) -> None:
    """Add the wide variant's tables to the built database at `path`, and record the variant in its meta."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("BEGIN")
        stats = introspect(conn, path.stem)
        base = [stats.table(name) for name in user_tables(conn)]
        for t in base:
            _copies(conn, t)
            _denorm(conn, t, stats)
            _lookups(conn, t)
        conn.execute(f"INSERT OR REPLACE INTO {META_TABLE} (key, value) VALUES ('variant', '\"wide\"')")
        conn.execute("COMMIT")
        conn.execute("VACUUM")
    finally:
        conn.close()
