"""The result row, defined once: one evaluated turn of one epoch of one partition.

`TurnResult` is what the runner builds for every turn. Everything else about the row derives from
its fields: the Parquet schema of turn_results.parquet (`RESULT_SCHEMA`), the columns
older published schemas lack and the value their rows are read with (`ADDED_COLUMNS`), and what dbt
reads (`dbt_columns`, passed as the `result_columns` var: the staging model stg_turn_results casts
every one of them, and its column descriptions come from the `result_column_docs` var). Adding a
field here is the only edit a new column needs to reach the file and the staging model.

Each field is declared with `column(arrow type, description)`; `since` (with `fill`) marks a column
added after schema 2, the oldest readable one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

# 5: the agent measures (steps … agent_trace); 4: retries, reasoning_tokens, stale_state; 3: epoch; 2: contamination by provenance (contamination_source, fallback_match, *_sessions)
SCHEMA_VERSION = 5

# Arrow type -> the DuckDB type dbt casts the column to.
DUCKDB_TYPES: Mapping[pa.DataType, str] = {
    pa.string(): "varchar",
    pa.int32(): "integer",
    pa.int64(): "bigint",
    pa.bool_(): "boolean",
    pa.float64(): "double",
}


def column(arrow: pa.DataType, doc: str, since: int | None = None, fill: Any = None) -> Any:
    """A TurnResult field: its Parquet type, its meaning, and (for a column added after schema 2)
    the schema version that added it and the value an older file's rows are read with."""
    if arrow not in DUCKDB_TYPES:
        raise TypeError(f"no DuckDB type for Arrow type {arrow}")
    return dataclasses.field(metadata={"arrow": arrow, "doc": doc, "since": since, "fill": fill})


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnResult:
    """One evaluated turn of one epoch: a row of a partition's turn_results.parquet."""

    session_id: str = column(
        pa.string(), "Session id `PREFIX-TIER-INDEX` (`PREFIX-X-INDEX` on the extended benchmark)."
    )
    source: str = column(pa.string(), "Source prefix of the session's database (NW, SEC, BIRD).")
    tier: int = column(pa.int32(), "Session tier: 1, 2 or 3 (every extended session is tier 3).")
    turn_index: int = column(pa.int32(), "The turn's 1-based position in its session.")
    epoch: int = column(
        pa.int32(), "Which independent sample of every turn the row is (1-based).", since=3, fill=1
    )
    memory_critical: bool = column(pa.bool_(), "The turn needs a value stated in an earlier turn.")
    model: str = column(pa.string(), "Registry key of the evaluated model.")
    condition: str = column(pa.string(), "Memory condition the turn ran under.")
    raw_output: str | None = column(pa.string(), "The model's reply text; null when the model call failed.")
    extracted_sql: str | None = column(
        pa.string(), "The SQL extracted from the reply; null when none was found."
    )
    ex_strict: bool = column(pa.bool_(), "Strict execution accuracy: the result equals the ground truth's.")
    ex_bag: bool = column(
        pa.bool_(),
        "Verdict of the bag comparator (rows paired one to one; integers exact, tolerance only where a float is involved).",
    )
    ex_set: bool = column(pa.bool_(), "Verdict of the set comparator (bag without duplicates).")
    error_class: str = column(pa.string(), "The turn's exclusive error class (lib/evaluation/taxonomy.py).")
    error_message: str | None = column(
        pa.string(), "What went wrong: the SQL error, or the model call's failure."
    )
    contaminated: bool = column(
        pa.bool_(),
        "The failed turn took a value from another analyst's session (lib/evaluation/contamination.py).",
    )
    contamination_source: str | None = column(
        pa.string(), "The other analyst's session a contaminated turn took a value from."
    )
    fallback_match: bool = column(
        pa.bool_(), "The failed turn's result equals the next session's ground truth (the paper's check)."
    )
    stale_state: bool | None = column(
        pa.bool_(),
        "The result equals the ground truth built with a correction's overwritten value; null: the turn has none.",
        since=4,
    )
    gt_error: str | None = column(pa.string(), "The ground truth's own execution error; null when it ran.")
    model_error_type: str | None = column(
        pa.string(), "How the model call failed (gateway error type); null when it answered."
    )
    prompt_tokens: int = column(pa.int64(), "Prompt tokens of the model call.")
    completion_tokens: int = column(pa.int64(), "Completion tokens of the model call.")
    reasoning_tokens: int | None = column(
        pa.int64(),
        "Reasoning tokens of the model call; null in files from before they were recorded.",
        since=4,
    )
    latency_s: float = column(pa.float64(), "Wall time of the model call in seconds (0 for a stored reply).")
    cost_usd: float = column(pa.float64(), "Cost of the model call in US dollars.")
    cache_hit: bool = column(pa.bool_(), "The reply came from the request store, not the endpoint.")
    attempts: int = column(pa.int32(), "Endpoint attempts the model call took.")
    retries: int = column(
        pa.int32(), "How often a user re-asked the turn (`--only-failed`).", since=4, fill=0
    )
    prompt_hash: str = column(pa.string(), "SHA-256 of the assembled prompt.")
    request_key: str | None = column(pa.string(), "The request-store key of the model call.")
    resolved_keys: str = column(
        pa.string(), "JSON: the referenced keys memory resolved, with where each came from."
    )
    missing_keys: str = column(pa.string(), "JSON: the referenced keys memory did not resolve.")
    retrieved_sessions: str = column(pa.string(), "JSON: the sessions whose episodes retrieval returned.")
    supplying_sessions: str = column(
        pa.string(), "JSON: the sessions whose episodes supplied a resolved key."
    )
    retrieval_ms: float = column(pa.float64(), "Time spent on memory retrieval, in milliseconds.")
    steps: int = column(
        pa.int32(),
        "Agent steps (model requests) of the turn; 0 under a condition without tools.",
        since=5,
        fill=0,
    )
    tool_calls: int = column(
        pa.int32(),
        "Tool calls of the agent's steps, a composite's calls each counted; 0 without tools.",
        since=5,
        fill=0,
    )
    explore_share: float = column(
        pa.float64(),
        "Share of the agent's phase-classified tool calls that explore; 0 without tools.",
        since=5,
        fill=0.0,
    )
    execute_share: float = column(
        pa.float64(),
        "Share of the agent's phase-classified tool calls that execute; 0 without tools.",
        since=5,
        fill=0.0,
    )
    validate_share: float = column(
        pa.float64(),
        "Share of the agent's phase-classified tool calls that validate; 0 without tools.",
        since=5,
        fill=0.0,
    )
    composite_uses: int = column(
        pa.int32(), "Calls of the trajectory store's composite tools; 0 without tools.", since=5, fill=0
    )
    trajectory_tables_used: bool | None = column(
        pa.bool_(),
        "The agent's calls touched a table of the retrieved trajectory; null: no trajectory, or no tools.",
        since=5,
    )
    agent_trace: str | None = column(
        pa.string(),
        "JSON: the agent's trace (outcome, final SQL, each step's tool calls and tokens; its timings left "
        "out); null without tools.",
        since=5,
    )
    benchmark_version: str = column(pa.string(), "Benchmark version the partition was evaluated against.")
    schema_version: int = column(pa.int32(), "Version of this row schema the file was written with.")

    def as_row(self) -> dict[str, Any]:
        """The row as a plain dict in column order (what checkpoints and result files hold)."""
        return {name: getattr(self, name) for name in COLUMNS}


FIELDS: tuple[dataclasses.Field[Any], ...] = dataclasses.fields(TurnResult)
COLUMNS: tuple[str, ...] = tuple(f.name for f in FIELDS)
RESULT_SCHEMA = pa.schema([(f.name, f.metadata["arrow"]) for f in FIELDS])
# Columns added after a published schema: name -> (the version that added it, an older file's value).
ADDED_COLUMNS: dict[str, tuple[int, Any]] = {
    f.name: (f.metadata["since"], f.metadata["fill"]) for f in FIELDS if f.metadata["since"] is not None
}


def dbt_columns() -> list[list[str]]:
    """[name, DuckDB type] of every column, in order: dbt's `result_columns` var."""
    return [[f.name, DUCKDB_TYPES[f.metadata["arrow"]]] for f in FIELDS]


def column_docs() -> dict[str, str]:
    """Each column's description: dbt's `result_column_docs` var."""
    return {f.name: f.metadata["doc"] for f in FIELDS}
