"""Northwind source: embedded builder (determinism, schema, realism) and real adapter error paths."""

from __future__ import annotations

import ast
import fnmatch
import re
import sqlite3
import time
import tomllib
from pathlib import Path

import pytest
import yaml

from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources import northwind as nw
from memsql_assets.lib.sources.sqlite_db import read_meta

TABLES = {name for name, _ in nw.TABLE_DDL}
VIEWS = {name for name, _ in nw.VIEW_DDL}


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _one(conn: sqlite3.Connection, sql: str):
    return conn.execute(sql).fetchone()[0]


def _ddl_columns() -> dict[str, list[tuple]]:
    mem = sqlite3.connect(":memory:")
    for _, ddl in nw.TABLE_DDL:
        mem.execute(ddl)
    out = {t: mem.execute(f'PRAGMA table_info("{t}")').fetchall() for t in TABLES}
    mem.close()
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, float]:
    path = tmp_path_factory.mktemp("nw") / "northwind.sqlite"
    start = time.perf_counter()
    nw.build_embedded(path, seed=1996, options={"orders": nw.DEFAULT_ORDERS})
    return path, time.perf_counter() - start


@pytest.fixture(scope="module")
def db(built) -> sqlite3.Connection:
    conn = _connect(built[0])
    yield conn
    conn.close()


def test_same_seed_same_bytes_and_other_seed_differs(built, tmp_path):
    again = tmp_path / "again.sqlite"
    nw.build_embedded(again, seed=1996, options={"orders": nw.DEFAULT_ORDERS})
    assert sha256_file(again) == sha256_file(built[0])
    other = tmp_path / "other.sqlite"
    nw.build_embedded(other, seed=1997, options={"orders": nw.DEFAULT_ORDERS})
    assert sha256_file(other) != sha256_file(built[0])


def test_default_options_equal_explicit_default(built, tmp_path):
    path = tmp_path / "defaults.sqlite"
    nw.build_embedded(path, seed=1996, options={})
    assert sha256_file(path) == sha256_file(built[0])


def test_build_is_fast(built):
    assert built[1] < 5.0


def test_schema_equals_ddl_constants(db):
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables - {"sqlite_sequence", "_memsql_meta"} == TABLES
    assert len(TABLES) == 13 and "Order Details" in TABLES and "Regions" in TABLES
    views = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='view'")}
    assert views == VIEWS and len(VIEWS) == 17
    expected = _ddl_columns()
    for table in TABLES:
        assert db.execute(f'PRAGMA table_info("{table}")').fetchall() == expected[table], table
    cols = {r[1]: r[2] for r in db.execute('PRAGMA table_info("Orders")')}
    assert cols["OrderDate"] == "DATETIME" and cols["Freight"] == "NUMERIC"
    for table, columns in nw.NORTHWIND_REQUIRED.items():
        assert set(columns) <= {c[1] for c in expected[table]}


def test_schema_is_the_ddl_file_verbatim(db):
    text = nw.DDL_FILE.read_text(encoding="utf-8")
    stored = db.execute(
        "SELECT sql FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT IN ('sqlite_sequence', '_memsql_meta')"
    ).fetchall()
    assert len(stored) == len(re.findall(r"^CREATE ", text, re.MULTILINE)) == len(TABLES) + len(VIEWS)
    for (sql,) in stored:
        assert f"{sql};\n" in text


def test_ddl_file_holding_another_statement_is_rejected(tmp_path):
    ddl = tmp_path / "ddl.sql"
    ddl.write_text(
        "-- two tables\nCREATE TABLE [A](x);\n\n-- and a view\nCREATE VIEW [B] AS SELECT x FROM A;\n"
    )
    assert nw.read_ddl(ddl) == {
        "TABLE": (("A", "CREATE TABLE [A](x)"),),
        "VIEW": (("B", "CREATE VIEW [B] AS SELECT x FROM A"),),
    }
    ddl.write_text("CREATE TABLE [A](x);\nINSERT INTO A VALUES (1);\n")
    with pytest.raises(SourceError, match="INSERT INTO A") as err:
        nw.read_ddl(ddl)
    assert err.value.path == str(ddl)


