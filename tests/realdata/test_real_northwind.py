"""Northwind real adapter on jpwhite3's SQL dump (`memsql sources fetch northwind`; skipped when absent).

Expected figures are those of docs/data_sources.md.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.sources import northwind as nw
from memsql_assets.lib.sources.sqlite_db import read_meta

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def data(shared_data) -> Path:
    shared_data("northwind", "create.sql")
    shared_data("northwind", "update.sql")
    return shared_data("northwind")


@pytest.fixture(scope="module")
def real_db(tmp_path_factory, data) -> Path:
    path = tmp_path_factory.mktemp("nw_real") / "northwind.sqlite"
    nw.build_real(path, data)
    return path


@pytest.fixture(scope="module")
def conn(real_db):
    c = sqlite3.connect(f"file:{real_db}?mode=ro", uri=True)
    yield c
    c.close()


def _one(conn: sqlite3.Connection, sql: str):
    return conn.execute(sql).fetchone()[0]


def test_row_counts_match_provenance(conn):
    expected = {"Customers": 93, "Orders": 830, "Order Details": 2155, "Products": 77, "Categories": 8,
                "Employees": 9, "Shippers": 3, "Suppliers": 29, "Regions": 4, "Territories": 53,
                "EmployeeTerritories": 49, "CustomerDemographics": 0, "CustomerCustomerDemo": 0}  # fmt: skip
    for table, n in expected.items():
        assert _one(conn, f'SELECT COUNT(*) FROM "{table}"') == n, table
    assert _one(conn, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view'") == 17


def test_figures_match_provenance(conn):
    assert conn.execute("SELECT MIN(OrderDate), MAX(OrderDate) FROM Orders").fetchone() == (
        "2016-07-04",
        "2018-05-06",
    )
    assert conn.execute("SELECT MIN(OrderID), MAX(OrderID) FROM Orders").fetchone() == (10248, 11077)
    assert _one(conn, "SELECT COUNT(DISTINCT CustomerID) FROM Orders") == 89
    assert _one(conn, "SELECT COUNT(*) FROM Orders WHERE ShippedDate IS NULL") == 21
    sales = _one(conn, "SELECT SUM(UnitPrice * Quantity * (1 - Discount)) FROM [Order Details]")
    assert sales == pytest.approx(1_265_793.04, abs=0.01)
    assert _one(conn, "SELECT SUM(Freight) FROM Orders") == pytest.approx(64_942.69, abs=0.01)
    # update.sql ran after create.sql: regions rewritten, dates in the 'YYYY-MM-DD' text form
    assert _one(conn, "SELECT Region FROM Customers WHERE Country = 'Germany' LIMIT 1") == "Western Europe"
    assert _one(conn, "SELECT COUNT(*) FROM Orders WHERE length(OrderDate) != 10") == 0


def test_meta(conn):
    meta = read_meta(conn)
    assert meta["kind"] == "real" and meta["synthetic"] is False and meta["source"] == "northwind"
    assert meta["inputs"] == ["create.sql", "update.sql"] and meta["input_format"] == "sql_dump"


def test_rebuild_is_byte_identical(real_db, tmp_path, data):
    again = tmp_path / "again.sqlite"
    nw.build_real(again, data)
    assert sha256_file(again) == sha256_file(real_db)


def test_embedded_schema_equals_real_schema(conn, tmp_path):
    embedded = tmp_path / "embedded.sqlite"
    nw.build_embedded(embedded, seed=1996, options={})
    emb = sqlite3.connect(f"file:{embedded}?mode=ro", uri=True)
    try:
        listing = "SELECT type, name FROM sqlite_master WHERE name != '_memsql_meta' ORDER BY type, name"
        assert emb.execute(listing).fetchall() == conn.execute(listing).fetchall()
        for table, _ in nw.TABLE_DDL:
            info = f'PRAGMA table_info("{table}")'
            assert emb.execute(info).fetchall() == conn.execute(info).fetchall(), table
        # the same question SQL runs on both and the value types agree
        for sql in (
            "SELECT typeof(OrderDate), typeof(Freight) FROM Orders WHERE ShippedDate IS NOT NULL LIMIT 1",
            "SELECT typeof(CustomerID), typeof(CompanyName) FROM Customers LIMIT 1",
            "SELECT typeof(Discount), typeof(Quantity) FROM [Order Details] LIMIT 1",
        ):
            assert emb.execute(sql).fetchall() == conn.execute(sql).fetchall(), sql
    finally:
        emb.close()


def test_ddl_file_is_upstreams_ddl_up_to_whitespace(conn):
    real = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'view')"))
    for name, ddl in (*nw.TABLE_DDL, *nw.VIEW_DDL):
        assert " ".join(real[name].split()) == " ".join(ddl.split()), name


def test_db_input_copies_the_built_database(real_db, conn, tmp_path):
    folder = tmp_path / "nwdb"
    folder.mkdir()
    source = folder / "northwind.db"
    source.write_bytes(real_db.read_bytes())
    out = tmp_path / "from_db.sqlite"
    nw.build_real(out, source)
    copy = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    try:
        for table, _ in nw.TABLE_DDL:
            query = f'SELECT * FROM "{table}" ORDER BY 1, 2'
            assert copy.execute(query).fetchall() == conn.execute(query).fetchall(), table
        assert read_meta(copy)["inputs"] == ["northwind.db"]
    finally:
        copy.close()
