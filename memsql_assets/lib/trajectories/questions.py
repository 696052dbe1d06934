"""Deterministic synthetic questions that read like an analyst's, from schema and data (AgentSM Alg. 1).

Nothing here reads the benchmark. Each database's columns get roles (`column_roles`), the roles make
subjects (`subjects`), and shapes over the subjects make candidate questions (`shapes`). Subjects
the guidance names are asked about first; budget slots go round-robin over the shapes, so even a
small budget covers every shape.

Every emitted question's SQL ran on a read-only connection and returned a non-empty, not-all-NULL
result; none equals or nearly copies an excluded (benchmark) question (`leakage.LeakageGuard`).
A join question's `naive_sql` must fail: the deterministic explorer may draft it first to produce a
realistic error.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.schema import introspect
from memsql_assets.lib.trajectories.column_roles import profile_db
from memsql_assets.lib.trajectories.guidance import Guidance, source_guidance
from memsql_assets.lib.trajectories.leakage import LeakageGuard, normalize_question
from memsql_assets.lib.trajectories.shapes import SHAPES, VERIFY_TIMEOUT_S, Candidate, SubjectValues
from memsql_assets.lib.trajectories.subjects import Subject, find_subjects
from memsql_assets.lib.trajectories.synthetic_question import SyntheticQuestion, question_id


def _shuffled(shape: Callable, s: Subject, values: SubjectValues, rng: random.Random) -> Iterator[Candidate]:
    """One subject's candidates of one shape in a seeded order (entities and years vary), expanded
    only when the round-robin first reaches it."""
    cands = list(shape(s, values))
    rng.shuffle(cands)
    yield from cands


def _candidates(subjects: Sequence[Subject], values: SubjectValues, rng: random.Random) -> Iterator[Candidate]:
    """Round-robin over shapes; within a shape, round-robin over subjects, most guided first."""
    order = sorted(subjects, key=lambda s: (-s.priority, rng.random()))
    streams: list[Iterator[Candidate]] = []
    for shape in rng.sample(SHAPES, len(SHAPES)):

        def stream(shape=shape) -> Iterator[Candidate]:
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


def _verified(conn: sqlite3.Connection, cand: Candidate) -> Candidate | None:
    res = run_query(conn, cand.sql, timeout_s=VERIFY_TIMEOUT_S, row_cap=1000)
    if not res.ok or not res.rows or all(v is None for row in res.rows for v in row):
        return None
    if (
        cand.naive_sql is not None
        and run_query(conn, cand.naive_sql, timeout_s=VERIFY_TIMEOUT_S, row_cap=1).ok
    ):
        return Candidate(cand.template, cand.text, cand.sql, cand.tables, cand.columns, cand.values, None)
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
        subjects = find_subjects(prof, source_guidance(db_name) if guidance is None else guidance)
        rng = random.Random(f"memsql-synthetic:{seed}:{db_name}")
        out: list[SyntheticQuestion] = []
        seen: set[str] = set()
        for cand in _candidates(subjects, SubjectValues(conn), rng) if n else ():
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
