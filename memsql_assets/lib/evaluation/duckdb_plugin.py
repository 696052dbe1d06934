"""A dbt-duckdb plugin (profiles.yml `plugins:`) that gives dbt's DuckDB connections the EX interval
of lib/evaluation/interval.py as scalar functions, so the marts call it instead of restating it."""

from __future__ import annotations

from dbt.adapters.duckdb.plugins import BasePlugin
from duckdb import DuckDBPyConnection

from memsql_assets.lib.evaluation import interval

# (name, function): each takes (correct BIGINT, turns BIGINT, sessions BIGINT) and returns DOUBLE.
FUNCTIONS = (("ex_ci_lo", interval.ex_ci_lo), ("ex_ci_hi", interval.ex_ci_hi))


def register(conn: DuckDBPyConnection) -> None:
    """Create the functions on `conn` (tests and readers outside dbt use it too)."""
    for name, fn in FUNCTIONS:
        # "special": the functions see nulls and answer null for a figure with no turns.
        conn.create_function(
            name, fn, ["BIGINT", "BIGINT", "BIGINT"], "DOUBLE", null_handling="special", side_effects=False
        )


class Plugin(BasePlugin):
    def configure_connection(self, conn: DuckDBPyConnection) -> None:
        register(conn)
