"""The reference models `memsql run` evaluates on each benchmark, and under which conditions.

None: every condition of the conditions file marked for the main run on that benchmark and without
tools (`main_run`: true, or a list naming the benchmark; a memory scoped to the analyst only where the
sessions name their analyst, lib/memory/plugins.py `in_main_run`); the others are left to `memsql eval`. The probes read the prompt, so each condition has its own
figure. paraphrase and guess-probe answer the same whatever memory holds: A gives their figures (the
comparator check, the floor), and `memsql eval` runs them anywhere else. On the paper's benchmark gold
checks the harness under every condition, and the reference agent the conditions with tools (T and E:
AgentSM's steps saved, model-free) on its registry entry's sample of sessions; on the extended one, A
checks its ground truths and reader-probe measures the conditions, with its own history and with the
gold one (GOLD_HISTORY_MODELS: the cascade).
"""

from __future__ import annotations

from collections.abc import Sequence

from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.memory.plugins import check_conditions, in_main_run
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


# The models `memsql run` also evaluates with gold history (lib/history.py), per benchmark: their
# cascade under every condition whose memory is the session's own earlier turns as shown, a window or
# its summary (B, B_wm5, H, S), where a turn the model got wrong stays in view. reader-probe on the
# extended benchmark: the instrument of the cascade. The other memories' cascades are `memsql eval
# --history gold`, which keeps command 1 short (docs/performance.md).
GOLD_HISTORY_MODELS: dict[str, tuple[str, ...]] = {EXTENDED_BENCHMARK: ("reader-probe",)}
GOLD_HISTORY_IMPLEMENTATIONS: tuple[str, ...] = ("window", "summary")


def gold_history_cells(benchmark: str, cells: Sequence[Cell]) -> list[Cell]:
    """Of `benchmark`'s main-run partitions, those `memsql run` evaluates with gold history too."""
    models = GOLD_HISTORY_MODELS.get(benchmark, ())
    return [(m, c) for m, c in cells if m in models and CONDITIONS[c].implementation in GOLD_HISTORY_IMPLEMENTATIONS]


def main_run_cells(benchmark: str, conditions: Sequence[str]) -> list[Cell]:
    """The (model, condition) partitions `memsql run` evaluates on `benchmark`."""
    plain = [c for c in conditions if in_main_run(CONDITIONS[c], benchmark) and not CONDITIONS[c].tools]
    return [(m, c) for m, only in RUN_MODELS[benchmark].items() for c in conditions if c in (only or plain)]


def chosen_cells() -> dict[str, list[Cell]]:
    """The partitions `memsql run` evaluates, per benchmark the sources file chooses. Checks first that
    every condition's memory imports and takes its params and that the benchmarks are known: else one
    line, nothing run (and nothing imported that writes to the data directory)."""
    check_conditions()
    return {b: main_run_cells(b, CONDITIONS) for b in load_benchmarks()}
