"""Deterministic synthetic questions from a database's schema and data (AgentSM Algorithm 1).

A small grammar turns what introspection finds into (question, SQL) pairs: tables, columns,
foreign-key join paths (one and two hops) and real values sampled by deterministic SQL
(`ORDER BY … LIMIT`). Nothing about a particular schema is hard-coded; columns get roles from
their type and data:

- key: a single-column primary key, either end of a foreign-key edge, or named like a key
  (`id`, `…_id`, `…ID`, `…Id`);
- date: text values shaped `YYYY-MM-DD…` (≥ 90 % of non-null values);
- categorical: not a key or date, 2–50 distinct values, not unique per row;
- measure: numeric affinity, numeric values, not a key / categorical;
- label: the first TEXT column that is (nearly) unique per row — what a person names a row by.

Every emitted question's SQL was executed on a read-only connection and returned a non-empty,
not-all-NULL result. Join questions also carry `naive_sql`, the same query with the join left
out, which must fail: the deterministic explorer may draft it first to produce a realistic error.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import random
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memsql_assets.lib.sources.sqlite_db import open_readonly
from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.trajectories.schema_stats import (
    ForeignKey,
    SchemaStats,
    TableInfo,
    introspect,
    quote_ident,
)

MAX_CATEGORIES = 50
VALUES_PER_COLUMN = 3
YEARS_PER_COLUMN = 2
TOP_K = 5
VERIFY_TIMEOUT_S = 5.0
_KEY_NAME = re.compile(r"(^id$|_id$|[a-z0-9]ID$|[a-z0-9]Id$)")
_DATE_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*"
AGGREGATES = {"average": "AVG", "total": "SUM", "maximum": "MAX", "minimum": "MIN"}


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


def normalize_question(text: str) -> str:
    """Case-, punctuation- and whitespace-insensitive form used for the no-overlap rule."""
    return re.sub(r"[^0-9a-z]+", " ", text.casefold()).strip()


def question_id(db: str, text: str) -> str:
    """Content-addressed (stable under exclusions and budget changes); safe as a file name."""
    digest = hashlib.sha256(f"{db}|{normalize_question(text)}".encode()).hexdigest()
    return f"{db}-{digest[:12]}"


# ---------------------------------------------------------------- column roles


@dataclass(frozen=True)
class ColumnProfile:
    table: str
    column: str
    role: str  # key | date | categorical | measure | label | other
    distinct: int
    values: tuple[object, ...] = ()  # most frequent values (categorical) or years (date)


@dataclass
class DbProfile:
    stats: SchemaStats
    columns: dict[str, list[ColumnProfile]] = field(default_factory=dict)

    def of_role(self, table: str, *roles: str) -> list[ColumnProfile]:
        return [c for c in self.columns.get(table, []) if c.role in roles]

    def label(self, table: str) -> str | None:
        labels = self.of_role(table, "label")
        if labels:
            return labels[0].column
        pk = self.stats.table(table).primary_key
        return pk[0] if len(pk) == 1 else None


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
    non_null, distinct, numeric, dated = conn.execute(
        f"SELECT COUNT({qc}), COUNT(DISTINCT {qc}), "
        f"SUM(typeof({qc}) IN ('integer', 'real')), SUM({qc} GLOB '{_DATE_GLOB}') FROM {qt}"
    ).fetchone()
    if (t.name.lower(), col.lower()) in keys or _KEY_NAME.search(col):
        return ColumnProfile(t.name, col, "key", distinct)
    if non_null and (dated or 0) >= 0.9 * non_null:
        years = conn.execute(
            f"SELECT strftime('%Y', {qc}) AS y FROM {qt} WHERE y IS NOT NULL "
            f"GROUP BY y ORDER BY COUNT(*) DESC, y LIMIT {YEARS_PER_COLUMN}"
        ).fetchall()
        return ColumnProfile(t.name, col, "date", distinct, tuple(r[0] for r in years))
    if 2 <= distinct <= MAX_CATEGORIES and distinct < non_null and aff in ("TEXT", "INTEGER"):
        vals = conn.execute(
            f"SELECT {qc} FROM {qt} WHERE {qc} IS NOT NULL AND {qc} != '' "
            f"GROUP BY {qc} ORDER BY COUNT(*) DESC, {qc} LIMIT {VALUES_PER_COLUMN}"
        ).fetchall()
        return ColumnProfile(t.name, col, "categorical", distinct, tuple(r[0] for r in vals))
    if aff in ("INTEGER", "REAL", "NUMERIC") and non_null and (numeric or 0) >= 0.9 * non_null:
        return ColumnProfile(t.name, col, "measure", distinct)
    if aff == "TEXT" and non_null and distinct >= 0.9 * t.rows and t.rows >= 2:
        return ColumnProfile(t.name, col, "label", distinct)
    return ColumnProfile(t.name, col, "other", distinct)


# ---------------------------------------------------------------- grammar


@dataclass(frozen=True)
class _Candidate:
    template: str
    text: str
    sql: str
    tables: tuple[str, ...]
    columns: tuple[tuple[str, str], ...]
    values: tuple[tuple[str, str, str], ...] = ()
    naive_sql: str | None = None


def sql_literal(value: object) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def text_value(value: object) -> str:
    return str(value) if isinstance(value, int | float) else f"'{value}'"


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


def _single_table(p: DbProfile) -> Iterator[_Candidate]:
    for t in p.stats.tables:
        T, qT = t.name, _q(t.name)
        cats = p.of_role(T, "categorical")
        measures = p.of_role(T, "measure")
        label = p.label(T)
        for c in cats:
            C = _q(c.column)
            yield _Candidate(
                "count_per_category",
                f"How many {T} records are there for each {c.column}?",
                f"SELECT {C}, COUNT(*) AS n FROM {qT} GROUP BY {C} ORDER BY n DESC, {C}",
                (T,),
                ((T, c.column),),
            )
            yield _Candidate(
                "distinct_count",
                f"How many distinct {c.column} values appear in {T}?",
                f"SELECT COUNT(DISTINCT {C}) AS n FROM {qT}",
                (T,),
                ((T, c.column),),
            )
            for v in c.values:
                yield _Candidate(
                    "count_with_value",
                    f"How many {T} records have {c.column} equal to {text_value(v)}?",
                    f"SELECT COUNT(*) AS n FROM {qT} WHERE {C} = {sql_literal(v)}",
                    (T,),
                    ((T, c.column),),
                    ((T, c.column, str(v)),),
                )
        for m in measures:
            M = _q(m.column)
            for word, fn in AGGREGATES.items():
                yield _Candidate(
                    f"aggregate_{fn.lower()}",
                    f"What is the {word} {m.column} across all {T} records?",
                    f"SELECT ROUND({fn}({M}), 2) AS {fn.lower()}_{_alias(m.column)} FROM {qT}",
                    (T,),
                    ((T, m.column),),
                )
            if label and label != m.column:
                L = _q(label)
                yield _Candidate(
                    "top_k_by_measure",
                    f"List the {TOP_K} {T} records with the highest {m.column}, showing {label} and {m.column}.",
                    f"SELECT {L}, {M} FROM {qT} WHERE {M} IS NOT NULL ORDER BY {M} DESC, {L} LIMIT {TOP_K}",
                    (T,),
                    ((T, label), (T, m.column)),
                )
            for c in cats:
                C = _q(c.column)
                yield _Candidate(
                    "measure_per_category",
                    f"What is the average {m.column} of {T} records per {c.column}?",
                    f"SELECT {C}, ROUND(AVG({M}), 2) AS avg_{_alias(m.column)} FROM {qT} "
                    f"GROUP BY {C} ORDER BY {C}",
                    (T,),
                    ((T, c.column), (T, m.column)),
                )
                for v in c.values[:2]:
                    yield _Candidate(
                        "aggregate_with_value",
                        f"What is the total {m.column} of {T} records whose {c.column} is {text_value(v)}?",
                        f"SELECT ROUND(SUM({M}), 2) AS total_{_alias(m.column)} FROM {qT} "
                        f"WHERE {C} = {sql_literal(v)}",
                        (T,),
                        ((T, c.column), (T, m.column)),
                        ((T, c.column, str(v)),),
                    )
            for c1, c2 in itertools.combinations(cats, 2):
                for v1, v2 in itertools.product(c1.values[:2], c2.values[:2]):
                    yield _Candidate(
                        "aggregate_with_two_values",
                        f"What is the total {m.column} of {T} records whose {c1.column} is {text_value(v1)} "
                        f"and {c2.column} is {text_value(v2)}?",
                        f"SELECT ROUND(SUM({M}), 2) AS total_{_alias(m.column)} FROM {qT} "
                        f"WHERE {_q(c1.column)} = {sql_literal(v1)} AND {_q(c2.column)} = {sql_literal(v2)}",
                        (T,),
                        ((T, c1.column), (T, c2.column), (T, m.column)),
                        ((T, c1.column, str(v1)), (T, c2.column, str(v2))),
                    )
        for d in p.of_role(T, "date"):
            D = _q(d.column)
            yield _Candidate(
                "count_per_year",
                f"How many {T} records are there per year of {d.column}?",
                f"SELECT strftime('%Y', {D}) AS year, COUNT(*) AS n FROM {qT} "
                f"WHERE {D} IS NOT NULL GROUP BY year ORDER BY year",
                (T,),
                ((T, d.column),),
            )
            for y in d.values:
                yield _Candidate(
                    "count_in_year",
                    f"How many {T} records have a {d.column} in {y}?",
                    f"SELECT COUNT(*) AS n FROM {qT} WHERE strftime('%Y', {D}) = {sql_literal(str(y))}",
                    (T,),
                    ((T, d.column),),
                    ((T, d.column, str(y)),),
                )


def _alias(name: str) -> str:
    return re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower() or "value"


def _edges(p: DbProfile) -> list[ForeignKey]:
    """Child → parent edges between distinct, non-empty tables."""
    return [
        f
        for f in p.stats.foreign_keys
        if f.table != f.ref_table and p.stats.table(f.table).rows and p.stats.table(f.ref_table).rows
    ]


def _joins(p: DbProfile) -> Iterator[_Candidate]:
    for fk in _edges(p):
        A, B = fk.table, fk.ref_table
        a_cols = {c.name.lower() for c in p.stats.table(A).columns}
        on = f"a.{_q(fk.column)} = b.{_q(fk.ref_column)}"
        frm = f"FROM {_q(A)} a JOIN {_q(B)} b ON {on}"
        for c in p.of_role(B, "categorical", "label"):
            if c.column.lower() in a_cols:
                continue  # a naive (join-less) draft would silently use A's own column
            C = _q(c.column)
            if c.role == "categorical":
                yield _Candidate(
                    "join_count_per_category",
                    f"How many {A} records are there for each {B} {c.column}?",
                    f"SELECT b.{C}, COUNT(*) AS n {frm} GROUP BY b.{C} ORDER BY n DESC, b.{C}",
                    (A, B),
                    ((B, c.column),),
                    naive_sql=f"SELECT {C}, COUNT(*) AS n FROM {_q(A)} GROUP BY {C} ORDER BY n DESC, {C}",
                )
                for v in c.values[:2]:
                    yield _Candidate(
                        "join_count_with_value",
                        f"How many {A} records are linked to {B} records whose {c.column} is {text_value(v)}?",
                        f"SELECT COUNT(*) AS n {frm} WHERE b.{C} = {sql_literal(v)}",
                        (A, B),
                        ((B, c.column),),
                        ((B, c.column, str(v)),),
                        naive_sql=f"SELECT COUNT(*) AS n FROM {_q(A)} WHERE {C} = {sql_literal(v)}",
                    )
            for m in p.of_role(A, "measure"):
                M = _q(m.column)
                yield _Candidate(
                    "join_sum_per_group",
                    f"Which 10 {B} {c.column} values have the largest total {A} {m.column}?",
                    f"SELECT b.{C}, ROUND(SUM(a.{M}), 2) AS total_{_alias(m.column)} {frm} "
                    f"GROUP BY b.{C} ORDER BY total_{_alias(m.column)} DESC, b.{C} LIMIT 10",
                    (A, B),
                    ((B, c.column), (A, m.column)),
                    naive_sql=f"SELECT {C}, ROUND(SUM({M}), 2) AS total FROM {_q(A)} GROUP BY {C} "
                    f"ORDER BY total DESC LIMIT 10",
                )
                for f in p.of_role(A, "categorical"):
                    for v in f.values[:2]:
                        F = _q(f.column)
                        yield _Candidate(
                            "join_top_group_with_value",
                            f"Which {B} {c.column} has the largest total {m.column} among {A} records whose "
                            f"{f.column} is {text_value(v)}?",
                            f"SELECT b.{C}, ROUND(SUM(a.{M}), 2) AS total_{_alias(m.column)} {frm} "
                            f"WHERE a.{F} = {sql_literal(v)} GROUP BY b.{C} "
                            f"ORDER BY total_{_alias(m.column)} DESC, b.{C} LIMIT 1",
                            (A, B),
                            ((B, c.column), (A, m.column), (A, f.column)),
                            ((A, f.column, str(v)),),
                            naive_sql=f"SELECT {C}, SUM({M}) AS total FROM {_q(A)} WHERE {F} = {sql_literal(v)} "
                            f"GROUP BY {C} ORDER BY total DESC LIMIT 1",
                        )
    for fk1 in _edges(p):
        for fk2 in _edges(p):
            A, B, C_ = fk1.table, fk1.ref_table, fk2.ref_table
            if fk2.table != B or C_ in (A, B):
                continue
            a_cols = {c.name.lower() for c in p.stats.table(A).columns}
            frm = (
                f"FROM {_q(A)} a JOIN {_q(B)} b ON a.{_q(fk1.column)} = b.{_q(fk1.ref_column)} "
                f"JOIN {_q(C_)} c ON b.{_q(fk2.column)} = c.{_q(fk2.ref_column)}"
            )
            for c in p.of_role(C_, "categorical"):
                if c.column.lower() in a_cols:
                    continue
                for v in c.values[:2]:
                    yield _Candidate(
                        "join2_count_with_value",
                        f"How many {A} records are linked through {B} to {C_} records whose {c.column} is "
                        f"{text_value(v)}?",
                        f"SELECT COUNT(*) AS n {frm} WHERE c.{_q(c.column)} = {sql_literal(v)}",
                        (A, B, C_),
                        ((C_, c.column),),
                        ((C_, c.column, str(v)),),
                        naive_sql=f"SELECT COUNT(*) AS n FROM {_q(A)} WHERE {_q(c.column)} = {sql_literal(v)}",
                    )


GRAMMAR: tuple[Callable[[DbProfile], Iterator[_Candidate]], ...] = (_single_table, _joins)


def _interleave(cands: list[_Candidate], rng: random.Random) -> list[_Candidate]:
    """Round-robin over templates (each shuffled) so a small budget still covers many shapes."""
    groups: dict[str, list[_Candidate]] = {}
    for c in cands:
        groups.setdefault(c.template, []).append(c)
    names = sorted(groups)
    rng.shuffle(names)
    for n in names:
        rng.shuffle(groups[n])
    out: list[_Candidate] = []
    while any(groups.values()):
        for n in names:
            if groups[n]:
                out.append(groups[n].pop(0))
    return out


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
) -> list[SyntheticQuestion]:
    """Up to `n` verified questions for one database; same inputs ⇒ the same list.

    Fewer than `n` come back only when the grammar runs out of verified candidates (the store
    report shows the shortfall against the budget).
    """
    if n < 0:
        raise ValueError(f"{db_name}: question count must be ≥ 0, got {n}")
    excluded = {normalize_question(q) for q in exclude_questions}
    conn = open_readonly(db_path)
    try:
        prof = profile_db(conn, introspect(conn, db_name))
        cands = [c for rule in GRAMMAR for c in rule(prof)]
        rng = random.Random(f"memsql-synthetic:{seed}:{db_name}")
        out: list[SyntheticQuestion] = []
        seen: set[str] = set()
        for cand in _interleave(cands, rng):
            if len(out) >= n:
                break
            key = normalize_question(cand.text)
            if key in excluded or key in seen:
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
        return out
    finally:
        conn.close()
