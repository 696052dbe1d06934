"""Algorithm 1's budget: exact sum, monotone in complexity, nobody starved, formula as documented."""

from __future__ import annotations

import math
import random

import pytest

from memsql_assets.lib.sql.schema import ColumnInfo, ForeignKey, SchemaStats, TableInfo, schema_stats
from memsql_assets.lib.trajectories.budget import allocate_budget, complexity_weight


def fake_stats(db: str, tables: int, cols_per_table: int, fks: int, rows: int) -> SchemaStats:
    ts = tuple(
        TableInfo(
            f"t{i}",
            tuple(ColumnInfo(f"c{j}", "TEXT", "TEXT") for j in range(cols_per_table)),
            ("c0",),
            rows // max(tables, 1),
        )
        for i in range(tables)
    )
    edges = tuple(ForeignKey(f"t{i % tables}", "c1", f"t{(i + 1) % tables}", "c0", True) for i in range(fks))
    return SchemaStats(db, ts, edges)


def test_weight_formula():
    s = fake_stats("x", tables=4, cols_per_table=5, fks=3, rows=999 * 4 // 4 * 1)
    rows = s.n_rows
    assert complexity_weight(s) == pytest.approx(4 + 20 / 4 + 2 * 3 + math.log10(rows + 1))


@pytest.mark.parametrize("total", [0, 1, 2, 3, 7, 30, 31, 100, 299, 1000])
def test_sum_is_exactly_the_budget(total):
    stats = {
        "a": fake_stats("a", 8, 7, 7, 40000),
        "b": fake_stats("b", 2, 4, 1, 1700),
        "c": fake_stats("c", 13, 7, 13, 58000),
    }
    alloc = allocate_budget(stats, total)
    assert sum(alloc.values()) == total
    if total >= 3:
        assert min(alloc.values()) >= 1


def test_monotone_in_complexity_random_schemas():
    rng = random.Random(7)
    for _ in range(200):
        k = rng.randint(2, 6)
        stats = {
            f"db{i}": fake_stats(
                f"db{i}", rng.randint(1, 15), rng.randint(1, 12), rng.randint(0, 15), rng.randint(0, 10**6)
            )
            for i in range(k)
        }
        total = rng.randint(0, 400)
        alloc = allocate_budget(stats, total)
        assert sum(alloc.values()) == total
        w = {db: complexity_weight(s) for db, s in stats.items()}
        for a in stats:
            for b in stats:
                if w[a] > w[b]:
                    assert alloc[a] >= alloc[b], (w, alloc)
        if total >= k:
            assert min(alloc.values()) >= 1


def test_tiny_database_still_gets_one_question():
    stats = {"huge": fake_stats("huge", 200, 20, 300, 10**7), "tiny": fake_stats("tiny", 1, 1, 0, 0)}
    assert allocate_budget(stats, 2) == {"huge": 1, "tiny": 1}
    assert allocate_budget(stats, 1) == {"huge": 1, "tiny": 0}


def test_bad_budget():
    with pytest.raises(ValueError):
        allocate_budget({"a": fake_stats("a", 1, 1, 0, 1)}, -1)
    with pytest.raises(ValueError):
        allocate_budget({}, 3)
    assert allocate_budget({}, 0) == {}


def test_embedded_sources(embedded_dbs):
    stats = {db: schema_stats(db, p) for db, p in embedded_dbs.items()}
    sec = stats["sec_edgar"]
    # SEC declares no foreign keys: the ticker edge is inferred from the companies primary key.
    assert [(f.table, f.column, f.ref_table, f.ref_column, f.declared) for f in sec.foreign_keys] == [
        ("annual_financials", "ticker", "companies", "ticker", False)
    ]
    assert all(f.declared for f in stats["northwind"].foreign_keys)
    assert stats["bird_financial"].n_tables == 8
    alloc = allocate_budget(stats, 30)
    assert sum(alloc.values()) == 30
    assert alloc["northwind"] > alloc["bird_financial"] > alloc["sec_edgar"] >= 1
