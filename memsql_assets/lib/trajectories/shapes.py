"""Question shapes over a subject: a total for one entity and year, a breakdown, the top entity
(ties listed), a two-year comparison (change, or which year was higher) and a share, each with its
SQL. Join questions carry `naive_sql`, the same aggregate with the join left out."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.syntax import sql_literal
from memsql_assets.lib.trajectories.naming import column_alias, ident, text_value, words
from memsql_assets.lib.trajectories.subjects import Subject

ENTITIES_PER_SUBJECT = 3
YEARS_PER_SUBJECT = 3
VERIFY_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Candidate:
    template: str
    text: str
    sql: str
    tables: tuple[str, ...]
    columns: tuple[tuple[str, str], ...]
    values: tuple[tuple[str, str, str], ...] = ()
    naive_sql: str | None = None


class SubjectValues:
    """Real entity names and years per subject, read once (most rows first: what analysts ask about)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self._cache: dict[str, list[object]] = {}

    def top(self, s: Subject, expr: str, n: int) -> list[object]:
        sql = (
            f"SELECT {expr} AS v, COUNT(*) AS n {s.path.from_sql}{s.where(f'{expr} IS NOT NULL')} "
            f"GROUP BY v ORDER BY n DESC, v LIMIT {n}"
        )
        if sql not in self._cache:
            res = run_query(self.conn, sql, timeout_s=VERIFY_TIMEOUT_S, row_cap=n)
            self._cache[sql] = [r[0] for r in res.rows or []] if res.ok else []
        return self._cache[sql]


def _base(s: Subject) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    cols = [(s.entity.table, s.entity.column), *((s.measure.table, c) for c in s.measure.columns)]
    if s.date is not None:
        cols.append((s.date.table, s.date.column))
    return s.path.tables, tuple(cols)


def _filters(s: Subject, entity: object | None) -> tuple[tuple[str, str, str], ...]:
    vals = []
    if entity is not None:
        vals.append((s.entity.table, s.entity.column, str(entity)))
    if s.qualifier is not None:
        vals.append((s.measure.table, s.qualifier[0], str(s.qualifier[1])))
    return tuple(vals)


def _in_year(year: object | None) -> str:
    return f" in {year}" if year is not None else ""


def shape_total(s: Subject, v: SubjectValues) -> Iterator[Candidate]:
    tables, cols = _base(s)
    years = v.top(s, s.year_expr, YEARS_PER_SUBJECT) if s.date else [None]
    for e, y in itertools.product(v.top(s, s.entity_col, ENTITIES_PER_SUBJECT), years):
        conds = [f"{s.entity_col} = {sql_literal(e)}", *([s.year_is(y)] if y is not None else [])]
        naive_where = f"{ident(s.entity.column)} = {sql_literal(e)}"
        yield Candidate(
            "total",
            f"What was the {s.measure_words} for {s.entity.noun} {text_value(e)}{_in_year(y)}?",
            f"SELECT {s.measure.expr} AS value {s.path.from_sql}{s.where(*conds)}",
            tables,
            cols,
            _filters(s, e),
            naive_sql=f"SELECT {s.measure.bare} AS value FROM {ident(s.path.tables[0])} WHERE {naive_where}",
        )


def shape_breakdown(s: Subject, v: SubjectValues) -> Iterator[Candidate]:
    tables, cols = _base(s)
    years = v.top(s, s.year_expr, YEARS_PER_SUBJECT) if s.date else [None]
    for e in v.top(s, s.entity_col, ENTITIES_PER_SUBJECT):
        cond = f"{s.entity_col} = {sql_literal(e)}"
        if s.date is not None:
            yield Candidate(
                "breakdown_by_year",
                f"Break down the {s.measure_words} for {s.entity.noun} {text_value(e)} by year.",
                f"SELECT {s.year_expr} AS year, {s.measure.expr} AS value {s.path.from_sql}{s.where(cond)} "
                "GROUP BY year ORDER BY year",
                tables,
                cols,
                _filters(s, e),
            )
        for (dt, dc), y in itertools.product(s.dims, years):
            d = s.col(dt, dc)
            conds = [cond, *([s.year_is(y)] if y is not None else [])]
            yield Candidate(
                "breakdown",
                f"Break down the {s.measure_words} for {s.entity.noun} {text_value(e)}{_in_year(y)} by {words(dc)}.",
                f"SELECT {d} AS {column_alias(dc)}, {s.measure.expr} AS value {s.path.from_sql}{s.where(*conds)} "
                f"GROUP BY {d} ORDER BY {d}",
                tables,
                (*cols, (dt, dc)),
                _filters(s, e),
            )


