"""BIRD `financial` (the PKDD'99 Czech bank data): its schema, which the embedded builder (embedded.py) and the
real-data adapter (real.py) both write.

Both paths write BIRD's `financial.sqlite` layout: the eight tables, column names and declared
types of BIRD (`order` is a reserved word and stays quoted), dates as ISO `YYYY-MM-DD` text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

SOURCE_NAME = "bird_financial"
BIRD_BUILDER_VERSION = 1

# (column, declared type, nullable) in BIRD's order; the first column is the primary key.
Column = tuple[str, str, bool]
BIRD_SCHEMA: dict[str, tuple[Column, ...]] = {
    "district": (
        ("district_id", "INTEGER", False),
        ("A2", "TEXT", False),
        ("A3", "TEXT", False),
        ("A4", "TEXT", False),
        ("A5", "TEXT", False),
        ("A6", "TEXT", False),
        ("A7", "TEXT", False),
        ("A8", "INTEGER", False),
        ("A9", "INTEGER", False),
        ("A10", "REAL", False),
        ("A11", "INTEGER", False),
        ("A12", "REAL", True),
        ("A13", "REAL", False),
        ("A14", "INTEGER", False),
        ("A15", "INTEGER", True),
        ("A16", "INTEGER", False),
    ),
    "account": (
        ("account_id", "INTEGER", False),
        ("district_id", "INTEGER", False),
        ("frequency", "TEXT", False),
        ("date", "DATE", False),
    ),
    "client": (
        ("client_id", "INTEGER", False),
        ("gender", "TEXT", False),
        ("birth_date", "DATE", False),
        ("district_id", "INTEGER", False),
    ),
    "disp": (
        ("disp_id", "INTEGER", False),
        ("client_id", "INTEGER", False),
        ("account_id", "INTEGER", False),
        ("type", "TEXT", False),
    ),
    "card": (
        ("card_id", "INTEGER", False),
        ("disp_id", "INTEGER", False),
        ("type", "TEXT", False),
        ("issued", "DATE", False),
    ),
    "loan": (
        ("loan_id", "INTEGER", False),
        ("account_id", "INTEGER", False),
        ("date", "DATE", False),
        ("amount", "INTEGER", False),
        ("duration", "INTEGER", False),
        ("payments", "REAL", False),
        ("status", "TEXT", False),
    ),
    "order": (
        ("order_id", "INTEGER", False),
        ("account_id", "INTEGER", False),
        ("bank_to", "TEXT", False),
        ("account_to", "INTEGER", False),
        ("amount", "REAL", False),
        ("k_symbol", "TEXT", False),
    ),
    "trans": (
        ("trans_id", "INTEGER", False),
        ("account_id", "INTEGER", False),
        ("date", "DATE", False),
        ("type", "TEXT", False),
        ("operation", "TEXT", True),
        ("amount", "INTEGER", False),
        ("balance", "INTEGER", False),
        ("k_symbol", "TEXT", True),
        ("bank", "TEXT", True),
        ("account", "INTEGER", True),
    ),
}

FOREIGN_KEYS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "account": (("district_id", "district", "district_id"),),
    "client": (("district_id", "district", "district_id"),),
    "disp": (("account_id", "account", "account_id"), ("client_id", "client", "client_id")),
    "card": (("disp_id", "disp", "disp_id"),),
    "loan": (("account_id", "account", "account_id"),),
    "order": (("account_id", "account", "account_id"),),
    "trans": (("account_id", "account", "account_id"),),
}

# What the benchmark reads: the join chain loan -> account -> disp(OWNER) -> client -> district.
BIRD_REQUIRED: dict[str, list[str]] = {
    "account": ["account_id", "district_id", "frequency", "date"],
    "client": ["client_id", "gender", "birth_date", "district_id"],
    "disp": ["disp_id", "client_id", "account_id", "type"],
    "district": ["district_id", "A2", "A3"],
    "loan": ["loan_id", "account_id", "date", "amount", "duration", "payments", "status"],
}
# Tables the benchmark never reads: a real input may lack them (recorded as "missing_tables").
OPTIONAL_TABLES = ("card", "order", "trans")

OPTION_DEFAULTS: dict[str, Any] = {"trans_rows": 20000}

EXPECTED_INPUT = (
    "BIRD's financial.sqlite, or a folder of PKDD'99 files (account, client, disp, district, loan, "
    "optionally card, order, trans as .csv/.asc) in the raw or the CTU relational layout"
)


def create_schema(conn: sqlite3.Connection) -> None:
    for table, columns in BIRD_SCHEMA.items():
        parts = []
        for i, (name, decl, nullable) in enumerate(columns):
            text = f"{name} {decl}"
            if i == 0:
                text += " NOT NULL PRIMARY KEY"
            elif not nullable:
                text += " NOT NULL"
            parts.append(text)
        for col, ref_table, ref_col in FOREIGN_KEYS.get(table, ()):
            parts.append(f'FOREIGN KEY ({col}) REFERENCES "{ref_table}" ({ref_col})')
        conn.execute(f'CREATE TABLE "{table}" (\n    ' + ",\n    ".join(parts) + "\n)")


def insert_rows(conn: sqlite3.Connection, table: str, rows: Iterable[Sequence[object]]) -> None:
    cols = [c[0] for c in BIRD_SCHEMA[table]]
    conn.executemany(
        f'INSERT INTO "{table}" ({", ".join(cols)}) VALUES ({", ".join("?" * len(cols))})',
        rows,
    )
