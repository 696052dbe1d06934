"""The report's side-by-side table of the two benchmarks, from the condition summary's rows of each."""

from __future__ import annotations

import dataclasses

import pandas as pd

from memsql_assets.lib.report.marts import Marts
from memsql_assets.lib.report.tables import benchmarks_table

COLUMNS = [
    "model",
    "condition",
    "context_mode",
    "ex_memory_critical_pct",
    "ex_memory_critical_ci_lo_pct",
    "ex_memory_critical_ci_hi_pct",
]


def _summary(rows: list[tuple[str, str, float]], mode: str = "annotated") -> pd.DataFrame:
    return pd.DataFrame([(m, c, mode, ex, ex - 5, min(100.0, ex + 5)) for m, c, ex in rows], columns=COLUMNS)


def _marts(paper: pd.DataFrame, extended: pd.DataFrame) -> Marts:
    empty = {f.name: pd.DataFrame() for f in dataclasses.fields(Marts)}
    return Marts(**{**empty, "condition_summary": paper, "extended_condition_summary": extended})


def test_rows_evaluated_on_both_benchmarks_side_by_side_with_the_gap_and_the_reading():
    paper = _summary([("reader-probe", "A", 0.0), ("reader-probe", "B", 92.0), ("reader-probe", "B_wm5", 100.0),
                      ("gold", "C", 100.0)])  # fmt: skip
    extended = _summary(
        [("reader-probe", "A", 0.0), ("reader-probe", "B", 25.0), ("reader-probe", "B_wm5", 44.0)], "observed"
    )
    table = benchmarks_table(_marts(paper, extended))
    assert [row[:2] for row in table.rows] == [("reader-probe", "A"), ("reader-probe", "B"), ("reader-probe", "B_wm5")]
    b = dict(zip(table.columns, table.rows[1], strict=True))
    assert (b["paper's benchmark"], b["extended benchmark"], b["extended − paper (pp)"]) == ("92.0", "25.0", "-67.0")
    assert b["paper 95% CI"] == "87.0–97.0"
    assert (b["paper mode"], b["extended mode"]) == ("annotated", "observed"), "each figure names its context mode"
    assert "92.0–100.0 %" in table.note and "25.0–44.0 %" in table.note  # read from the rows, A left out


def test_without_the_extended_benchmark_the_table_is_empty_and_says_nothing_it_cannot_read():
    table = benchmarks_table(_marts(_summary([("gold", "A", 100.0)]), _summary([])))
    assert table.rows == () and "reader-probe" not in table.note
