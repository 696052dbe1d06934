"""SQL text by pattern, without a parse (so it also reads SQL sqlglot rejects): the tables a query
reads (what the agent loop counts as explored and the reference agent asks the DDL of), a value
written as a literal (the benchmark's templates, the synthetic questions, the probes), and the
placeholders of a template that stand for a whole query."""

from __future__ import annotations

import re
from typing import Any

# A table after FROM or JOIN: "quoted", [bracketed], `backticked` or bare.
_TABLE_RE = re.compile(r"\b(?:FROM|JOIN)\s+(\"[^\"]+\"|\[[^\]]+\]|`[^`]+`|[A-Za-z_][\w$]*)", re.I)
_CTE_RE = re.compile(r"(?:\bWITH(?:\s+RECURSIVE)?|,)\s*([A-Za-z_]\w*)\s+AS\s*\(", re.I)
# A template placeholder that stands for a whole query, not a literal: one alone in parentheses after
# FROM or AS (`IN (SELECT product_id FROM ({top_products}))`, `WITH ranked AS ({top_products})`). Its value,
# the SQL of an earlier turn whose result rows the turn re-uses, is written as it is.
QUERY_SLOT = re.compile(r"\b(?:FROM|AS)\s*\(\s*\{([A-Za-z_]\w*)\}\s*\)", re.I)

def sql_literal(value: Any) -> str:
    """Render a profile/state value as a SQLite literal (strings quoted, quotes doubled)."""
    if isinstance(value, bool) or value is None:
        raise TypeError(f"cannot render {value!r} as a SQL literal")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def query_keys(template: str) -> frozenset[str]:
    """The placeholders of a SQL template that stand for a query (QUERY_SLOT)."""
    return frozenset(QUERY_SLOT.findall(template))


def sql_tables(sql: str) -> list[str]:
    """The tables `sql` reads, in order of first appearance (common table expressions left out)."""
    ctes = {m.group(1).lower() for m in _CTE_RE.finditer(sql)}
    out: list[str] = []
    for m in _TABLE_RE.finditer(sql):
        raw = m.group(1)
        name = raw[1:-1] if raw[0] in '"[`' else raw
        if name.lower() not in ctes and name.lower() not in (t.lower() for t in out):
            out.append(name)
    return out
