"""Read the dbt marts the report needs from the DuckDB file, read-only.

Only dbt writes the DuckDB file (DESIGN.md, storage); the report opens it read-only, so it can run
while nothing else holds it, and it never changes a number: every figure and table is drawn from
these frames as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd

from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.vocabulary import (
    ALL_SOURCES,
    CONDITION_NAMES,
    ERROR_CLASSES,
    EXTENDED_BENCHMARK,
    PAPER_BENCHMARK,
    PHENOMENA,
    REPORT_SOURCES,
)

SOURCES = (*REPORT_SOURCES, ALL_SOURCES)

MARTS = (
    "agg_condition_summary",
    "agg_ex_by_turn_depth",
    "agg_ex_by_source",
    "agg_ex_by_source_tier",
    "agg_mbs",
    "agg_ablation",
    "agg_error_taxonomy",
    "agg_contamination",
    "agg_episodic_hit_rate",
    "agg_cost",
    "agg_model_pair_gaps",
    "agg_comparator_sensitivity",
    "agg_reasoning_vs_standard",
    "paper_comparison",
    "reference_expectations",
    "agg_guess_rate",
    "agg_ex_by_phenomenon",
    "agg_agent_steps",
    "agg_agent_steps_saved",
    "agg_condition_contrasts",
    "agg_memory_cost",
    "agg_history_cascade",
)
# Marts with a `benchmark` column: their paper rows are the report's paper tables, their extended
# rows the extended benchmark's, shown beside them (never pooled).
BY_BENCHMARK = ("agg_condition_summary", "agg_ex_by_turn_depth", "agg_ex_by_source", "agg_contamination")


class ReportError(MemsqlError):
    """The marts cannot be read: no DuckDB file, or a mart missing (dbt build has not run)."""


@dataclass(frozen=True)
class Marts:
    """One DataFrame per mart, rows in report order (model, then condition A → E, then depth/source)."""

    condition_summary: pd.DataFrame
    ex_by_turn_depth: pd.DataFrame
    ex_by_source: pd.DataFrame
    ex_by_source_tier: pd.DataFrame
    mbs: pd.DataFrame
    ablation: pd.DataFrame
    error_taxonomy: pd.DataFrame
    contamination: pd.DataFrame
    episodic_hit_rate: pd.DataFrame
    cost: pd.DataFrame
    model_pair_gaps: pd.DataFrame
    comparator_sensitivity: pd.DataFrame
    reasoning_vs_standard: pd.DataFrame
    paper_comparison: pd.DataFrame
    reference_expectations: pd.DataFrame
    guess_rate: pd.DataFrame
    ex_by_phenomenon: pd.DataFrame  # extended benchmark only
    agent_steps: pd.DataFrame  # turns through the agent loop only (conditions with tools); every benchmark
    agent_steps_saved: pd.DataFrame  # T against E per benchmark x model x source
    condition_contrasts: pd.DataFrame  # every benchmark (its column), every condition against B_wm5 and A
    memory_cost: pd.DataFrame  # every benchmark (its column)
    history_cascade: pd.DataFrame  # every benchmark (its column): gold history against the model's own
    extended_condition_summary: pd.DataFrame
    extended_ex_by_turn_depth: pd.DataFrame
    extended_ex_by_source: pd.DataFrame
    extended_contamination: pd.DataFrame

    @property
    def models(self) -> list[str]:
        return sorted(self.condition_summary["model"].unique().tolist())

    @property
    def is_empty(self) -> bool:
        return self.condition_summary.empty


def _order(df: pd.DataFrame) -> pd.DataFrame:
    """Sort by the columns a reader scans: model, condition in SPEC order, then the rest."""
    keys: list[str] = []
    df = df.copy()
    for col in ("model", "paper_model", "claim_id", "model_a", "model_b"):
        if col in df.columns:
            keys.append(col)
    if "condition" in df.columns:
        df["_cond"] = df["condition"].map({c: i for i, c in enumerate(CONDITION_NAMES)}).fillna(len(CONDITION_NAMES))
        keys.append("_cond")
    if "source" in df.columns:
        df["_src"] = df["source"].map({s: i for i, s in enumerate(SOURCES)}).fillna(len(SOURCES))
        keys.append("_src")
    if "tag" in df.columns:
        df["_tag"] = df["tag"].map({t: i for i, t in enumerate(PHENOMENA)})
        keys.append("_tag")
    if "error_class" in df.columns:
        df["_cls"] = df["error_class"].map({c: i for i, c in enumerate(ERROR_CLASSES)})
        keys.append("_cls")
    for col in ("tier", "turn_depth"):
        if col in df.columns:
            keys.append(col)
    if keys:
        df = df.sort_values(keys, kind="stable")
    return df.drop(columns=[c for c in ("_cond", "_src", "_cls", "_tag") if c in df.columns]).reset_index(drop=True)


def load_marts(duckdb_path: Path) -> Marts:
    path = Path(duckdb_path)
    if not path.exists():
        raise ReportError(f"{path}: DuckDB file does not exist (run `dbt build` in dbt_project/ first)")
    con = duckdb.connect(str(path), read_only=True)
    try:
        present = {
            r[0]
            for r in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main'"
            ).fetchall()
        }
        missing = [m for m in MARTS if m not in present]
        if missing:
            raise ReportError(
                f"{path}: missing mart(s) {', '.join(missing)} in schema main (run `dbt build`)"
            )
        frames = {m: _order(con.execute(f"select * from main.{m}").df()) for m in MARTS}
    finally:
        con.close()
    fields = {m.removeprefix("agg_"): df for m, df in frames.items() if m not in BY_BENCHMARK}
    for m in BY_BENCHMARK:
        df = frames[m]
        name = m.removeprefix("agg_")
        fields[name] = df[df["benchmark"] == PAPER_BENCHMARK].reset_index(drop=True)
        fields[f"extended_{name}"] = df[df["benchmark"] == EXTENDED_BENCHMARK].reset_index(drop=True)
    return Marts(**fields)