def test_data_files_ship_with_the_package():
    package = Path(nw.__file__).resolve().parents[3]  # memsql_assets/
    pyproject = tomllib.loads((package.parent / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["memsql_assets"]
    for path in (nw.DDL_FILE, nw.NAMES_FILE):
        relative = path.resolve().relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative


def _module_tree() -> ast.Module:
    """The schema and the embedded builder as one module: what reads the data files and what uses them."""
    folder = Path(nw.__file__).parent
    body = [n for name in ("schema.py", "embedded.py") for n in ast.parse((folder / name).read_text(encoding="utf-8")).body]
    return ast.Module(body=body, type_ignores=[])


def _calls(node: ast.AST, names: set[str]) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and getattr(n.func, "id", None) in names]


def _derived_constants(tree: ast.Module) -> set[str]:
    """Module-level names whose value comes (directly or through another such name) from the files."""
    assigns = [n for n in tree.body if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None]
    derived: set[str] = set()
    while True:
        more = {
            target.id
            for node in assigns
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
            and (
                _calls(node.value, {"read_ddl", "read_names", "_section", "_records"})
                or any(isinstance(n, ast.Name) and n.id in derived for n in ast.walk(node.value))
            )
        }
        if more <= derived:
            return derived
        derived |= more


def test_names_in_the_database_are_the_data_files(db):
    names = yaml.safe_load(nw.NAMES_FILE.read_text(encoding="utf-8"))
    assert db.execute("SELECT CompanyName, Phone FROM Shippers ORDER BY ShipperID").fetchall() == [
        tuple(s) for s in names["shippers"]
    ]
    assert [r[0] for r in db.execute("SELECT RegionDescription FROM Regions ORDER BY RegionID")] == names[
        "regions"
    ]
    territories = db.execute("SELECT * FROM Territories ORDER BY rowid").fetchall()
    assert territories == [tuple(t) for t in names["territories"]]
    employees = db.execute("SELECT LastName, BirthDate, Notes, ReportsTo FROM Employees ORDER BY EmployeeID")
    assert employees.fetchall() == [
        (e["last"], e["birth"], e["notes"], e["reports_to"]) for e in names["employees"]
    ]
    categories = db.execute("SELECT CategoryName, Description FROM Categories ORDER BY CategoryID").fetchall()
    assert categories == [(c["name"], c["description"]) for c in names["categories"]]
    known = {name for c in names["categories"] for name in c["names"]}
    assert {r[0] for r in db.execute("SELECT ProductName FROM Products")} <= known
    cities = {(country, c[0]) for country, cs in names["cities"].items() for c in cs}
    assert set(db.execute("SELECT Country, City FROM Customers")) <= cities


def test_every_name_list_in_the_data_file_is_used():
    tree = _module_tree()
    calls = _calls(tree, {"_section", "_records"})
    read = {call.args[0].value for call in calls if isinstance(call.args[0], ast.Constant)}
    assert read == set(yaml.safe_load(nw.NAMES_FILE.read_text(encoding="utf-8")))
    checks = {"_check_names", "read_names", "read_ddl", "_section", "_records", "_rows", "_check_leaves"}
    builder = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in checks]
    used = {n.id for f in builder for n in ast.walk(f) if isinstance(n, ast.Name)}
    public = {name for name in _derived_constants(tree) if not name.startswith("_")}
    assert {"TABLE_DDL", "CITIES", "LANGS", "EMPLOYEES", "TERRITORIES"} <= public
    assert public - used == set()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            'cities: {"Norway": [["Oslo", no, "0###", "22 ## ## ##", null]]}',
            r"cities\.Norway\[0\]\[1\] is False",
        ),
        ('territories: [[02116, "Boston", 1]]', r"territories\[0\]\[0\] is the number"),
        ('employees: [{"birth": 1968-03-14}]', r"employees\[0\]\.birth is datetime\.date"),
        ('regions: ["Eastern", null]', r"regions\[1\] is empty"),
        ("- just a list", "holds a list"),
    ],
)
def test_names_file_yaml_surprises_are_errors(tmp_path, text, where):
    names = tmp_path / "names.yaml"
    names.write_text(text, encoding="utf-8")
    with pytest.raises(SourceError, match=where) as err:
        nw.read_names(names)
    assert err.value.path == str(names)


def test_names_file_allows_numbers_and_nulls_where_the_builder_reads_them(tmp_path):
    names = tmp_path / "names.yaml"
    names.write_text(
        'territories: [["02116", "Boston", 1]]\ncustomer_countries: {"USA": 14}\n'
        'cities: {"USA": [["Seattle", "en", "981##", "(206) 555-####", null]]}\n',
        encoding="utf-8",
    )
    assert nw.read_names(names)["territories"] == [["02116", "Boston", 1]]


