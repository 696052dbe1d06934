"""The tables a SQL query reads, by pattern: what the agent loop counts as explored and the
reference agent asks the DDL of (no parse, so it reads SQL sqlglot rejects too)."""

from __future__ import annotations

import re

# A table after FROM or JOIN: "quoted", [bracketed], `backticked` or bare.
_TABLE_RE = re.compile(r"\b(?:FROM|JOIN)\s+(\"[^\"]+\"|\[[^\]]+\]|`[^`]+`|[A-Za-z_][\w$]*)", re.I)
_CTE_RE = re.compile(r"(?:\bWITH(?:\s+RECURSIVE)?|,)\s*([A-Za-z_]\w*)\s+AS\s*\(", re.I)

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
