"""What a source database holds, read from the live file, never from a hard-coded schema: its user
tables and row counts, the schema text a prompt shows, and the statistics of its tables, columns and
foreign-key edges (the synthetic-question budget, trajectories/budget.py, weighs them).

Foreign-key edges: every declared FOREIGN KEY is an edge. A column without a declared key also
becomes an *inferred* edge when its name equals (case-insensitively) the single-column primary key
of exactly one other table and the column is not itself its own table's whole primary key — e.g.
`annual_financials.ticker → companies.ticker` in the SEC database, which declares no keys. This is
the `*_id` / `…ID` convention generalised to any key name; ambiguous matches are dropped.
"""

from __future__ import annotations

import functools
import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from memsql_assets.lib.sql.sandbox import open_readonly


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    declared_type: str
    affinity: str  # SQLite type affinity: TEXT, INTEGER, REAL, NUMERIC or BLOB


@dataclass(frozen=True)
class TableInfo:
    name: str
    columns: tuple[ColumnInfo, ...]
    primary_key: tuple[str, ...]
    rows: int

    def column(self, name: str) -> ColumnInfo | None:
        for c in self.columns:
            if c.name.lower() == name.lower():
                return c
        return None


@dataclass(frozen=True)
class ForeignKey:
    table: str
    column: str
    ref_table: str
    ref_column: str
    declared: bool


@dataclass(frozen=True)
class SchemaStats:
    db: str
    tables: tuple[TableInfo, ...]
    foreign_keys: tuple[ForeignKey, ...]

    @property
    def n_tables(self) -> int:
        return len(self.tables)

    @property
    def n_columns(self) -> int:
        return sum(len(t.columns) for t in self.tables)

    @property
    def n_fk_edges(self) -> int:
        return len(self.foreign_keys)

    @property
    def n_rows(self) -> int:
        return sum(t.rows for t in self.tables)

    def table(self, name: str) -> TableInfo:
        for t in self.tables:
            if t.name.lower() == name.lower():
                return t
        raise KeyError(f"{self.db}: no table '{name}'")

    def as_json(self) -> dict[str, object]:
        return {
            "db": self.db,
            "tables": self.n_tables,
            "columns": self.n_columns,
            "fk_edges": self.n_fk_edges,
            "fk_edges_inferred": sum(1 for f in self.foreign_keys if not f.declared),
            "rows": self.n_rows,
            "weight": round(complexity_weight(self), 4),
        }


def affinity(declared_type: str) -> str:
    """SQLite's type-affinity rules (https://sqlite.org/datatype3.html §3.1), in their order."""
    t = declared_type.upper()
    if "INT" in t:
        return "INTEGER"
    if any(s in t for s in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in t or not t:
        return "BLOB"
    if any(s in t for s in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def introspect(conn: sqlite3.Connection, db: str) -> SchemaStats:
    tables: list[TableInfo] = []
    declared: list[ForeignKey] = []
    for name in user_tables(conn):
        info = conn.execute(f"PRAGMA table_info({quote_ident(name)})").fetchall()
        cols = tuple(ColumnInfo(r[1], r[2] or "", affinity(r[2] or "")) for r in info)
        pk = tuple(r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
        rows = conn.execute(f"SELECT COUNT(*) FROM {quote_ident(name)}").fetchone()[0]
        tables.append(TableInfo(name, cols, pk, int(rows)))
        for fk in conn.execute(f"PRAGMA foreign_key_list({quote_ident(name)})").fetchall():
            declared.append(ForeignKey(name, fk[3], fk[2], fk[4] or "", True))
    by_lower = {t.name.lower(): t for t in tables}
    resolved: list[ForeignKey] = []
    for fk in declared:
        target = by_lower.get(fk.ref_table.lower())
        if target is None:
            continue  # dangling declaration: not an edge an agent could join over
        ref_col = fk.ref_column or (target.primary_key[0] if len(target.primary_key) == 1 else "")
        if ref_col:
            resolved.append(ForeignKey(fk.table, fk.column, target.name, ref_col, True))
    return SchemaStats(db, tuple(tables), tuple(resolved + _inferred_edges(tables, resolved)))


def _inferred_edges(tables: list[TableInfo], declared: list[ForeignKey]) -> list[ForeignKey]:
    has_fk = {(f.table.lower(), f.column.lower()) for f in declared}
    pk_owners: dict[str, list[TableInfo]] = {}
    for t in tables:
        if len(t.primary_key) == 1:
            pk_owners.setdefault(t.primary_key[0].lower(), []).append(t)
    out: list[ForeignKey] = []
    for t in tables:
        for c in t.columns:
            key = c.name.lower()
            if (t.name.lower(), key) in has_fk or t.primary_key == (c.name,):
                continue
            owners = [o for o in pk_owners.get(key, []) if o.name != t.name]
            if len(owners) != 1:
                continue
            target = owners[0]
            ref = target.column(target.primary_key[0])
            if ref is not None and ref.affinity == c.affinity:
                out.append(ForeignKey(t.name, c.name, target.name, ref.name, False))
    return out


def schema_stats(db: str, path: Path) -> SchemaStats:
    conn = open_readonly(path)
    try:
        return introspect(conn, db)
    finally:
        conn.close()


def complexity_weight(stats: SchemaStats) -> float:
    """w = tables + columns/4 + 2·fk_edges + log10(rows + 1).

    Tables and join edges dominate (each is a thing an agent must discover and connect); columns
    count a quarter each (wide tables cost reading, not decisions); rows enter logarithmically
    (size matters for sampling and value lookup, but 10× the rows is not 10× the exploration).
    """
    return stats.n_tables + stats.n_columns / 4 + 2 * stats.n_fk_edges + math.log10(stats.n_rows + 1)


def user_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
        "AND substr(name, 1, 7) != '_memsql' ORDER BY name"
    ).fetchall()
    return [r[0] for r in rows]


def row_counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in user_tables(conn)}


@functools.lru_cache(maxsize=16)
def schema_text(db_path: Path) -> str:
    """The schema text a prompt shows: the source's CREATE TABLE statements, bookkeeping tables left out."""
    conn = open_readonly(db_path)
    try:
        rows = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' AND substr(name, 1, 7) != '_memsql' ORDER BY name"
        ).fetchall()
    finally:
        conn.close()
    return ";\n".join(" ".join(r[0].split()) for r in rows) + ";"
