"""Northwind (jpwhite3's SQLite edition): its schema (schema.py), the seeded embedded builder
(embedded.py) and the real-data adapter (real.py)."""

from memsql_assets.lib.sources.northwind.embedded import (
    DEFAULT_ORDERS,
    NAMES_FILE,
    build_embedded,
    read_names,
)
from memsql_assets.lib.sources.northwind.real import build_real
from memsql_assets.lib.sources.northwind.schema import (
    DDL_FILE,
    NORTHWIND_REQUIRED,
    TABLE_DDL,
    VIEW_DDL,
    read_ddl,
)

__all__ = [
    "DDL_FILE",
    "DEFAULT_ORDERS",
    "NAMES_FILE",
    "NORTHWIND_REQUIRED",
    "TABLE_DDL",
    "VIEW_DDL",
    "build_embedded",
    "build_real",
    "read_ddl",
    "read_names",
]
