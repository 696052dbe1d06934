"""Northwind (jpwhite3's SQLite edition): its schema, which the embedded builder (embedded.py) and the
real-data adapter (real.py) both produce.

* Schema: the 13 tables are created from the upstream DDL verbatim (column names, declared types,
  keys, checks), plus the 17 upstream views, so SQL written against the real file runs unchanged.
  The statements live in `lib/sources/northwind_ddl.sql`.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sql.schema import quote_ident

NORTHWIND_SOURCE = "northwind"
NORTHWIND_BUILDER_VERSION = 1

NORTHWIND_REQUIRED: dict[str, list[str]] = {
    "Customers": ["CustomerID", "CompanyName", "City", "Country"],
    "Orders": ["OrderID", "CustomerID", "EmployeeID", "OrderDate", "ShippedDate", "ShipVia", "Freight"],
    "Order Details": ["OrderID", "ProductID", "UnitPrice", "Quantity", "Discount"],
    "Products": ["ProductID", "ProductName", "SupplierID", "CategoryID", "UnitPrice"],
    "Categories": ["CategoryID", "CategoryName"],
}

DDL_FILE = Path(__file__).parents[1] / "northwind_ddl.sql"
_CREATE = re.compile(r"CREATE (TABLE|VIEW) \[([^\]]+)\]")


def read_sql(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(path, f"is not UTF-8 text: {exc}", "a SQL script") from exc
    except OSError as exc:
        raise SourceError(path, f"cannot be read: {exc}", "a readable SQL script") from exc


def read_ddl(path: Path = DDL_FILE) -> dict[str, tuple[tuple[str, str], ...]]:
    """{"TABLE": ..., "VIEW": ...}: (name, statement) pairs in file order, each statement as
    sqlite_master will store it (the text between leading `--` comments and its `;` + newline)."""
    found: dict[str, list[tuple[str, str]]] = {"TABLE": [], "VIEW": []}
    for chunk in read_sql(path).split(";\n"):
        statement = chunk.strip()
        while statement.startswith("--"):
            statement = statement.partition("\n")[2].strip()
        if not statement:
            continue
        match = _CREATE.match(statement)
        if match is None:
            raise SourceError(
                path, f"statement {statement[:40]!r} is not a CREATE", "CREATE TABLE|VIEW [name]"
            )
        found[match[1]].append((match[2], statement))
    return {kind: tuple(pairs) for kind, pairs in found.items()}


_DDL = read_ddl()
TABLE_DDL = _DDL["TABLE"]
VIEW_DDL = _DDL["VIEW"]


def create_schema(conn: sqlite3.Connection) -> None:
    for _, ddl in (*TABLE_DDL, *VIEW_DDL):
        conn.execute(ddl)


def insert_rows(conn: sqlite3.Connection, table: str, rows: Sequence[Sequence[Any]]) -> None:
    if rows:
        marks = ", ".join("?" * len(rows[0]))
        conn.executemany(f"INSERT INTO {quote_ident(table)} VALUES ({marks})", rows)
