"""What a partition run would ask of its model, and the partitions `memsql run` leaves out because
their cost bound exceeds `--max-cost` (lib/harness/plan.py computes each plan)."""

from __future__ import annotations

from collections.abc import Callable

from memsql_assets.lib.conditions import get_condition
from memsql_assets.lib.harness.plan import RunPlan, StoreIndex, answered_by_config, plan_partition
from memsql_assets.lib.history import History
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import requests_dir
from memsql_assets.lib.paths import memsql_home
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK
from memsql_assets.orchestration.outcome import EvaluationRun
from memsql_assets.orchestration.selection import Cell


def plan_for(
    model: str,
    condition: str,
    sessions: int | None = None,
    epochs: int | None = None,
    retry_errors: bool = False,
    answered: StoreIndex | None = None,
    only_failed: bool = False,
    benchmark: str = PAPER_BENCHMARK,
    history: History = History.MODEL,
) -> RunPlan:
    """What evaluating `model` under `condition` with `history` would ask of the model now."""
    get_condition(condition)  # unknown condition: a clear error
    entry = load_registry().get(model)
    return plan_partition(
        memsql_home(), entry, condition, sessions, epochs, retry_errors, answered, only_failed, benchmark,
        history=history,
    )


def answered_now(history: History = History.MODEL) -> StoreIndex:
    """The request store's answered cells of `history` by model configuration, read once for a run's plans."""
    return answered_by_config(requests_dir(memsql_home()), history=history)


def main_run_plans(cells: dict[str, list[Cell]]) -> list[RunPlan]:
    """`memsql run --dry-run`: what each partition of each benchmark would ask of its model now."""
    answered = answered_now()
    return [plan_for(m, c, answered=answered, benchmark=b) for b, bc in cells.items() for m, c in bc]


def is_builtin(model: str) -> bool:
    return load_registry().get(model).kind == "builtin"


def over_budget(
    todo: list[Cell],
    epochs: dict[Cell, int | None],
    max_cost: float | None,
    benchmark: str,
    say: Callable[[str], None],
    history: History = History.MODEL,
) -> dict[Cell, EvaluationRun]:
    """The partitions left out because their bound exceeds `max_cost`; each plan is said (a progress
    line) before an API or local model is asked."""
    skipped: dict[Cell, EvaluationRun] = {}
    answered = None
    for m, c in todo:
        if max_cost is None and is_builtin(m):
            continue
        answered = answered_now(history) if answered is None else answered
        plan = plan_for(m, c, epochs=epochs.get((m, c)), answered=answered, benchmark=benchmark, history=history)
        say(f"plan: {plan.describe()}")
        if plan.exceeds(max_cost):
            error = f"not run: its cost bound exceeds --max-cost ${max_cost:,.2f}"
            skipped[(m, c)] = EvaluationRun(model=m, condition=c, benchmark=benchmark, success=False, error=error)
    return skipped
