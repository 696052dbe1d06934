"""The leaderboard of one benchmark: models as rows, conditions as columns, memory-critical EX with its
95 % interval in each cell, the evaluated LLMs apart from the reference models.

The report draws it as a heatmap (page.py); its Table (fmt.py) is the same cells for Dagster's
markdown and a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from memsql_assets.lib.models.builtin_names import BUILTIN_NAMES
from memsql_assets.lib.report import fmt
from memsql_assets.lib.report.fmt import Table
from memsql_assets.lib.report.marts import CONDITION_NAMES, Marts, ReportError
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, PAPER_BENCHMARK

# The registry's offline reference models (kind builtin), in its order: measuring sticks, not contestants.
BUILTIN_REFERENCES: tuple[str, ...] = BUILTIN_NAMES["builtin"]
VALUE, LOW, HIGH = "ex_memory_critical_pct", "ex_memory_critical_ci_lo_pct", "ex_memory_critical_ci_hi_pct"
# A column the marts may carry: the memory context a condition ran with (annotated / observed).
CONTEXT_MODE = "context_mode"


@dataclass(frozen=True)
class Cell:
    """One partition's memory-critical EX (%), its 95 % interval, and what it ran on."""

    value: float | None
    low: float | None
    high: float | None
    run: str  # "complete, 30 sessions" or "sample of 12 sessions"

    @property
    def value_text(self) -> str:
        return fmt.pct(self.value)

    @property
    def interval_text(self) -> str:
        return fmt.interval(self.low, self.high)


Row = tuple[str, tuple[Cell | None, ...]]  # model, one cell per condition (None: not evaluated)


@dataclass(frozen=True)
class Leaderboard:
    """One benchmark's matrix: a row per model, the LLMs' block then the reference models'."""

    benchmark: str
    conditions: tuple[str, ...]
    llms: tuple[Row, ...]
    references: tuple[Row, ...]
    modes: tuple[tuple[str, tuple[str, ...]], ...]  # (context mode, its conditions); () without the column

    @property
    def key(self) -> str:
        return f"matrix_{self.benchmark}"

    @property
    def title(self) -> str:
        return f"{self.benchmark.capitalize()} benchmark: memory-critical EX %"

    @property
    def is_empty(self) -> bool:
        return not (self.llms or self.references)

    def caption(self) -> str:
        """What a cell shows, and the context mode of each condition where the marts say it."""
        text = (
            "Each cell: memory-critical EX % and its 95 % interval (Wilson, the number of sessions as n); "
            "– not evaluated."
        )
        if not self.modes:
            return text
        if len(self.modes) == 1:
            return f"{text} Context: {self.modes[0][0]}."
        return f"{text} Context: " + "; ".join(f"{mode} ({', '.join(cs)})" for mode, cs in self.modes) + "."

    def table(self) -> Table:
        """The same cells as text: "value (low–high)"."""

        def text(cell: Cell | None) -> str:
            return fmt.MISSING if cell is None else f"{cell.value_text} ({cell.interval_text})"

        rows = tuple(
            (model, kind, *(text(c) for c in cells))
            for kind, block in (("LLM", self.llms), ("reference", self.references))
            for model, cells in block
        )
        return Table(self.key, self.title, ("model", "kind", *self.conditions), rows, self.caption())


def _run(rec: dict) -> str:
    sessions = f"{rec['n_sessions']} sessions"
    return f"sample of {sessions}" if rec["is_sample"] else f"complete, {sessions}"


def _modes(df: pd.DataFrame, conditions: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if CONTEXT_MODE not in df.columns:
        return ()
    by_condition = df.dropna(subset=[CONTEXT_MODE]).groupby("condition")[CONTEXT_MODE].first()
    modes: dict[str, list[str]] = {}
    for c in conditions:
        if c in by_condition:
            modes.setdefault(str(by_condition[c]), []).append(c)
    return tuple((mode, tuple(cs)) for mode, cs in modes.items())


def leaderboard(m: Marts, benchmark: str = PAPER_BENCHMARK) -> Leaderboard:
    """The benchmark's rows of agg_condition_summary as a model × condition matrix."""
    df = m.extended_condition_summary if benchmark == EXTENDED_BENCHMARK else m.condition_summary
    twice = df[df.duplicated(["model", "condition"], keep=False)]
    if not twice.empty:
        first = twice.iloc[0]
        raise ReportError(
            f"agg_condition_summary: more than one row for benchmark {benchmark}, model {first['model']}, "
            f"condition {first['condition']}; expected one row per model × condition"
        )
    present = set(df["condition"])
    conditions = tuple(c for c in CONDITION_NAMES if c in present) + tuple(sorted(present - set(CONDITION_NAMES)))
    cells = {
        (r["model"], r["condition"]): Cell(
            None if fmt.is_missing(r[VALUE]) else float(r[VALUE]),
            None if fmt.is_missing(r[LOW]) else float(r[LOW]),
            None if fmt.is_missing(r[HIGH]) else float(r[HIGH]),
            _run(r),
        )
        for r in df.to_dict("records")
    }
    models = set(df["model"])

    def rows(names: list[str]) -> tuple[Row, ...]:
        return tuple((model, tuple(cells.get((model, c)) for c in conditions)) for model in names)

    llms = sorted(models - set(BUILTIN_REFERENCES))
    references = [r for r in BUILTIN_REFERENCES if r in models]
    return Leaderboard(benchmark, conditions, rows(llms), rows(references), _modes(df, conditions))
