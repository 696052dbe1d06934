"""How a schema name reads: as an analyst's words, and as a SQL identifier or output alias."""

from __future__ import annotations

import functools
import re
import sqlite3

from memsql_assets.lib.sql.schema import quote_ident


def text_value(value: object) -> str:
    return str(value) if isinstance(value, int | float) else f"'{value}'"


def words(name: str) -> str:
    """'CompanyName' -> 'company name', 'value_billions' -> 'value billions' (A3 stays A3)."""
    if re.fullmatch(r"[A-Z][0-9]+", name):
        return name
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name.replace("_", " "))
    return " ".join(spaced.lower().split())


def singular(name: str) -> str:
    w = words(name)
    if w.endswith("ies"):
        return w[:-3] + "y"
    return w[:-1] if w.endswith("s") and not w.endswith("ss") else w


def plural(name: str) -> str:
    w = singular(name)
    return w[:-1] + "ies" if w.endswith("y") else w + "s"


@functools.lru_cache(maxsize=4096)
def ident(name: str) -> str:
    """Bare identifier when SQLite accepts it bare, else double-quoted.

    Bare names matter for naive drafts: SQLite reads an unknown *double-quoted* column as a string
    literal, so a quoted missing column would run instead of failing with "no such column".
    """
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        try:
            sqlite3.connect(":memory:").execute(f"SELECT {name} FROM (SELECT 0 AS {name})")
            return name
        except sqlite3.Error:
            pass
    return quote_ident(name)


def column_alias(name: str) -> str:
    return re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower() or "value"
