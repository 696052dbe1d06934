"""Output requirements never contradict the source guidance every prompt prints (lib/sources/guidance.py).

The guidance is the paper's text, verbatim; the lines that constrain an answer's shape are restated
here as checks on a turn's ground truth: which turns a line covers, and the shape its result must
have. answer_check runs them on every turn, so a requirement that asks for what the guidance forbids
fails the benchmark's blocking check, naming the turn and the guidance line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from memsql_assets.lib.sources.guidance import SOURCE_GUIDANCE
from memsql_assets.lib.sql.execute import QueryResult

_SALES = re.compile(r"UnitPrice \* \w+\.Quantity \* \(1 - \w+\.Discount\)", re.I)
_ONE_YEAR = re.compile(r"(?:strftime\('%Y', \w+\.OrderDate\)|substr\(\w+\.OrderDate, 1, 4\)) = '\d{4}'", re.I)
_ONE_CUSTOMER = re.compile(r"(?:CustomerID|CompanyName) = '", re.I)


def _no_breakdown_but_the_year(sql: str) -> bool:
    """No GROUP BY, or one only by the order year: nothing the guidance counts as an asked-for breakdown."""
    tree = sqlglot.parse_one(sql, read="sqlite")
    group = tree.args.get("group")
    if group is None:
        return True
    keys = [
        tree.expressions[int(k.name) - 1] if isinstance(k, exp.Literal) and k.is_int else k for k in group.expressions
    ]
    return all("orderdate" in k.sql().lower() for k in keys)


def _one_customer_one_year_total(sql: str) -> bool:
    return bool(_SALES.search(sql) and _ONE_YEAR.search(sql) and _ONE_CUSTOMER.search(sql)) and (
        _no_breakdown_but_the_year(sql)
    )


@dataclass(frozen=True)
class ShapeRule:
    """A guidance line about an answer's shape: the turns it covers, and the columns their result has."""

    source: str  # source prefix
    line: str  # the guidance line, as every prompt prints it
    covers: Callable[[str], bool]  # on the ground-truth SQL
    columns: int


RULES: tuple[ShapeRule, ...] = (
    ShapeRule(
        "NW",
        next(g for g in SOURCE_GUIDANCE["NW"] if g.startswith("If the question asks for total sales")),
        _one_customer_one_year_total,
        1,
    ),
)


def guidance_problems(turn: Mapping[str, Any], gold: QueryResult) -> list[str]:
    """Each guidance line the turn's ground truth (its result `gold`) contradicts, as a sentence."""
    problems = []
    for rule in RULES:
        if rule.source == turn["source"] and rule.covers(turn["gt_sql"]) and gold.ok:
            width = len(gold.columns)
            if width != rule.columns:
                problems.append(
                    f"the guidance says {rule.line!r}, but the ground truth returns {width} columns "
                    f"(the output requirement: {turn.get('output_requirements')!r})"
                )
    return problems
