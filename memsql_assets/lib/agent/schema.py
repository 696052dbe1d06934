"""The schema text a prompt shows: the source's CREATE TABLE statements, bookkeeping tables left out."""

from __future__ import annotations

import functools
from pathlib import Path

from memsql_assets.lib.sources.sqlite_db import open_readonly


@functools.lru_cache(maxsize=16)
def schema_text(db_path: Path) -> str:
    conn = open_readonly(db_path)
    try:
        rows = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' AND substr(name, 1, 7) != '_memsql' ORDER BY name"
        ).fetchall()
    finally:
        conn.close()
    return ";\n".join(" ".join(r[0].split()) for r in rows) + ";"
