"""Deterministic synthetic questions that read like an analyst's, from schema and data (AgentSM Alg. 1).

Nothing about a particular schema is hard-coded, and nothing here reads the benchmark. Columns get
roles from their type and data:

- key: a single-column primary key, either end of a foreign-key edge, or named like a key;
- date: text values shaped `YYYY-MM-DD…` (≥ 90 % of non-null values);
- year: an integer column named like a year whose values are years;
- categorical: not a key, date or year, 2–50 distinct values, not unique per row;
- measure: numeric affinity, numeric values, not a key / categorical;
- label: the first TEXT column that is (nearly) unique per row — what a person names a row by.

A *subject* is what an analyst asks about: a measure of a fact table (a numeric column's total or
average, a row count, or a derived amount the source guidance defines), the rows of a named entity
reached over a foreign-key path of 1–3 joins (many-to-one, so no amount is counted twice; a join
chain the guidance spells out may be longer and carry its condition), and a year of a date column.
Shapes over a subject: a total for one entity and year, a breakdown, the top entity (ties listed),
a two-year comparison (change, or which year was higher) and a share. Subjects the guidance names
are asked about first; budget slots go round-robin over the shapes, so even a small budget covers
every shape.

Every emitted question's SQL ran on a read-only connection and returned a non-empty, not-all-NULL
result; none equals or nearly copies an excluded (benchmark) question (`leakage.LeakageGuard`).
Join questions carry `naive_sql`, the same aggregate with the join left out, which must fail: the
deterministic explorer may draft it first to produce a realistic error.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import random
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.schema import SchemaStats, TableInfo, introspect, quote_ident
from memsql_assets.lib.sql.syntax import sql_literal
from memsql_assets.lib.trajectories.guidance import Guidance, source_guidance
from memsql_assets.lib.trajectories.leakage import LeakageGuard, normalize_question

MAX_CATEGORIES = 50
MAX_JOINS = 3
ENTITIES_PER_SUBJECT = 3
YEARS_PER_SUBJECT = 3
QUALIFIER_VALUES = 2
VERIFY_TIMEOUT_S = 5.0
_KEY_NAME = re.compile(r"(^id$|_id$|[a-z0-9]ID$|[a-z0-9]Id$)")
_YEAR_NAME = re.compile(r"year", re.I)
_DATE_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*"

__all__ = ["SyntheticQuestion", "generate_questions", "normalize_question", "question_id"]


@dataclass(frozen=True)
class SyntheticQuestion:
    id: str
    db: str
    text: str
    sql: str
    template: str
    tables: tuple[str, ...]
    columns: tuple[tuple[str, str], ...] = ()
    values: tuple[tuple[str, str, str], ...] = ()  # (table, column, value as text) filters
    naive_sql: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "db": self.db,
            "text": self.text,
            "sql": self.sql,
            "template": self.template,
            "tables": list(self.tables),
            "columns": [list(c) for c in self.columns],
            "values": [list(v) for v in self.values],
            "naive_sql": self.naive_sql,
        }

    @classmethod
    def from_json(cls, d: dict) -> SyntheticQuestion:
        return cls(
            id=d["id"],
            db=d["db"],
            text=d["text"],
            sql=d["sql"],
            template=d["template"],
            tables=tuple(d.get("tables", ())),
            columns=tuple(tuple(c) for c in d.get("columns", ())),  # type: ignore[misc]
            values=tuple(tuple(v) for v in d.get("values", ())),  # type: ignore[misc]
            naive_sql=d.get("naive_sql"),
        )


def question_id(db: str, text: str) -> str:
    """Content-addressed (stable under exclusions and budget changes); safe as a file name."""
    digest = hashlib.sha256(f"{db}|{normalize_question(text)}".encode()).hexdigest()
    return f"{db}-{digest[:12]}"


# ---------------------------------------------------------------- column roles


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


# ---------------------------------------------------------------- wording and SQL pieces


def text_value(value: object) -> str:
    return str(value) if isinstance(value, int | float) else f"'{value}'"


def words(name: str) -> str:
    """'CompanyName' -> 'company name', 'value_billions' -> 'value billions' (A3 stays A3)."""
    if re.fullmatch(r"[A-Z][0-9]+", name):
        return name
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name.replace("_", " "))
    return " ".join(spaced.lower().split())


def singular(name: str) -> str:
    w = words(name)
    if w.endswith("ies"):
        return w[:-3] + "y"
    return w[:-1] if w.endswith("s") and not w.endswith("ss") else w


def plural(name: str) -> str:
    w = singular(name)
    return w[:-1] + "ies" if w.endswith("y") else w + "s"


@functools.lru_cache(maxsize=4096)
def _q(name: str) -> str:
    """Bare identifier when SQLite accepts it bare, else double-quoted.

    Bare names matter for naive drafts: SQLite reads an unknown *double-quoted* column as a string
    literal, so a quoted missing column would run instead of failing with "no such column".
    """
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        try:
            sqlite3.connect(":memory:").execute(f"SELECT {name} FROM (SELECT 0 AS {name})")
            return name
        except sqlite3.Error:
            pass
    return quote_ident(name)


def _alias(name: str) -> str:
    return re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower() or "value"


# ---------------------------------------------------------------- subjects


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
            f" JOIN {_q(t)} t{i} ON {on}"
            for i, (t, on) in enumerate(zip(self.tables[1:], self.ons, strict=True), 1)
        )
        return f"FROM {_q(self.tables[0])} t0{joins}"


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
            conds.insert(0, f"t0.{_q(self.qualifier[0])} = {sql_literal(self.qualifier[1])}")
        return f" WHERE {' AND '.join(conds)}" if conds else ""

    def col(self, table: str, column: str) -> str:
        return f"{self.path.alias(table)}.{_q(column)}"

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
            return f"{b_alias}.{_q(f.ref_column)} = {a_alias}.{_q(f.column)}"
        if (f.table, f.ref_table) == (b, a):
            return f"{b_alias}.{_q(f.column)} = {a_alias}.{_q(f.ref_column)}"
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
                ons.append(on + (f" AND t{k}.{_q(cond[0])} = {sql_literal(cond[1])}" if cond else ""))
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
            re.sub(rf"(?<![\w.])({'|'.join(map(re.escape, cols))})(?!\w)", lambda m: f"t0.{_q(m[1])}", d.expr)
            if cols
            else d.expr
        )
        out.append(Measure(table, f"total {d.name}", "SUM", row, d.expr, cols, True, d.date))
    for m in p.of_role(table, "measure"):
        c = _q(m.column)
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


def _subjects(p: DbProfile, guide: Guidance) -> list[Subject]:
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


# ---------------------------------------------------------------- shapes


@dataclass(frozen=True)
class _Candidate:
    template: str
    text: str
    sql: str
    tables: tuple[str, ...]
    columns: tuple[tuple[str, str], ...]
    values: tuple[tuple[str, str, str], ...] = ()
    naive_sql: str | None = None


class _Values:
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


def shape_total(s: Subject, v: _Values) -> Iterator[_Candidate]:
    tables, cols = _base(s)
    years = v.top(s, s.year_expr, YEARS_PER_SUBJECT) if s.date else [None]
    for e, y in itertools.product(v.top(s, s.entity_col, ENTITIES_PER_SUBJECT), years):
        conds = [f"{s.entity_col} = {sql_literal(e)}", *([s.year_is(y)] if y is not None else [])]
        naive_where = f"{_q(s.entity.column)} = {sql_literal(e)}"
        yield _Candidate(
            "total",
            f"What was the {s.measure_words} for {s.entity.noun} {text_value(e)}{_in_year(y)}?",
            f"SELECT {s.measure.expr} AS value {s.path.from_sql}{s.where(*conds)}",
            tables,
            cols,
            _filters(s, e),
            naive_sql=f"SELECT {s.measure.bare} AS value FROM {_q(s.path.tables[0])} WHERE {naive_where}",
        )


def shape_breakdown(s: Subject, v: _Values) -> Iterator[_Candidate]:
    tables, cols = _base(s)
    years = v.top(s, s.year_expr, YEARS_PER_SUBJECT) if s.date else [None]
    for e in v.top(s, s.entity_col, ENTITIES_PER_SUBJECT):
        cond = f"{s.entity_col} = {sql_literal(e)}"
        if s.date is not None:
            yield _Candidate(
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
            yield _Candidate(
                "breakdown",
                f"Break down the {s.measure_words} for {s.entity.noun} {text_value(e)}{_in_year(y)} by {words(dc)}.",
                f"SELECT {d} AS {_alias(dc)}, {s.measure.expr} AS value {s.path.from_sql}{s.where(*conds)} "
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


def shape_top1(s: Subject, v: _Values) -> Iterator[_Candidate]:
    tables, cols = _base(s)
    years = v.top(s, s.year_expr, YEARS_PER_SUBJECT) if s.date else [None]
    for y in years:
        conds = [s.year_is(y)] if y is not None else []
        yield _Candidate(
            "top1",
            f"Which {s.entity.noun} had the highest {s.measure_words}{_in_year(y)}? List every one tied for first.",
            _top1_sql(s, s.entity_col, _alias(s.entity.column), conds),
            tables,
            cols,
            _filters(s, None),
        )
    for e, (dt, dc), y in itertools.product(v.top(s, s.entity_col, ENTITIES_PER_SUBJECT), s.dims, years):
        conds = [f"{s.entity_col} = {sql_literal(e)}", *([s.year_is(y)] if y is not None else [])]
        yield _Candidate(
            "top1_within",
            f"For {s.entity.noun} {text_value(e)}{_in_year(y)}, which {words(dc)} had the highest "
            f"{s.measure_words}? Include ties.",
            _top1_sql(s, s.col(dt, dc), _alias(dc), conds),
            tables,
            (*cols, (dt, dc)),
            _filters(s, e),
        )


def shape_compare(s: Subject, v: _Values) -> Iterator[_Candidate]:
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
        yield _Candidate(
            "change",
            f"How did the {s.measure_words} for {s.entity.noun} {text_value(e)} change from {y1} to {y2}?",
            f"SELECT ROUND(SUM(CASE WHEN year = {sql_literal(y2)} THEN value END) - "
            f"SUM(CASE WHEN year = {sql_literal(y1)} THEN value END), 2) AS change FROM ({per_year})",
            tables,
            cols,
            _filters(s, e),
        )
        yield _Candidate(
            "higher_year",
            f"Comparing {y1} and {y2}, in which year was the {s.measure_words} for {s.entity.noun} "
            f"{text_value(e)} higher?",
            f"SELECT year, value FROM ({per_year}) ORDER BY value DESC, year LIMIT 1",
            tables,
            cols,
            _filters(s, e),
        )


def shape_share(s: Subject, v: _Values) -> Iterator[_Candidate]:
    if not s.measure.additive:
        return
    tables, cols = _base(s)
    years = v.top(s, s.year_expr, YEARS_PER_SUBJECT) if s.date else [None]
    row = s.measure.row
    for e, y in itertools.product(v.top(s, s.entity_col, ENTITIES_PER_SUBJECT), years):
        conds = [s.year_is(y)] if y is not None else []
        mine = f"SUM(CASE WHEN {s.entity_col} = {sql_literal(e)} THEN {row} ELSE 0 END)"
        yield _Candidate(
            "share",
            f"What share of the {s.measure_words}{_in_year(y)} came from {s.entity.noun} {text_value(e)}, in percent?",
            f"SELECT ROUND(100.0 * {mine} / SUM({row}), 2) AS share_pct {s.path.from_sql}{s.where(*conds)}",
            tables,
            cols,
            _filters(s, e),
        )


SHAPES = (shape_total, shape_breakdown, shape_top1, shape_compare, shape_share)


def _shuffled(shape: Callable, s: Subject, values: _Values, rng: random.Random) -> Iterator[_Candidate]:
    """One subject's candidates of one shape in a seeded order (entities and years vary), expanded
    only when the round-robin first reaches it."""
    cands = list(shape(s, values))
    rng.shuffle(cands)
    yield from cands


def _candidates(subjects: Sequence[Subject], values: _Values, rng: random.Random) -> Iterator[_Candidate]:
    """Round-robin over shapes; within a shape, round-robin over subjects, most guided first."""
    order = sorted(subjects, key=lambda s: (-s.priority, rng.random()))
    streams: list[Iterator[_Candidate]] = []
    for shape in rng.sample(SHAPES, len(SHAPES)):

        def stream(shape=shape) -> Iterator[_Candidate]:
            its = [_shuffled(shape, s, values, random.Random(rng.random())) for s in order]
            while its:
                alive = []
                for it in its:
                    cand = next(it, None)
                    if cand is not None:
                        alive.append(it)
                        yield cand
                its = alive

        streams.append(stream())
    while streams:
        alive = []
        for st in streams:
            cand = next(st, None)
            if cand is not None:
                alive.append(st)
                yield cand
        streams = alive


def _verified(conn: sqlite3.Connection, cand: _Candidate) -> _Candidate | None:
    res = run_query(conn, cand.sql, timeout_s=VERIFY_TIMEOUT_S, row_cap=1000)
    if not res.ok or not res.rows or all(v is None for row in res.rows for v in row):
        return None
    if (
        cand.naive_sql is not None
        and run_query(conn, cand.naive_sql, timeout_s=VERIFY_TIMEOUT_S, row_cap=1).ok
    ):
        return _Candidate(cand.template, cand.text, cand.sql, cand.tables, cand.columns, cand.values, None)
    return cand


def generate_questions(
    db_name: str,
    db_path: Path,
    n: int,
    seed: int,
    exclude_questions: set[str] | frozenset[str] = frozenset(),
    guidance: Guidance | None = None,
) -> list[SyntheticQuestion]:
    """Up to `n` verified questions for one database; same inputs ⇒ the same list.

    `guidance` defaults to the source's prompt guidance. Fewer than `n` come back only when the
    grammar runs out of verified candidates (the store report shows the shortfall).
    """
    if n < 0:
        raise ValueError(f"{db_name}: question count must be ≥ 0, got {n}")
    guard = LeakageGuard(exclude_questions)
    conn = open_readonly(db_path)
    try:
        prof = profile_db(conn, introspect(conn, db_name))
        subjects = _subjects(prof, source_guidance(db_name) if guidance is None else guidance)
        rng = random.Random(f"memsql-synthetic:{seed}:{db_name}")
        out: list[SyntheticQuestion] = []
        seen: set[str] = set()
        for cand in _candidates(subjects, _Values(conn), rng) if n else ():
            key = normalize_question(cand.text)
            if key in seen or guard.blocks(cand.text):
                continue
            ok = _verified(conn, cand)
            if ok is None:
                continue
            seen.add(key)
            out.append(
                SyntheticQuestion(
                    id=question_id(db_name, ok.text),
                    db=db_name,
                    text=ok.text,
                    sql=ok.sql,
                    template=ok.template,
                    tables=ok.tables,
                    columns=ok.columns,
                    values=ok.values,
                    naive_sql=ok.naive_sql,
                )
            )
            if len(out) >= n:
                break
        return out
    finally:
        conn.close()
