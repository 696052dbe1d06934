"""The reference models `memsql run` evaluates on each benchmark, and under which conditions.

None: every condition of the conditions file marked for the main run and without tools; those marked
`main_run: false` are left to `memsql eval`. The probes read the prompt, so each condition has its own
figure. paraphrase and guess-probe answer the same whatever memory holds: A gives their figures (the
comparator check, the floor), and `memsql eval` runs them anywhere else. On the paper's benchmark gold
checks the harness under every condition, and the reference agent the conditions with tools (T and E:
AgentSM's steps saved, model-free) on its registry entry's sample of sessions; on the extended one, A
checks its ground truths and reader-probe measures the conditions.
"""

from __future__ import annotations

from collections.abc import Sequence

from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.memory.plugins import check_conditions
from memsql_assets.lib.sources.config import load_benchmarks
from memsql_assets.lib.vocabulary import (
    EXTENDED_BENCHMARK,
    FLOOR_CONDITION,
    GUESS_PROBE,
    PAPER_BENCHMARK,
    REFERENCE_AGENT,
    REFERENCE_MODELS,
)

Cell = tuple[str, str]  # (model, condition)

AGENT_RUN_CONDITIONS: tuple[str, ...] = tuple(n for n, c in CONDITIONS.items() if c.tools and c.main_run)
FLOOR_ONLY_MODELS = ("paraphrase", GUESS_PROBE)
RUN_MODELS: dict[str, dict[str, tuple[str, ...] | None]] = {
    PAPER_BENCHMARK: {
        **{m: (FLOOR_CONDITION,) if m in FLOOR_ONLY_MODELS else None for m in REFERENCE_MODELS},
        REFERENCE_AGENT: AGENT_RUN_CONDITIONS,
    },
    EXTENDED_BENCHMARK: {"gold": (FLOOR_CONDITION,), GUESS_PROBE: (FLOOR_CONDITION,), "reader-probe": None},
}


def main_run_cells(benchmark: str, conditions: Sequence[str]) -> list[Cell]:
    """The (model, condition) partitions `memsql run` evaluates on `benchmark`."""
    plain = [c for c in conditions if CONDITIONS[c].main_run and not CONDITIONS[c].tools]
    return [(m, c) for m, only in RUN_MODELS[benchmark].items() for c in conditions if c in (only or plain)]


def chosen_cells() -> dict[str, list[Cell]]:
    """The partitions `memsql run` evaluates, per benchmark the sources file chooses. Checks first that
    every condition's memory imports and takes its params and that the benchmarks are known: else one
    line, nothing run (and nothing imported that writes to the data directory)."""
    check_conditions()
    return {b: main_run_cells(b, CONDITIONS) for b in load_benchmarks()}
