"""The leaderboard of one benchmark: models as rows, conditions as columns, memory-critical EX with its
95 % interval in each cell, the evaluated LLMs apart from the reference models. On the extended
benchmark each cell holds two figures (DESIGN decision 21): memory-critical EX within a session (the
turns not tagged cross-session) and EX on the cross-session turns, each with its interval over turns,
and the contaminated and stale-state turns beside them.

The report draws it as a heatmap (page.py); its Table (fmt.py) is the same cells for Dagster's
markdown and a terminal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from memsql_assets.lib.models.builtin_names import BUILTIN_NAMES
from memsql_assets.lib.report import fmt
from memsql_assets.lib.report.fmt import Table
from memsql_assets.lib.report.marts import CONDITION_NAMES, Marts, ReportError
from memsql_assets.lib.vocabulary import CROSS_SESSION_NOTE, EXTENDED_BENCHMARK, PAPER_BENCHMARK

# The registry's offline reference models (kind builtin), in its order: measuring sticks, not contestants.
BUILTIN_REFERENCES: tuple[str, ...] = BUILTIN_NAMES["builtin"]
VALUE, LOW, HIGH = "ex_memory_critical_pct", "ex_memory_critical_ci_lo_pct", "ex_memory_critical_ci_hi_pct"
WITHIN = ("ex_within_session_pct", "ex_within_session_ci_lo_pct", "ex_within_session_ci_hi_pct")
ACROSS = ("ex_cross_session_pct", "ex_cross_session_ci_lo_pct", "ex_cross_session_ci_hi_pct")
# A column the marts may carry: the memory context a condition ran with (annotated / observed).
CONTEXT_MODE = "context_mode"


@dataclass(frozen=True)
class Cell:
    """One partition's memory-critical EX (%), its 95 % interval, and what it ran on."""

    value: float | None
    low: float | None
    high: float | None
    run: str  # "complete, 30 sessions" or "sample of 12 sessions"
    across: Cell | None = None  # extended benchmark: EX on the cross-session turns (value is then `within`)
    contaminated: int = 0  # extended benchmark: turns that took another analyst's value
    contaminated_across: int = 0  # of them, cross-session turns
    stale: int = 0  # extended benchmark: turns answered with an overwritten value

    @property
    def value_text(self) -> str:
        return fmt.pct(self.value)

    @property
    def interval_text(self) -> str:
        return fmt.interval(self.low, self.high)

    @property
    def counts_text(self) -> str:
        return f"{self.contaminated} contaminated ({self.contaminated_across} across sessions), {self.stale} stale"

    def text(self) -> str:
        """"value (low–high)", and on the extended benchmark "within … | across … · counts"."""
        own = f"{self.value_text} ({self.interval_text})"
        if self.across is None:
            return own
        return f"{own} | {self.across.value_text} ({self.across.interval_text}) · {self.counts_text}"


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
    def split(self) -> bool:
        """Whether each cell holds the within-session and the cross-session figure (the extended benchmark)."""
        return self.benchmark == EXTENDED_BENCHMARK

    @property
    def title(self) -> str:
        if self.split:
            return f"{self.benchmark.capitalize()} benchmark: memory-critical EX % within a session | EX % across sessions"
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
        if self.split:
            text = (
                "Each cell: EX % within a session above EX % across sessions, each with its 95 % interval "
                "(Wilson, the unit: turns); under them the contaminated turns (in brackets, those across "
                "sessions) and the stale-state turns; – not evaluated."
            )
        if not self.modes:
            return text
        if len(self.modes) == 1:
            return f"{text} Context: {self.modes[0][0]}."
        return f"{text} Context: " + "; ".join(f"{mode} ({', '.join(cs)})" for mode, cs in self.modes) + "."

    def table(self) -> Table:
        """The same cells as text: "value (low–high)"."""

        def text(cell: Cell | None) -> str:
            return fmt.MISSING if cell is None else cell.text()

        rows = tuple(
            (model, kind, *(text(c) for c in cells))
            for kind, block in (("LLM", self.llms), ("reference", self.references))
            for model, cells in block
        )
        note = " ".join((self.caption(), *CROSS_SESSION_NOTE)) if self.split else self.caption()
        return Table(self.key, self.title, ("model", "kind", *self.conditions), rows, note)


def _run(rec: dict) -> str:
    sessions = f"{rec['n_sessions']} sessions"
    return f"sample of {sessions}" if rec["is_sample"] else f"complete, {sessions}"


def _figure(rec: dict, columns: tuple[str, str, str], run: str) -> Cell:
    value, low, high = (None if fmt.is_missing(rec[c]) else float(rec[c]) for c in columns)
    return Cell(value, low, high, run)


def _cell(rec: dict, split: bool) -> Cell:
    """A partition's cell: memory-critical EX, or within | across with the counts (`split`)."""
    if not split:
        return _figure(rec, (VALUE, LOW, HIGH), _run(rec))
    within = _figure(rec, WITHIN, _run(rec))
    columns = {"contaminated": "n_contaminated", "contaminated_across": "n_cross_session_contaminated", "stale": "n_stale_state"}
    counts = {k: int(0 if fmt.is_missing(rec[c]) else rec[c]) for k, c in columns.items()}
    return dataclasses.replace(within, across=_figure(rec, ACROSS, within.run), **counts)


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
    split = benchmark == EXTENDED_BENCHMARK
    cells = {(r["model"], r["condition"]): _cell(r, split) for r in df.to_dict("records")}
    models = set(df["model"])

    def rows(names: list[str]) -> tuple[Row, ...]:
        return tuple((model, tuple(cells.get((model, c)) for c in conditions)) for model in names)

    llms = sorted(models - set(BUILTIN_REFERENCES))
    references = [r for r in BUILTIN_REFERENCES if r in models]
    return Leaderboard(benchmark, conditions, rows(llms), rows(references), _modes(df, conditions))
