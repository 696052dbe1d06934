"""Synthetic questions: analyst shapes over FK paths, deterministic, verified SQL, never a benchmark question."""

from __future__ import annotations

import pytest

from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.schema import schema_stats
from memsql_assets.lib.trajectories.guidance import Guidance, parse_guidance, source_guidance
from memsql_assets.lib.trajectories.leakage import normalize_question
from memsql_assets.lib.trajectories.questions import generate_questions

SHAPES = {"total", "breakdown", "breakdown_by_year", "top1", "top1_within", "change", "higher_year", "share"}

N = 25


@pytest.fixture(scope="module")
def generated(embedded_dbs):
    return {db: generate_questions(db, path, N, seed=3) for db, path in embedded_dbs.items()}


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_every_question_joins_and_shapes_are_all_used(embedded_dbs, generated):
    for db, qs in generated.items():
        stats = schema_stats(db, embedded_dbs[db])
        for q in qs:
            assert len(q.tables) >= 2 and q.template in SHAPES, (q.template, q.tables)
            if len(q.tables) - 1 > 3:  # longer than 3 joins only along a chain the guidance spells out
                chain = [h.table for c in source_guidance(db).chains for h in c]
                assert list(q.tables) == chain[chain.index(q.tables[0]) :][: len(q.tables)], q.tables
            for a, b in zip(q.tables, q.tables[1:], strict=False):
                assert any({f.table, f.ref_table} == {a, b} for f in stats.foreign_keys), (a, b)
    assert {q.template for qs in generated.values() for q in qs} >= SHAPES - {"top1_within"}


def test_guidance_shapes_the_questions(embedded_dbs, generated):
    nw = generated["northwind"]
    # the derived amount the guidance defines, with its prescribed date, over Orders -> Customers
    sales = [q for q in nw if "total sales" in q.text]
    assert sales and all("UnitPrice * t0.Quantity * (1 - t0.Discount)" in q.sql for q in sales)
    assert all("OrderDate" in q.sql for q in sales if "in 20" in q.text or "by year" in q.text)
    assert any(q.tables == ("Order Details", "Orders", "Customers") for q in sales)
    # BIRD: the owner chain loan -> account -> disp (OWNER) -> client -> district, regions by A3
    bird = generated["bird_financial"]
    chain = [q for q in bird if q.tables == ("loan", "account", "disp", "client", "district")]
    assert chain and all("t2.type = 'OWNER'" in q.sql and "t4.A3" in q.sql for q in chain)
    # without guidance the grammar still walks FK paths (at most 3 joins) and names rows by labels
    plain = generate_questions("bird_financial", embedded_dbs["bird_financial"], N, seed=3, guidance=Guidance())
    assert len(plain) == N and all(2 <= len(q.tables) <= 4 for q in plain)
    assert not any("'OWNER'" in q.sql for q in plain)


def test_top1_lists_ties(embedded_dbs, generated):
    top = [q for qs in generated.values() for q in qs if q.template == "top1"]
    assert top
    for q in top:
        assert "tied for first" in q.text and "= (SELECT MAX(value) FROM g)" in q.sql and "LIMIT" not in q.sql


def test_parse_guidance_sentence_shapes():
    g = parse_guidance(
        [
            "Revenue totals come from [Sales Lines] using price * qty.",
            "For yearly revenue questions, use Sales.SoldOn, not Sales.ShippedOn.",
            "Store names are stored in Stores.StoreName.",
            "lines joins to sales, then shop where kind='OWN', then region.",
            "Anything else is ignored.",
        ]
    )
    (m,) = g.measures
    assert (m.name, m.table, m.expr, m.date) == ("revenue", "Sales Lines", "price * qty", ("Sales", "SoldOn"))
    assert g.labels == {"Stores": ("StoreName", "store")}
    (chain,) = g.chains
    assert [(h.table, h.condition) for h in chain] == [
        ("lines", None),
        ("sales", None),
        ("shop", ("kind", "OWN")),
        ("region", None),
    ]
    assert parse_guidance([]) == Guidance() and source_guidance("no_such_db") == Guidance()
