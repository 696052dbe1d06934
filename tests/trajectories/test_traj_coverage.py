"""Coverage of the benchmark by the trajectory store: table sets of SQL, the report, and the
default store (N = 60, real Chroma) meeting its targets on the embedded sources."""

from __future__ import annotations

import pytest

from memsql_assets.defs.trajectories.resources import TrajectorySettings
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.memory.chroma import chroma_client
from memsql_assets.lib.trajectories.coverage import (
    Asked,
    coverage_report,
    distinct_questions,
    match_all,
    sql_tables,
)
from memsql_assets.lib.trajectories.store import build_trajectory_store, search, store_coverage


def test_sql_tables():
    assert sql_tables(
        "SELECT ROUND(SUM(od.UnitPrice * od.Quantity), 2) FROM Orders o JOIN [Order Details] od "
        "ON od.OrderID = o.OrderID JOIN Customers c ON c.CustomerID = o.CustomerID"
    ) == {"orders", "order details", "customers"}
    # CTE names and subquery aliases are not tables
    assert sql_tables(
        'WITH g AS (SELECT t1.A3 AS a3, COUNT(*) AS value FROM loan t0 JOIN "district" t1 ON 1) '
        "SELECT a3 FROM g WHERE value = (SELECT MAX(value) FROM g)"
    ) == {"loan", "district"}
    assert sql_tables("SELECT year FROM (SELECT 1 AS year FROM annual_financials) x") == {"annual_financials"}
    with pytest.raises(MemsqlError, match="cannot read the tables"):
        sql_tables("SELECT FROM WHERE (")


def test_report_from_a_fake_store():
    turns = [
        {"source": "nw", "question": "q1", "gt_sql": "SELECT 1 FROM Orders JOIN Customers ON 1"},
        {"source": "nw", "question": "q1", "gt_sql": "SELECT 1 FROM Orders JOIN Customers ON 1"},
        {"source": "nw", "question": "q2", "gt_sql": "SELECT 1 FROM Orders"},
        {"source": "sec", "question": "q3", "gt_sql": "SELECT 1 FROM annual_financials"},
    ]
    asked = distinct_questions(turns)
    assert asked == [
        Asked("nw", "q1", frozenset({"orders", "customers"})),
        Asked("nw", "q2", frozenset({"orders"})),
        Asked("sec", "q3", frozenset({"annual_financials"})),
    ]
    store = {
        "q1": ("nw-1", 0.9, "SELECT 1 FROM Orders"),  # misses Customers
        "q2": ("nw-2", 0.7, "SELECT 1 FROM Orders JOIN Customers ON 1"),  # superset: covered
    }

    def nearest(source, questions):
        return [store.get(q) for q in questions]  # sec has no trajectories

    report = coverage_report(match_all(asked, nearest))
    assert report["questions"] == 3 and report["covered"] == 1
    assert report["coverage"] == pytest.approx(1 / 3, abs=1e-4)
    assert report["by_source"] == {"nw": 0.5, "sec": 0.0}
    assert report["mean_jaccard"] == {"nw": pytest.approx((0.5 + 0.5) / 2), "sec": 0.0}
    assert report["mean_similarity"]["nw"] == pytest.approx(0.8)
    assert not report["meets_target"]
    assert [m["question"] for m in report["misses"]] == ["q1", "q3"]
    with pytest.raises(MemsqlError, match="turn #1: missing field 'gt_sql'"):
        distinct_questions([{"source": "nw", "question": "q"}])


@pytest.fixture(scope="module")
def default_store(embedded_dbs, embedded_turns, tmp_path_factory):
    home = tmp_path_factory.mktemp("traj_coverage")
    client = chroma_client(home)
    settings = TrajectorySettings()
    build_trajectory_store(
        embedded_dbs,
        settings.budget,
        settings.seed,
        settings.theta,
        settings.max_len,
        {t["question"] for t in embedded_turns},
        client,
        collection="coverage-test",
        json_dir=home / "json",
    )
    return client


@pytest.mark.slow
def test_default_store_covers_the_benchmark(default_store, embedded_turns):
    report = store_coverage(default_store, embedded_turns, collection="coverage-test")
    assert report["questions"] == len({(t["source"], t["question"]) for t in embedded_turns})  # per database
    assert report["coverage"] >= 0.8, report
    assert set(report["by_source"]) == {"bird_financial", "northwind", "sec_edgar"}
    assert all(v >= 0.7 for v in report["by_source"].values()), report["by_source"]
    assert all(0 < v <= 1 for v in report["mean_jaccard"].values())
    assert report["meets_target"]


def test_sales_by_customer_finds_a_sales_join(default_store):
    (top,) = search(default_store, "northwind", "total sales by customer in 1997", k=1, collection="coverage-test")
    assert {"orders", "order details"} <= sql_tables(top.final_sql), top
