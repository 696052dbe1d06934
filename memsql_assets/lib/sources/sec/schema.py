"""SEC EDGAR annual financials: `companies` + `annual_financials` (source `sec_edgar`, prefix SEC).

The benchmark asks questions such as "Show Apple revenue for 2022 and 2023" against two tables:
`companies` (one row per ticker) and `annual_financials` (ticker, fiscal_year, metric,
value_billions) with five metrics spelled exactly `revenue`, `net_income`, `cash`,
`total_assets` and `total_liabilities`; `value_billions` is USD / 1e9 at full precision (the
ground-truth SQL rounds).

Its two builders: the embedded one (embedded.py) and the real-data adapter (real.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from memsql_assets.lib.sources.sqlite_db import write_meta

SEC_SOURCE = "sec_edgar"
SEC_BUILDER_VERSION = 2

METRICS: tuple[str, ...] = ("revenue", "net_income", "cash", "total_assets", "total_liabilities")

SEC_REQUIRED: dict[str, list[str]] = {
    "companies": ["ticker", "company_name", "sector", "fiscal_year_end", "cik"],
    "annual_financials": ["ticker", "fiscal_year", "metric", "value_billions"],
}

SEC_SCHEMA = (
    "CREATE TABLE companies (ticker TEXT PRIMARY KEY, company_name TEXT NOT NULL, sector TEXT, "
    "fiscal_year_end TEXT, cik TEXT)",
    "CREATE TABLE annual_financials (ticker TEXT NOT NULL, fiscal_year INTEGER NOT NULL, "
    "metric TEXT NOT NULL, value_billions REAL NOT NULL, PRIMARY KEY (ticker, fiscal_year, metric))",
)

def create_schema(conn: sqlite3.Connection) -> None:
    for statement in SEC_SCHEMA:
        conn.execute(statement)


def fill_database(
    conn: sqlite3.Connection,
    company_rows: Sequence[tuple[Any, ...]],
    fin_rows: Sequence[tuple[Any, ...]],
    real: bool,
    meta: Mapping[str, Any],
) -> None:
    """The schema, both tables' rows and the metadata every SEC database carries, then the builder's own."""
    create_schema(conn)
    conn.executemany("INSERT INTO companies VALUES (?, ?, ?, ?, ?)", company_rows)
    conn.executemany("INSERT INTO annual_financials VALUES (?, ?, ?, ?)", fin_rows)
    kind = {"kind": "real" if real else "embedded", "synthetic": not real}
    write_meta(conn, {**kind, "source": SEC_SOURCE, "builder_version": SEC_BUILDER_VERSION, **meta})
