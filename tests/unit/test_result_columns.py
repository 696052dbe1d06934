"""The result row has one definition (RESULT_SCHEMA); dbt's copy of its columns
(macros/result_columns.sql) must name the same columns, in order, with the matching DuckDB types."""

from __future__ import annotations

import re

import pyarrow as pa

from memsql_assets.lib.harness.results import RESULT_SCHEMA
from memsql_assets.lib.paths import REPO_ROOT

DUCKDB_TYPES = {pa.string(): "varchar", pa.int32(): "integer", pa.int64(): "bigint", pa.bool_(): "boolean", pa.float64(): "double"}
# Read by stg_turn_results on their own: the partition's keys, and epoch (absent from schema-2 files).
OUTSIDE_THE_MACRO = {"model", "condition", "epoch"}


def test_dbt_reads_every_result_column_with_its_type():
    macro = (REPO_ROOT / "dbt_project" / "macros" / "result_columns.sql").read_text(encoding="utf-8")
    in_dbt = re.findall(r"\('(\w+)', '(\w+)'\)", macro)
    expected = [(f.name, DUCKDB_TYPES[f.type]) for f in RESULT_SCHEMA if f.name not in OUTSIDE_THE_MACRO]
    assert in_dbt == expected
    assert ("reasoning_tokens", "bigint") in in_dbt