def test_views_run(db):
    for view in VIEWS:
        db.execute(f'SELECT * FROM "{view}" LIMIT 1').fetchall()
    assert _one(db, "SELECT COUNT(*) FROM [Order Details Extended]") == _one(
        db, "SELECT COUNT(*) FROM [Order Details]"
    )


def test_row_counts(db):
    expected = {"Customers": 93, "Orders": nw.DEFAULT_ORDERS, "Products": 77, "Categories": 8, "Employees": 9,
                "Shippers": 3, "Suppliers": 29, "Regions": 4, "Territories": 53, "EmployeeTerritories": 49,
                "CustomerDemographics": 0, "CustomerCustomerDemo": 0}  # fmt: skip
    for table, n in expected.items():
        assert _one(db, f'SELECT COUNT(*) FROM "{table}"') == n, table
    details = _one(db, "SELECT COUNT(*) FROM [Order Details]")
    assert 40_000 <= details <= 60_000
    per_order = db.execute(
        "SELECT MIN(n), MAX(n) FROM (SELECT COUNT(*) n FROM [Order Details] GROUP BY OrderID)"
    ).fetchone()
    assert per_order == (1, 5)
    assert _one(db, "SELECT COUNT(DISTINCT OrderID) FROM [Order Details]") == nw.DEFAULT_ORDERS


def test_customers_realistic(db):
    ids = [r[0] for r in db.execute("SELECT CustomerID FROM Customers")]
    assert all(re.fullmatch(r"[A-Z]{5}", i) for i in ids) and len(set(ids)) == 93
    assert _one(db, "SELECT COUNT(DISTINCT CompanyName) FROM Customers") == 93
    assert _one(db, "SELECT COUNT(DISTINCT Country) FROM Customers") >= 15
    assert _one(db, "SELECT COUNT(*) FROM Customers WHERE Region IS NULL OR City IS NULL") == 0
    with_orders = _one(db, "SELECT COUNT(DISTINCT CustomerID) FROM Orders")
    assert 85 <= with_orders < 93  # a few never ordered, as in the real dump (89 of 93)
    orphans = "SELECT COUNT(*) FROM Orders WHERE CustomerID NOT IN (SELECT CustomerID FROM Customers)"
    assert _one(db, orphans) == 0


def test_most_customers_order_in_several_years(db):
    multi_year = _one(
        db,
        "SELECT COUNT(*) FROM (SELECT CustomerID FROM Orders GROUP BY CustomerID "
        "HAVING COUNT(DISTINCT strftime('%Y', OrderDate)) >= 2)",
    )
    assert multi_year >= 85


def test_orders_look_like_jpwhite3(db):
    dates = db.execute("SELECT MIN(OrderDate), MAX(OrderDate) FROM Orders").fetchone()
    assert dates[0] >= "2012-07-10" and dates[1] <= "2023-12-31"
    classic = db.execute("SELECT MIN(OrderDate), MAX(OrderDate), COUNT(*) FROM Orders WHERE OrderID <= 11077")
    lo, hi, n = classic.fetchone()
    assert lo >= "2016-07-04" and hi <= "2018-05-06" and n == 830
    assert _one(db, "SELECT MIN(OrderID) FROM Orders") == 10248
    years = _one(db, "SELECT COUNT(DISTINCT strftime('%Y', OrderDate)) FROM Orders")
    assert years >= 10
    fmt = r"\d{4}-\d{2}-\d{2}"
    for od, rd, sd in db.execute("SELECT OrderDate, RequiredDate, ShippedDate FROM Orders"):
        assert re.fullmatch(fmt, od) and re.fullmatch(fmt, rd) and od < rd
        assert sd is None or (re.fullmatch(fmt, sd) and sd > od)
    assert 0 < _one(db, "SELECT COUNT(*) FROM Orders WHERE ShippedDate IS NULL") < 500
    lo_f, avg_f, hi_f = db.execute("SELECT MIN(Freight), AVG(Freight), MAX(Freight) FROM Orders").fetchone()
    assert lo_f > 0 and 30 < avg_f < 200 and hi_f < 5000


