"""Column roles, from each column's type and data (nothing about a particular schema is hard-coded):

- key: a single-column primary key, either end of a foreign-key edge, or named like a key;
- date: text values shaped `YYYY-MM-DD…` (≥ 90 % of non-null values);
- year: an integer column named like a year whose values are years;
- categorical: not a key, date or year, 2–50 distinct values, not unique per row;
- measure: numeric affinity, numeric values, not a key / categorical;
- label: the first TEXT column that is (nearly) unique per row — what a person names a row by.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field

from memsql_assets.lib.sql.schema import SchemaStats, TableInfo, quote_ident

MAX_CATEGORIES = 50
QUALIFIER_VALUES = 2
_KEY_NAME = re.compile(r"(^id$|_id$|[a-z0-9]ID$|[a-z0-9]Id$)")
_YEAR_NAME = re.compile(r"year", re.I)
_DATE_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*"


@dataclass(frozen=True)
class ColumnProfile:
    table: str
    column: str
    role: str  # key | date | year | categorical | measure | label | other
    distinct: int
    values: tuple[object, ...] = ()  # most frequent values (categorical)


@dataclass
class DbProfile:
    stats: SchemaStats
    columns: dict[str, list[ColumnProfile]] = field(default_factory=dict)

    def of_role(self, table: str, *roles: str) -> list[ColumnProfile]:
        return [c for c in self.columns.get(table, []) if c.role in roles]

    def label(self, table: str) -> str | None:
        labels = self.of_role(table, "label")
        return labels[0].column if labels else None


def _key_columns(stats: SchemaStats) -> set[tuple[str, str]]:
    """Single-column primary keys and both ends of every FK edge (members of a composite primary
    key that join nothing — e.g. a fiscal year or metric name — are data dimensions, not keys)."""
    keys = {(t.name, t.primary_key[0]) for t in stats.tables if len(t.primary_key) == 1}
    for fk in stats.foreign_keys:
        keys.add((fk.table, fk.column))
        keys.add((fk.ref_table, fk.ref_column))
    return keys


def profile_db(conn: sqlite3.Connection, stats: SchemaStats) -> DbProfile:
    prof = DbProfile(stats)
    keys = {(t.lower(), c.lower()) for t, c in _key_columns(stats)}
    for t in stats.tables:
        prof.columns[t.name] = [_profile_column(conn, t, c.name, c.affinity, keys) for c in t.columns]
    return prof


def _profile_column(conn: sqlite3.Connection, t: TableInfo, col: str, aff: str, keys: set) -> ColumnProfile:
    qt, qc = quote_ident(t.name), quote_ident(col)
    if aff == "BLOB" or t.rows == 0:
        return ColumnProfile(t.name, col, "other", 0)
    non_null, distinct, numeric, dated, lo, hi = conn.execute(
        f"SELECT COUNT({qc}), COUNT(DISTINCT {qc}), SUM(typeof({qc}) IN ('integer', 'real')), "
        f"SUM({qc} GLOB '{_DATE_GLOB}'), MIN({qc}), MAX({qc}) FROM {qt}"
    ).fetchone()
    if (t.name.lower(), col.lower()) in keys or _KEY_NAME.search(col):
        return ColumnProfile(t.name, col, "key", distinct)
    if non_null and (dated or 0) >= 0.9 * non_null:
        return ColumnProfile(t.name, col, "date", distinct)
    if (
        aff == "INTEGER"
        and _YEAR_NAME.search(col)
        and isinstance(lo, int)
        and isinstance(hi, int)
        and 1800 <= lo <= hi <= 2200
    ):
        return ColumnProfile(t.name, col, "year", distinct)
    if 2 <= distinct <= MAX_CATEGORIES and distinct < non_null and aff in ("TEXT", "INTEGER"):
        vals = conn.execute(
            f"SELECT {qc} FROM {qt} WHERE {qc} IS NOT NULL AND {qc} != '' "
            f"GROUP BY {qc} ORDER BY COUNT(*) DESC, {qc} LIMIT {QUALIFIER_VALUES + 1}"
        ).fetchall()
        return ColumnProfile(t.name, col, "categorical", distinct, tuple(r[0] for r in vals))
    if aff in ("INTEGER", "REAL", "NUMERIC") and non_null and (numeric or 0) >= 0.9 * non_null:
        return ColumnProfile(t.name, col, "measure", distinct)
    if aff == "TEXT" and non_null and distinct >= 0.9 * t.rows and t.rows >= 2:
        return ColumnProfile(t.name, col, "label", distinct)
    return ColumnProfile(t.name, col, "other", distinct)
