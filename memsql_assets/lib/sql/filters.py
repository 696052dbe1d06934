"""The filter literals of a SQL query, read as text: what a reader takes from SQL it was shown,
without knowing which template (if any) wrote it.

A filter is a comparison of an expression with literals (`c.CompanyName = 'Around the Horn'`,
`strftime('%Y', o.OrderDate) IN ('1997', '1998')`). Its `label` is the expression with table
qualifiers dropped, lower-cased, so the same column compared in two queries under two aliases has one
label. A filter on a column also records the table its qualifier names and the other columns the query
reads through that qualifier: `c.CompanyName` of `Customers c` where the query joins `c.CustomerID`
tells a reader which customer id the company name stands for (`entity_subquery`).

A filter's `key` is what it pins, whatever way the SQL wrote it: the entity a name lookup stands for
(the table's own id, when that is the one other column read through the table: `c.CompanyName = 'X'`
of Customers joined or selected by `CustomerID` pins `customerid`, as `o.CustomerID = 'DELAG'` does;
a table whose key is not named after it, as companies by `ticker`, is not recognised), else the one
column it compares
(`strftime('%Y', o.OrderDate) = '1997'` and `o.OrderDate >= '1997-01-01'` both pin `orderdate`), else
its label. A memory that keys turns by it (S, lib/memory/summary.py) chooses the same turns however
an earlier SQL wrote the same entity.

A query that keeps the top rows of a ranking (`ORDER BY ... LIMIT 3`), on its own or in a FROM of a
larger query, is a result a later question can name by description ("the products that came out on
top"): `top_queries` gives each as written, with the columns it returns.

Used by a memory's own extraction (observed mode, lib/memory/facts.py) and by reader-probe
(lib/reference/reader_probe.py). SQL that sqlglot cannot parse has no filters.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

DIALECT = "sqlite"
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.In)
# How a template's `{key}` placeholder is parsed: a string literal no value ever takes.
SLOT_PREFIX = "__memsql_slot__"
_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FROM_QUERY_RE = re.compile(r"\bFROM\s*\((?=\s*SELECT\b)", re.I)


@dataclass(frozen=True)
class Filter:
    """One comparison of an expression with literals (module docstring)."""

    label: str  # the compared expression, qualifiers dropped, lower-cased
    sql: str  # the comparison as the query wrote it
    values: tuple[Any, ...]  # its literals, in the query's order
    column: str | None = None  # the compared column's name (lower-cased), when it is one column
    table: str | None = None  # the table its qualifier names, when the query says
    siblings: frozenset[str] = frozenset()  # other columns the query reads through that qualifier
    key: str = ""  # what it pins, however written (module docstring); "": its label


def _literal(node: exp.Expression) -> tuple[bool, Any]:
    """(is a literal, its value): strings stay text, numbers become int or float."""
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if not isinstance(node, exp.Literal):
        return False, None
    if node.is_string:
        return True, node.this
    text = ("-" if negative else "") + node.this
    return True, int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def _label(node: exp.Expression) -> str:
    bare = node.copy().transform(lambda n: exp.column(n.name) if isinstance(n, exp.Column) else n)
    return bare.sql(DIALECT).lower()


def _aliases(tree: exp.Expression) -> dict[str, str]:
    return {t.alias_or_name.lower(): t.name for t in tree.find_all(exp.Table)}


def _qualifier(col: exp.Column) -> str:
    """The column's qualifier; an unqualified column's is its SELECT's only table (`(SELECT CustomerID
    FROM Customers WHERE CompanyName = 'X')`), else none."""
    if col.table:
        return col.table.lower()
    select = col.find_ancestor(exp.Select)
    if select is None:
        return ""
    own = [t for t in select.find_all(exp.Table) if t.find_ancestor(exp.Select) is select]
    return own[0].alias_or_name.lower() if len(own) == 1 else ""


def _columns_by_qualifier(tree: exp.Expression) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for col in tree.find_all(exp.Column):
        qualifier = _qualifier(col)
        if qualifier:
            out.setdefault(qualifier, set()).add(col.name.lower())
    return out


@functools.lru_cache(maxsize=4096)
def filters(sql: str | None) -> tuple[Filter, ...]:
    """Every comparison of an expression with literals in `sql`, in the query's order."""
    if not sql or not sql.strip():
        return ()
    try:
        tree = sqlglot.parse_one(sql, read=DIALECT)
    except SqlglotError:
        return ()
    if tree is None:
        return ()
    aliases, by_qualifier = _aliases(tree), _columns_by_qualifier(tree)
    found: list[tuple[int, Filter]] = []
    for node in tree.find_all(*_COMPARISONS):
        sides = list(node.expressions) if isinstance(node, exp.In) else [node.expression]
        literals = [_literal(s) for s in sides]
        if not sides or not all(ok for ok, _ in literals):
            continue
        subject = node.this
        column = table = None
        siblings: frozenset[str] = frozenset()
        if isinstance(subject, exp.Column):
            column = subject.name.lower()
            qualifier = _qualifier(subject)
            table = aliases.get(qualifier) if qualifier else None
            siblings = frozenset(by_qualifier.get(qualifier, set()) - {column}) if qualifier else frozenset()
        key = _key(subject, aliases, by_qualifier)
        start = node.meta.get("start") if node.meta else None
        found.append(
            (
                start if isinstance(start, int) else len(found),
                Filter(
                    _label(subject), node.sql(DIALECT), tuple(v for _, v in literals), column, table, siblings, key
                ),
            )
        )
    return tuple(f for _, f in sorted(found, key=lambda pair: pair[0]))


def _key(subject: exp.Expression, aliases: dict[str, str], by_qualifier: dict[str, set[str]]) -> str:
    """What a comparison of `subject` pins (module docstring): "" when it is no single column. A lookup
    is a comparison with a column of a table whose one other column read is that table's own id
    (`customerid` of Customers, `district_id` of district): it pins that id."""
    columns = [subject] if isinstance(subject, exp.Column) else list(subject.find_all(exp.Column))
    if len({c.name.lower() for c in columns}) != 1:
        return ""
    name, qualifier = columns[0].name.lower(), _qualifier(columns[0])
    others = by_qualifier.get(qualifier, set()) - {name} if qualifier else set()
    table = aliases.get(qualifier, "").lower().replace("_", "")
    if len(others) == 1 and not name.endswith("id"):
        (other,) = others
        stem = other.replace("_", "").removesuffix("id")
        if other != stem and stem and table.startswith(stem):
            return other
    return name


def template_filters(sql_template: str) -> tuple[Filter, ...]:
    """The filters of a SQL template whose `{key}` placeholders stand for literals: a placeholder's
    value in `values` is the key's name (`slot_key`)."""
    return filters(_PLACEHOLDER_RE.sub(lambda m: f"'{SLOT_PREFIX}{m.group(1)}'", sql_template))


def slot_key(value: Any) -> str | None:
    """The placeholder a template filter's value stands for, or None for a fixed literal."""
    return value[len(SLOT_PREFIX) :] if isinstance(value, str) and value.startswith(SLOT_PREFIX) else None


def entity_subquery(column: str, statement: Filter) -> str | None:
    """A scalar subquery giving `column` of the one row `statement` picks in its table, when the query
    that stated it read `column` through the same table (`c.CompanyName = 'X'`, `c.CustomerID`
    joined): `(SELECT CustomerID FROM Customers WHERE CompanyName = 'X')`."""
    if statement.table is None or statement.column is None or column not in statement.siblings:
        return None
    if len(statement.values) != 1:
        return None
    where = exp.EQ(this=exp.column(statement.column), expression=_as_literal(statement.values[0]))
    select = exp.select(exp.column(column)).from_(exp.to_table(statement.table)).where(where)
    return f"({select.sql(DIALECT)})"


def _as_literal(value: Any) -> exp.Expression:
    return exp.Literal.string(value) if isinstance(value, str) else exp.Literal.number(value)


def _from_queries(sql: str) -> list[str]:
    """The text of each query in parentheses after a FROM, at any depth, outermost first."""
    out = []
    for match in _FROM_QUERY_RE.finditer(sql):
        depth, quoted = 1, False
        for i in range(match.end(), len(sql)):
            char = sql[i]
            if char == "'":
                quoted = not quoted
            elif not quoted and char in "()":
                depth += 1 if char == "(" else -1
                if depth == 0:
                    out.append(sql[match.end() : i].strip())
                    break
    return out


@functools.lru_cache(maxsize=4096)
def top_queries(sql: str | None) -> tuple[tuple[str, frozenset[str]], ...]:
    """The queries of `sql` (the whole one, then those in a FROM) that keep the top rows of a ranking,
    ORDER BY ... LIMIT n with n >= 2: each as written, with the names of the columns it returns."""
    found = []
    for text in [sql or "", *_from_queries(sql or "")]:
        try:
            tree = sqlglot.parse_one(text, read=DIALECT) if text.strip() else None
        except SqlglotError:
            continue
        limit = tree.args.get("limit") if isinstance(tree, exp.Select) else None
        count = limit.expression if limit is not None else None
        if tree is None or not tree.args.get("order") or not isinstance(count, exp.Literal) or not count.is_int:
            continue
        if int(count.this) >= 2:
            found.append((text, frozenset(name.lower() for name in tree.named_selects)))
    return tuple(found)