def test_order_lines_realistic(db):
    discounts = {r[0] for r in db.execute("SELECT DISTINCT Discount FROM [Order Details]")}
    assert discounts == {0.0, 0.05, 0.1, 0.15, 0.2, 0.25}
    share = _one(db, "SELECT AVG(Discount > 0) FROM [Order Details]")
    assert 0.1 < share < 0.5
    q = db.execute("SELECT MIN(Quantity), AVG(Quantity), MAX(Quantity) FROM [Order Details]").fetchone()
    assert q[0] >= 1 and 15 < q[1] < 35 and q[2] <= 130
    # lines are priced from the product's list price (older orders from the previous, lower list)
    mismatched = _one(
        db,
        "SELECT COUNT(*) FROM [Order Details] d JOIN Products p USING (ProductID) JOIN Orders o USING (OrderID) "
        "WHERE o.OrderDate >= '2017-01-01' AND d.UnitPrice != p.UnitPrice",
    )
    assert mismatched == 0
    sales = _one(db, "SELECT SUM(UnitPrice * Quantity * (1 - Discount)) FROM [Order Details]")
    assert sales > 1_000_000
    assert _one(db, "SELECT COUNT(DISTINCT CategoryID) FROM Products") == 8
    assert (
        _one(db, "SELECT COUNT(*) FROM Products WHERE SupplierID NOT IN (SELECT SupplierID FROM Suppliers)")
        == 0
    )


def test_meta(db):
    meta = read_meta(db)
    assert meta["kind"] == "embedded" and meta["synthetic"] is True and meta["source"] == "northwind"
    assert meta["seed"] == 1996 and meta["options"] == {"orders": nw.DEFAULT_ORDERS}
    assert meta["builder_version"] == 1


def test_orders_option_and_small_build(tmp_path):
    path = tmp_path / "small.sqlite"
    nw.build_embedded(path, seed=7, options={"orders": 1000})
    conn = _connect(path)
    try:
        assert _one(conn, "SELECT COUNT(*) FROM Orders") == 1000
        multi_year = _one(
            conn,
            "SELECT COUNT(*) FROM (SELECT CustomerID FROM Orders GROUP BY CustomerID "
            "HAVING COUNT(DISTINCT strftime('%Y', OrderDate)) >= 2)",
        )
        assert multi_year >= 85
    finally:
        conn.close()


def test_unknown_option_is_rejected(tmp_path):
    target = tmp_path / "x.sqlite"
    with pytest.raises(SourceError, match="rows_per_order"):
        nw.build_embedded(target, seed=1, options={"rows_per_order": 3})
    with pytest.raises(SourceError, match="orders"):
        nw.build_embedded(target, seed=1, options={"orders": "many"})
    with pytest.raises(SourceError, match="orders"):
        nw.build_embedded(target, seed=1, options={"orders": 10})
    assert not target.exists()


# ---------------------------------------------------------------------------------------------
# Real adapter, exercised without the real files
# ---------------------------------------------------------------------------------------------

MINI_CREATE = (
    "\n".join(ddl + ";" for _, ddl in nw.TABLE_DDL)
    + """
INSERT INTO Categories VALUES(null,'Beverages','Soft drinks',NULL);
INSERT INTO Customers VALUES('AAAAA','Alpha','A B','Owner','1 Main St.','Berlin',NULL,'10115','Germany','1',NULL);
INSERT INTO Customers VALUES('BBBBB','Beta','B C','Owner','2 Main St.','Lyon',NULL,'69001','France','2',NULL);
INSERT INTO Products (ProductID, ProductName, SupplierID, CategoryID, UnitPrice) VALUES(1, 'Tea', 1, 1, 18);
INSERT INTO Orders Values ('10248','AAAAA',5,'1996-07-04 00:00:00.000','1996-08-01 00:00:00.000',
  '1996-07-16 00:00:00.000',3,32.38,'Alpha','1 Main St.','Berlin',NULL,'10115','Germany');
INSERT INTO Orders Values ('10249','BBBBB',6,'1997-07-05 00:00:00.000','1997-08-16 00:00:00.000',NULL,1,11.61,
  'Beta','2 Main St.','Lyon',NULL,'69001','France');
INSERT INTO [Order Details] (OrderID, ProductID, UnitPrice, Quantity, Discount) VALUES(10248, 1, 14, 12, 0.0);
INSERT INTO [Order Details] (OrderID, ProductID, UnitPrice, Quantity, Discount) VALUES(10249, 1, 18, 10, 0.25);
"""
)
MINI_UPDATE = """
update [Customers] set Region='Western Europe' where Country='Germany';
update [Orders] set OrderDate = date(OrderDate,'+20 year');
update [Orders] set ShippedDate = date(ShippedDate,'+20 year');
"""


def _dump_folder(tmp_path: Path, create: str | None = MINI_CREATE, update: str | None = MINI_UPDATE) -> Path:
    folder = tmp_path / "dump"
    folder.mkdir()
    if create is not None:
        (folder / "create.sql").write_text(create, encoding="utf-8")
    if update is not None:
        (folder / "update.sql").write_text(update, encoding="utf-8")
    return folder


