"""Exploration tools with real implementations against one read-only source database.

Every tool returns (observation, error); bad arguments (an unknown table or column, failing SQL)
become errors an agent can react to, never exceptions. An observation fits the box's
`observation_chars`: short summaries (trace.OBSERVATION_CHARS) where it is what a trajectory stores
and a later agent reads, AGENT_OBSERVATION_CHARS where an agent reads it in its turn. The rows of
`execute_sql` and `validate_result` are shown whole, up to SHOWN_ROWS and within that budget, and
the observation says how many more there are; a value longer than VALUE_CHARS is cut and says by
how much.
"""

from __future__ import annotations

import json
import sqlite3
from collections import deque
from collections.abc import Callable
from typing import Any

from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.schema import SchemaStats, TableInfo, introspect, quote_ident
from memsql_assets.lib.trajectories.trace import OBSERVATION_CHARS, Call, clip

TOOL_NAMES = (
    "list_tables",
    "get_ddl",
    "sample_rows",
    "distinct_values",
    "column_stats",
    "find_join_path",
    "execute_sql",
    "validate_result",
)
SQL_TIMEOUT_S = 10.0
SQL_ROW_CAP = 200
SHOWN_ROWS = 20  # rows of a query an observation shows at most
VALUE_CHARS = 60  # characters of one value shown before it is cut
# An agent's observation budget, about 1,000 tokens: 20 rows of a few columns, or the list of a
# wide schema's tables.
AGENT_OBSERVATION_CHARS = 4000


