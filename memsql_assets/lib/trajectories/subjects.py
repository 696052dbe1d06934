"""Subjects: what an analyst asks about.

A subject is a measure of a fact table (a numeric column's total or average, a row count, or a
derived amount the source guidance defines), the rows of a named entity reached over a foreign-key
path of 1–3 joins (many-to-one, so no amount is counted twice; a join chain the guidance spells out
may be longer and carry its condition), and a year of a date column. Subjects the guidance names
rank first (`Subject.priority`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from memsql_assets.lib.sql.schema import SchemaStats
from memsql_assets.lib.sql.syntax import sql_literal
from memsql_assets.lib.trajectories.column_roles import QUALIFIER_VALUES, ColumnProfile, DbProfile
from memsql_assets.lib.trajectories.guidance import Guidance
from memsql_assets.lib.trajectories.naming import ident, plural, singular, text_value, words

MAX_JOINS = 3


@dataclass(frozen=True)
class JoinPath:
    """Tables joined many-to-one from the fact table t0 (aliases t0, t1, …)."""

    tables: tuple[str, ...]
    ons: tuple[str, ...]  # the ON clause that joins tables[i + 1]
    guided_edges: int = 0  # joins the source guidance spells out

    def alias(self, table: str) -> str:
        return f"t{self.tables.index(table)}"

    @property
    def from_sql(self) -> str:
        joins = "".join(
            f" JOIN {ident(t)} t{i} ON {on}"
            for i, (t, on) in enumerate(zip(self.tables[1:], self.ons, strict=True), 1)
        )
        return f"FROM {ident(self.tables[0])} t0{joins}"


@dataclass(frozen=True)
class Measure:
    table: str
    words: str  # "total sales", "average freight", "number of orders"
    agg: str  # SUM | AVG | COUNT
    row: str  # the per-row amount over alias t0 ("1" for a count)
    bare_row: str  # the same over bare column names (the naive, join-less draft)
    columns: tuple[str, ...]
    guided: bool = False
    date: tuple[str, str] | None = None  # the date the guidance prescribes for yearly questions

    @property
    def expr(self) -> str:
        return "COUNT(*)" if self.agg == "COUNT" else f"ROUND({self.agg}({self.row}), 2)"

    @property
    def bare(self) -> str:
        return "COUNT(*)" if self.agg == "COUNT" else f"ROUND({self.agg}({self.bare_row}), 2)"

    @property
    def additive(self) -> bool:
        """A share of it makes sense (sums and counts, not averages)."""
        return self.agg != "AVG"


@dataclass(frozen=True)
class Entity:
    table: str
    column: str
    noun: str
    guided: bool


@dataclass(frozen=True)
class Subject:
    path: JoinPath
    measure: Measure
    entity: Entity
    qualifier: tuple[str, object] | None  # (fact column, value) the measure is restricted to
    date: ColumnProfile | None
    dims: tuple[tuple[str, str], ...]  # (table, column) breakdown dimensions on the path

    @property
    def priority(self) -> int:
        guided_date = self.date is not None and self.measure.date == (self.date.table, self.date.column)
        return self.path.guided_edges + self.measure.guided + self.entity.guided + guided_date

    @property
    def measure_words(self) -> str:
        if self.qualifier is None:
            return self.measure.words
        col, val = self.qualifier
        rows = plural(self.measure.table)
        head = self.measure.words if self.measure.words.endswith(rows) else f"{self.measure.words} of {rows}"
        return f"{head} with {words(col)} {text_value(val)}"

    def where(self, *extra: str) -> str:
        conds = list(extra)
        if self.qualifier is not None:
            conds.insert(0, f"t0.{ident(self.qualifier[0])} = {sql_literal(self.qualifier[1])}")
        return f" WHERE {' AND '.join(conds)}" if conds else ""

    def col(self, table: str, column: str) -> str:
        return f"{self.path.alias(table)}.{ident(column)}"

    @property
    def entity_col(self) -> str:
        return self.col(self.entity.table, self.entity.column)

    @property
    def year_expr(self) -> str:
        assert self.date is not None
        c = self.col(self.date.table, self.date.column)
        return c if self.date.role == "year" else f"strftime('%Y', {c})"

    def year_is(self, year: object) -> str:
        return f"{self.year_expr} = {sql_literal(year)}"


def _edge_on(stats: SchemaStats, a: str, a_alias: str, b: str, b_alias: str) -> str | None:
    for f in stats.foreign_keys:
        if (f.table, f.ref_table) == (a, b):
            return f"{b_alias}.{ident(f.ref_column)} = {a_alias}.{ident(f.column)}"
        if (f.table, f.ref_table) == (b, a):
            return f"{b_alias}.{ident(f.column)} = {a_alias}.{ident(f.ref_column)}"
    return None


def _has(stats: SchemaStats, table: str) -> bool:
    return any(t.name.lower() == table.lower() for t in stats.tables)


def _paths(stats: SchemaStats, guide: Guidance) -> list[JoinPath]:
    """Every many-to-one path of 1–MAX_JOINS joins, plus each forward stretch of a guided chain."""
    out: dict[tuple[str, ...], JoinPath] = {}
    guided = {(a.table.lower(), b.table.lower()) for c in guide.chains for a, b in itertools.pairwise(c)}
    guided = {
        (stats.table(a).name, stats.table(b).name) for a, b in guided if _has(stats, a) and _has(stats, b)
    }
    parents: dict[str, list[str]] = {}
    for f in stats.foreign_keys:
        if f.table != f.ref_table and stats.table(f.table).rows and stats.table(f.ref_table).rows:
            parents.setdefault(f.table, []).append(f.ref_table)

    def walk(tables: tuple[str, ...]) -> None:
        if len(tables) > 1:
            ons = tuple(
                _edge_on(stats, tables[i - 1], f"t{i - 1}", tables[i], f"t{i}") or ""
                for i in range(1, len(tables))
            )
            out[tables] = JoinPath(tables, ons, sum(pair in guided for pair in itertools.pairwise(tables)))
        if len(tables) <= MAX_JOINS:
            for p in sorted(set(parents.get(tables[-1], []))):
                if p not in tables:
                    walk((*tables, p))

    for t in stats.tables:
        walk((t.name,))
    for chain in guide.chains:
        try:
            names = [stats.table(h.table).name for h in chain]
        except KeyError:
            continue  # the guidance names a table this database lacks
        for i, j in itertools.combinations(range(len(chain)), 2):
            tables = tuple(names[i : j + 1])
            ons: list[str] = []
            for k in range(1, len(tables)):
                on = _edge_on(stats, tables[k - 1], f"t{k - 1}", tables[k], f"t{k}")
                cond = chain[i + k].condition
                if on is None:
                    break
                ons.append(on + (f" AND t{k}.{ident(cond[0])} = {sql_literal(cond[1])}" if cond else ""))
            else:
                out[tables] = JoinPath(tables, tuple(ons), guided_edges=len(ons))
    return [out[k] for k in sorted(out)]


def _measures(p: DbProfile, guide: Guidance, table: str) -> list[Measure]:
    out: list[Measure] = []
    t = p.stats.table(table)
    for d in guide.measures:
        if d.table.lower() != table.lower():
            continue
        cols = tuple(c.name for c in t.columns if re.search(rf"(?<![\w.]){re.escape(c.name)}(?!\w)", d.expr))
        row = (
            re.sub(rf"(?<![\w.])({'|'.join(map(re.escape, cols))})(?!\w)", lambda m: f"t0.{ident(m[1])}", d.expr)
            if cols
            else d.expr
        )
        out.append(Measure(table, f"total {d.name}", "SUM", row, d.expr, cols, True, d.date))
    for m in p.of_role(table, "measure"):
        c = ident(m.column)
        for word, agg in (("total", "SUM"), ("average", "AVG")):
            out.append(Measure(table, f"{word} {words(m.column)}", agg, f"t0.{c}", c, (m.column,)))
    if out or p.of_role(table, "date", "year"):
        out.append(Measure(table, f"number of {plural(table)}", "COUNT", "1", "1", ()))
    return out


def _entity(p: DbProfile, guide: Guidance, table: str) -> Entity | None:
    for t, (col, noun) in guide.labels.items():
        if t.lower() == table.lower() and p.stats.table(table).column(col) is not None:
            return Entity(table, p.stats.table(table).column(col).name, noun, True)  # type: ignore[union-attr]
    label = p.label(table)
    return Entity(table, label, singular(table), False) if label else None


def find_subjects(p: DbProfile, guide: Guidance) -> list[Subject]:
    out: list[Subject] = []
    for path in _paths(p.stats, guide):
        fact, target = path.tables[0], path.tables[-1]
        entity = _entity(p, guide, target)
        if entity is None:
            continue
        dates = [d for t in path.tables for d in p.of_role(t, "date", "year")]
        cats = p.of_role(fact, "categorical")
        composite_pk = p.stats.table(fact).primary_key
        required = [c for c in cats if len(composite_pk) > 1 and c.column in composite_pk]
        quals: list[tuple[str, object] | None] = (
            [(c.column, v) for c in required[:1] for v in c.values[:QUALIFIER_VALUES]]
            if required
            else [None, *((c.column, v) for c in cats[:2] for v in c.values[:1])]
        )
        dims = tuple(
            (c.table, c.column)
            for t in path.tables
            if t != entity.table  # one entity's own attributes form a single group
            for c in p.of_role(t, "categorical") + p.of_role(t, "label")[:1]
        )
        for m in _measures(p, guide, fact):
            guided_date = [d for d in dates if m.date == (d.table, d.column)]
            preferred = guided_date or dates
            date = preferred[0] if preferred else None
            for q in quals:
                # a breakdown by the column the measure is already restricted to is one group
                keep = tuple(d for d in dims if q is None or d != (fact, q[0]))
                out.append(Subject(path, m, entity, q, date, keep))
    return out