def _top1_sql(s: Subject, group: str, name: str, conds: Sequence[str]) -> str:
    # ties are part of the answer: every group whose value equals the maximum
    return (
        f"WITH g AS (SELECT {group} AS {name}, {s.measure.expr} AS value {s.path.from_sql}{s.where(*conds)} "
        f"GROUP BY {group}) SELECT {name}, value FROM g WHERE value = (SELECT MAX(value) FROM g) ORDER BY {name}"
    )


def shape_top1(s: Subject, v: SubjectValues) -> Iterator[Candidate]:
    tables, cols = _base(s)
    years = v.top(s, s.year_expr, YEARS_PER_SUBJECT) if s.date else [None]
    for y in years:
        conds = [s.year_is(y)] if y is not None else []
        yield Candidate(
            "top1",
            f"Which {s.entity.noun} had the highest {s.measure_words}{_in_year(y)}? List every one tied for first.",
            _top1_sql(s, s.entity_col, column_alias(s.entity.column), conds),
            tables,
            cols,
            _filters(s, None),
        )
    for e, (dt, dc), y in itertools.product(v.top(s, s.entity_col, ENTITIES_PER_SUBJECT), s.dims, years):
        conds = [f"{s.entity_col} = {sql_literal(e)}", *([s.year_is(y)] if y is not None else [])]
        yield Candidate(
            "top1_within",
            f"For {s.entity.noun} {text_value(e)}{_in_year(y)}, which {words(dc)} had the highest "
            f"{s.measure_words}? Include ties.",
            _top1_sql(s, s.col(dt, dc), column_alias(dc), conds),
            tables,
            (*cols, (dt, dc)),
            _filters(s, e),
        )


def shape_compare(s: Subject, v: SubjectValues) -> Iterator[Candidate]:
    if s.date is None:
        return
    tables, cols = _base(s)
    years = v.top(s, s.year_expr, YEARS_PER_SUBJECT)
    for e, (y1, y2) in itertools.product(
        v.top(s, s.entity_col, ENTITIES_PER_SUBJECT),
        itertools.combinations(sorted(years), 2),  # type: ignore[type-var]
    ):
        cond = f"{s.entity_col} = {sql_literal(e)}"
        per_year = (
            f"SELECT {s.year_expr} AS year, {s.measure.expr} AS value {s.path.from_sql}"
            f"{s.where(cond, f'{s.year_expr} IN ({sql_literal(y1)}, {sql_literal(y2)})')} GROUP BY year"
        )
        yield Candidate(
            "change",
            f"How did the {s.measure_words} for {s.entity.noun} {text_value(e)} change from {y1} to {y2}?",
            f"SELECT ROUND(SUM(CASE WHEN year = {sql_literal(y2)} THEN value END) - "
            f"SUM(CASE WHEN year = {sql_literal(y1)} THEN value END), 2) AS change FROM ({per_year})",
            tables,
            cols,
            _filters(s, e),
        )
        yield Candidate(
            "higher_year",
            f"Comparing {y1} and {y2}, in which year was the {s.measure_words} for {s.entity.noun} "
            f"{text_value(e)} higher?",
            f"SELECT year, value FROM ({per_year}) ORDER BY value DESC, year LIMIT 1",
            tables,
            cols,
            _filters(s, e),
        )


def shape_share(s: Subject, v: SubjectValues) -> Iterator[Candidate]:
    if not s.measure.additive:
        return
    tables, cols = _base(s)
    years = v.top(s, s.year_expr, YEARS_PER_SUBJECT) if s.date else [None]
    row = s.measure.row
    for e, y in itertools.product(v.top(s, s.entity_col, ENTITIES_PER_SUBJECT), years):
        conds = [s.year_is(y)] if y is not None else []
        mine = f"SUM(CASE WHEN {s.entity_col} = {sql_literal(e)} THEN {row} ELSE 0 END)"
        yield Candidate(
            "share",
            f"What share of the {s.measure_words}{_in_year(y)} came from {s.entity.noun} {text_value(e)}, in percent?",
            f"SELECT ROUND(100.0 * {mine} / SUM({row}), 2) AS share_pct {s.path.from_sql}{s.where(*conds)}",
            tables,
            cols,
            _filters(s, e),
        )


SHAPES = (shape_total, shape_breakdown, shape_top1, shape_compare, shape_share)
