"""Synthetic questions: deterministic, verified SQL, never a benchmark question."""

from __future__ import annotations

import pytest

from memsql_assets.lib.sources.sqlite_db import open_readonly
from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.trajectories.questions import generate_questions, normalize_question

N = 25


@pytest.fixture(scope="module")
def generated(embedded_dbs):
    return {db: generate_questions(db, path, N, seed=3) for db, path in embedded_dbs.items()}


def test_deterministic(embedded_dbs, generated):
    for db, path in embedded_dbs.items():
        assert generate_questions(db, path, N, seed=3) == generated[db]
    # another seed draws another list (the grammar is large enough on every source)
    assert generate_questions("northwind", embedded_dbs["northwind"], N, seed=4) != generated["northwind"]


def test_counts_ids_and_templates(generated):
    for db, qs in generated.items():
        assert len(qs) == N, db
        assert len({q.id for q in qs}) == N
        assert len({normalize_question(q.text) for q in qs}) == N
        assert all(q.db == db and q.id.startswith(f"{db}-") for q in qs)
        assert len({q.template for q in qs}) >= 5, db  # round-robin over the grammar


def test_sql_verified(embedded_dbs, generated):
    for db, qs in generated.items():
        conn = open_readonly(embedded_dbs[db])
        try:
            for q in qs:
                res = run_query(conn, q.sql)
                assert res.ok and res.rows, (q.id, q.sql, res.error)
                assert any(v is not None for row in res.rows for v in row)
                if q.naive_sql is not None:
                    naive = run_query(conn, q.naive_sql)
                    assert not naive.ok and "no such column" in (naive.error or ""), q.naive_sql
        finally:
            conn.close()
    assert any(q.naive_sql for qs in generated.values() for q in qs)


def test_no_overlap_with_benchmark(embedded_dbs, embedded_turns):
    bench = {t["question"] for t in embedded_turns}
    bench_norm = {normalize_question(q) for q in bench}
    for db, path in embedded_dbs.items():
        for q in generate_questions(db, path, 60, seed=0, exclude_questions=bench):
            assert normalize_question(q.text) not in bench_norm


def test_excluded_text_is_never_generated(embedded_dbs, generated):
    path = embedded_dbs["bird_financial"]
    victim = generated["bird_financial"][0].text
    # exclusion compares normalised text: case, punctuation and spacing do not matter
    disguised = "  " + victim.upper().replace("?", " ?!") + "  "
    again = generate_questions("bird_financial", path, N, seed=3, exclude_questions={disguised})
    assert victim not in {q.text for q in again}
    assert len(again) == N
    # the rest is stable: content-addressed ids do not shift
    assert {q.id for q in again} >= {q.id for q in generated["bird_financial"][1:]}


def test_never_hard_codes_a_schema(embedded_dbs, generated):
    for db, qs in generated.items():
        conn = open_readonly(embedded_dbs[db])
        try:
            for q in qs:
                for t, c in q.columns:
                    cols = {r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')}
                    assert c in cols, (q.id, t, c)
        finally:
            conn.close()


def test_bad_count(embedded_dbs):
    with pytest.raises(ValueError, match="sec_edgar"):
        generate_questions("sec_edgar", embedded_dbs["sec_edgar"], -1, seed=0)
    assert generate_questions("sec_edgar", embedded_dbs["sec_edgar"], 0, seed=0) == []
