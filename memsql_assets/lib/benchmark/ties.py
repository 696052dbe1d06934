"""Tie detection for `ORDER BY ... LIMIT 1` ground truths.

Convention of the templates: the first ORDER BY key ranks, later keys only break ties. A LIMIT 1
answer is well defined only when the top row's ranking key is strictly better than the runner-up's,
so the probe re-runs the query with that key as an extra column and LIMIT 2 and compares the two.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

TIE_KEY = "memsql_tie_key"
LIMIT_ONE = re.compile(r"\blimit\s+1\b", re.IGNORECASE)  # what can need a probe; parsing is the cost


def tie_probe_sql(sql: str) -> str | None:
    """The top two rows with their ranking key appended, or None for a query without ORDER BY ... LIMIT 1."""
    if not LIMIT_ONE.search(sql):
        return None
    tree = sqlglot.parse_one(sql, read="sqlite")
    limit, order = tree.args.get("limit"), tree.args.get("order")
    if not isinstance(tree, exp.Select) or limit is None or order is None:
        return None
    count = limit.expression
    if not (isinstance(count, exp.Literal) and count.this == "1"):
        return None
    probe = tree.copy()
    probe.select(exp.alias_(order.expressions[0].this.copy(), TIE_KEY), copy=False)
    probe.set("limit", exp.Limit(expression=exp.Literal.number(2)))
    return probe.sql(dialect="sqlite")


def tied(probe_rows: list[tuple]) -> bool:
    """Whether the probe's two rows tie on the ranking key (so the tie-break alone picks the answer)."""
    return len(probe_rows) == 2 and probe_rows[0][-1] == probe_rows[1][-1]