def test_real_folder_missing_update_sql(tmp_path):
    folder = _dump_folder(tmp_path, update=None)
    with pytest.raises(SourceError, match="update.sql") as err:
        nw.build_real(tmp_path / "out.sqlite", folder)
    assert err.value.path.endswith("update.sql")
    assert not (tmp_path / "out.sqlite").exists()


def test_real_folder_missing_create_sql(tmp_path):
    folder = _dump_folder(tmp_path, create=None)
    with pytest.raises(SourceError, match="create.sql"):
        nw.build_real(tmp_path / "out.sqlite", folder)


def test_real_missing_path(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        nw.build_real(tmp_path / "out.sqlite", tmp_path / "nowhere")


def test_real_dump_runs_both_scripts_deterministically(tmp_path):
    folder = _dump_folder(tmp_path)
    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    nw.build_real(first, folder)
    nw.build_real(second, folder)
    assert sha256_file(first) == sha256_file(second)
    conn = _connect(first)
    try:
        rows = conn.execute("SELECT OrderID, OrderDate, ShippedDate FROM Orders ORDER BY OrderID").fetchall()
        assert rows == [(10248, "2016-07-04", "2016-07-16"), (10249, "2017-07-05", None)]
        assert _one(conn, "SELECT Region FROM Customers WHERE CustomerID='AAAAA'") == "Western Europe"
        meta = read_meta(conn)
        assert meta["kind"] == "real" and meta["synthetic"] is False
        assert meta["inputs"] == ["create.sql", "update.sql"] and meta["input_format"] == "sql_dump"
    finally:
        conn.close()


def test_real_dump_with_bad_sql_names_the_script(tmp_path):
    folder = _dump_folder(tmp_path, update="update [Orders] set Nope = 1;")
    with pytest.raises(SourceError, match="update.sql") as err:
        nw.build_real(tmp_path / "out.sqlite", folder)
    assert "Nope" in str(err.value)


def test_real_dump_lacking_required_column(tmp_path):
    create = MINI_CREATE.replace("[OrderDate]DATETIME,", "[OrderDay]DATETIME,")
    folder = _dump_folder(tmp_path, create=create, update="")
    with pytest.raises(SourceError, match=r"Orders\.OrderDate"):
        nw.build_real(tmp_path / "out.sqlite", folder)


def test_real_db_copy_is_faithful(built, tmp_path):
    out = tmp_path / "copy.sqlite"
    nw.build_real(out, built[0])
    src, dst = _connect(built[0]), _connect(out)
    try:
        master = "SELECT type, name, sql FROM sqlite_master WHERE name != '_memsql_meta' ORDER BY type, name"
        assert src.execute(master).fetchall() == dst.execute(master).fetchall()
        for table in TABLES | {"sqlite_sequence"}:
            query = f'SELECT * FROM "{table}" ORDER BY 1, 2'
            assert src.execute(query).fetchall() == dst.execute(query).fetchall(), table
        meta = read_meta(dst)
        assert (
            meta["inputs"] == [built[0].name] and meta["input_format"] == "sqlite" and meta["kind"] == "real"
        )
    finally:
        src.close()
        dst.close()
    again = tmp_path / "copy2.sqlite"
    nw.build_real(again, built[0])
    assert sha256_file(again) == sha256_file(out)


def test_real_folder_prefers_northwind_db(built, tmp_path):
    folder = _dump_folder(tmp_path, update=None)  # an incomplete dump is ignored when the db is there
    (folder / "northwind.db").write_bytes(built[0].read_bytes())
    out = tmp_path / "out.sqlite"
    nw.build_real(out, folder)
    conn = _connect(out)
    try:
        assert _one(conn, "SELECT COUNT(*) FROM Orders") == nw.DEFAULT_ORDERS
    finally:
        conn.close()


def test_real_db_lacking_order_details(tmp_path):
    bad = tmp_path / "northwind.db"
    conn = sqlite3.connect(bad)
    for name, ddl in nw.TABLE_DDL:
        if name != "Order Details":
            conn.execute(ddl)
    conn.commit()
    conn.close()
    with pytest.raises(SourceError, match="Order Details") as err:
        nw.build_real(tmp_path / "out.sqlite", bad)
    assert err.value.path == str(bad)


def test_real_db_not_sqlite(tmp_path):
    bad = tmp_path / "northwind.db"
    bad.write_text("not a database", encoding="utf-8")
    with pytest.raises(SourceError, match="not a SQLite database"):
        nw.build_real(tmp_path / "out.sqlite", bad)