class DbTools:
    """The tool box over one database (connection opened read-only by the caller)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        db: str,
        stats: SchemaStats | None = None,
        memo: bool = False,
        sql_timeout_s: float = SQL_TIMEOUT_S,
        observation_chars: int = OBSERVATION_CHARS,
    ):
        self.conn = conn
        self.db = db
        self.sql_timeout_s = sql_timeout_s  # per tool query (sql/execute.py's watchdog)
        self.observation_chars = observation_chars
        self.stats = stats or introspect(conn, db)
        # a read-only database answers the same call the same way: a build's passes reuse answers
        self._memo: dict[str, Call] | None = {} if memo else None
        self._dispatch: dict[str, Callable[..., tuple[str, str | None]]] = {
            name: getattr(self, name) for name in TOOL_NAMES
        }

    def call(self, tool: str, args: dict[str, Any]) -> Call:
        if self._memo is None:
            return self._call(tool, args)
        key = json.dumps([tool, args], sort_keys=True, default=str)
        if key not in self._memo:
            self._memo[key] = self._call(tool, args)
        return self._memo[key]

    def _call(self, tool: str, args: dict[str, Any]) -> Call:
        fn = self._dispatch.get(tool)
        if fn is None:
            return Call(tool, args, "", f"unknown tool '{tool}'; tools: {', '.join(TOOL_NAMES)}")
        try:
            obs, err = fn(**args)
        except TypeError as exc:
            return Call(tool, args, "", clip(f"bad arguments: {exc}"))
        return Call(tool, args, clip(obs, self.observation_chars), clip(err) if err else None)

    # ------------------------------------------------------------------ helpers
    def _table(self, name: str) -> TableInfo | None:
        try:
            return self.stats.table(name)
        except KeyError:
            return None

    def _no_table(self, name: str) -> tuple[str, str]:
        return "", f"no such table: {name}"

    # ------------------------------------------------------------------ tools
    def list_tables(self) -> tuple[str, str | None]:
        parts = [f"{t.name}({t.rows})" for t in self.stats.tables]
        return f"{len(parts)} tables: " + ", ".join(parts), None

    def get_ddl(self, table: str) -> tuple[str, str | None]:
        t = self._table(table)
        if t is None:
            return self._no_table(table)
        refs = {
            f.column: f"{f.ref_table}.{f.ref_column}" for f in self.stats.foreign_keys if f.table == t.name
        }
        cols = []
        for c in t.columns:
            bits = [c.name, c.declared_type or "ANY"]
            if c.name in t.primary_key:
                bits.append("PK")
            if c.name in refs:
                bits.append(f"→{refs[c.name]}")
            cols.append(" ".join(bits))
        return f"{t.name}({', '.join(cols)})", None

    def sample_rows(self, table: str, n: int = 3) -> tuple[str, str | None]:
        t = self._table(table)
        if t is None:
            return self._no_table(table)
        res = run_query(
            self.conn, f"SELECT * FROM {quote_ident(t.name)} LIMIT {int(n)}", self.sql_timeout_s, int(n)
        )
        if not res.ok:
            return "", res.error
        rows = "; ".join(str(tuple(_short(v) for v in r)) for r in res.rows or [])
        return f"{len(res.rows or [])} rows [{', '.join(res.columns)}]: {rows}", None

    def distinct_values(self, table: str, column: str, limit: int = 10) -> tuple[str, str | None]:
        t = self._table(table)
        if t is None:
            return self._no_table(table)
        c = t.column(column)
        if c is None:
            return "", f"no such column: {table}.{column}"
        qc = quote_ident(c.name)
        res = run_query(
            self.conn,
            f"SELECT {qc}, COUNT(*) FROM {quote_ident(t.name)} GROUP BY {qc} ORDER BY COUNT(*) DESC, {qc} "
            f"LIMIT {int(limit)}",
            self.sql_timeout_s,
            int(limit),
        )
        if not res.ok:
            return "", res.error
        vals = ", ".join(f"{_short(v)!r}×{n}" for v, n in res.rows or [])
        return f"{t.name}.{c.name} top values: {vals}", None

    def column_stats(self, table: str, column: str) -> tuple[str, str | None]:
        t = self._table(table)
        if t is None:
            return self._no_table(table)
        c = t.column(column)
        if c is None:
            return "", f"no such column: {table}.{column}"
        qc = quote_ident(c.name)
        res = run_query(
            self.conn,
            f"SELECT COUNT(*), SUM({qc} IS NULL), COUNT(DISTINCT {qc}), MIN({qc}), MAX({qc}), "
            f"ROUND(AVG(CASE WHEN typeof({qc}) IN ('integer','real') THEN {qc} END), 3) FROM {quote_ident(t.name)}",
            self.sql_timeout_s,
            1,
        )
        if not res.ok or not res.rows:
            return "", res.error or "no result"
        n, nulls, distinct, lo, hi, avg = res.rows[0]
        return (
            f"{t.name}.{c.name}: rows={n} nulls={nulls or 0} distinct={distinct} "
            f"min={_short(lo)!r} max={_short(hi)!r} avg={avg}"
        ), None

    def join_path(self, source: str, target: str) -> list[tuple[str, str, str, str]] | None:
        """Shortest FK path (BFS over edges in both directions): [(table, col, table, col), …]."""
        a, b = self._table(source), self._table(target)
        if a is None or b is None:
            return None
        adj: dict[str, list[tuple[str, str, str, str]]] = {}
        for f in self.stats.foreign_keys:
            adj.setdefault(f.table, []).append((f.table, f.column, f.ref_table, f.ref_column))
            adj.setdefault(f.ref_table, []).append((f.ref_table, f.ref_column, f.table, f.column))
        prev: dict[str, tuple[str, str, str, str] | None] = {a.name: None}
        queue = deque([a.name])
        while queue:
            node = queue.popleft()
            if node == b.name:
                break
            for edge in sorted(adj.get(node, [])):
                if edge[2] not in prev:
                    prev[edge[2]] = edge
                    queue.append(edge[2])
        if b.name not in prev:
            return None
        path: list[tuple[str, str, str, str]] = []
        node = b.name
        step = prev[node]
        while step is not None:
            path.append(step)
            node = step[0]
            step = prev[node]
        return list(reversed(path))

    def find_join_path(self, source: str, target: str) -> tuple[str, str | None]:
        for name in (source, target):
            if self._table(name) is None:
                return self._no_table(name)
        path = self.join_path(source, target)
        if path is None:
            return "", f"no foreign-key path between {source} and {target}"
        if not path:
            return f"{source} and {target} are the same table", None
        return " → ".join(f"{t1}.{c1} = {t2}.{c2}" for t1, c1, t2, c2 in path), None

    def execute_sql(self, sql: str) -> tuple[str, str | None]:
        res = run_query(self.conn, sql, self.sql_timeout_s, SQL_ROW_CAP)
        if not res.ok:
            return "", res.error
        rows = res.rows or []
        head = f"{len(rows)}{'+' if res.truncated else ''} rows [{', '.join(res.columns)}]: "
        return head + self._rows_text(rows, res.truncated, len(head)), None

    def validate_result(self, sql: str) -> tuple[str, str | None]:
        """Re-run the answer and check it is non-empty, not all NULL and of a sane size."""
        res = run_query(self.conn, sql, self.sql_timeout_s, SQL_ROW_CAP)
        if not res.ok:
            return "", res.error
        rows = res.rows or []
        if not rows:
            return "", "result is empty"
        cells = [v for r in rows for v in r]
        nulls = sum(v is None for v in cells)
        if nulls == len(cells):
            return "", "result is all NULL"
        dupes = len(rows) - len(set(rows))
        head = (
            f"valid: {len(rows)}{'+' if res.truncated else ''} rows × {len(res.columns)} cols, "
            f"{nulls} NULL cells, {dupes} duplicate rows: "
        )
        return head + self._rows_text(rows, res.truncated, len(head)), None

    def _rows_text(self, rows: list[tuple[Any, ...]], truncated: bool, used: int) -> str:
        """Whole rows, at most SHOWN_ROWS, that fit the observation budget after `used` characters,
        then how many rows were left out ("more than" where the query's row cap cut the result)."""
        shown: list[str] = []
        for row in rows[:SHOWN_ROWS]:
            text = str(tuple(_short(v) for v in row))
            tail = _more_rows(len(rows) - len(shown) - 1, truncated)
            if used + len("; ".join([*shown, text])) + len(tail) > self.observation_chars:
                break
            shown.append(text)
        return "; ".join(shown) + _more_rows(len(rows) - len(shown), truncated)


def _more_rows(left: int, truncated: bool) -> str:
    if left <= 0 and not truncated:
        return ""
    return f" (and {'more than ' if truncated else ''}{max(left, 0)} more rows not shown)"


def _short(v: object) -> object:
    if isinstance(v, str) and len(v) > VALUE_CHARS:
        return f"{v[:VALUE_CHARS]}…[cut, {len(v) - VALUE_CHARS} more chars]"
    if isinstance(v, bytes):
        return f"<{len(v)} bytes>"
    return v
