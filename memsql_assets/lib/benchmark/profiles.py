"""Phase 1 of generation: extract eligible profiles from a live source database."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from memsql_assets.lib.benchmark.templates import TEMPLATES_DIR, load_profile_queries
from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sql.sandbox import open_readonly

Profile = dict[str, Any]


def extract_profiles(source: str, db_path: Path, directory: Path = TEMPLATES_DIR) -> dict[str, list[Profile]]:
    """Run every profile query of `source` against its database; each must yield >= 1 row."""
    queries = load_profile_queries(directory).get(source)
    if not queries:
        raise SourceError(directory / "profiles.yaml", f"no profile queries for source '{source}'")
    conn = open_readonly(db_path)
    try:
        out: dict[str, list[Profile]] = {}
        for name, sql in sorted(queries.items()):
            try:
                cur = conn.execute(sql)
            except sqlite3.Error as exc:
                raise SourceError(
                    db_path,
                    f"profile query '{source}.{name}' failed: {exc}",
                    "the tables and columns the profile SQL reads",
                ) from exc
            cols = [d[0] for d in cur.description]
            rows = [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
            if not rows:
                raise SourceError(
                    db_path,
                    f"profile query '{source}.{name}' returned no rows",
                    "at least one eligible profile",
                )
            out[name] = rows
        return out
    finally:
        conn.close()
