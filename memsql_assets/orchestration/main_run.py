"""`memsql run`: observe the inputs, the main job's rounds, then every out-of-date partition of the
chosen benchmarks (selection.py) as concurrent runs, then the metrics; its summary."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from memsql_assets.defs.evaluation import concurrent_runs
from memsql_assets.lib.paths import memsql_home
from memsql_assets.lib.vocabulary import History
from memsql_assets.orchestration.dagster_jobs import observe_inputs, run_main_job, sync_models
from memsql_assets.orchestration.evaluations import (
    Say,
    evaluate_out_of_date,
    gold_histories_out_of_date,
    partitions_out_of_date,
)
from memsql_assets.orchestration.metrics import metrics_after
from memsql_assets.orchestration.outcome import EvaluationRun
from memsql_assets.orchestration.run_summary import RunSummary, build_run_summary
from memsql_assets.orchestration.selection import Cell, gold_history_cells


def run_main(
    instance: dg.DagsterInstance,
    cells: dict[str, list[Cell]],
    say: Say,
    force: bool = False,
    skip_eval: bool = False,
    max_cost: float | None = None,
    wave_size: int | None = None,
    log: Path | None = None,
) -> RunSummary:
    """Everything `memsql run` does, each stage said in one line."""
    say("observing the source configurations")
    observe_inputs(instance)
    # A changed input: evaluations follow, whose run processes fork from the server started here.
    on_work = None if skip_eval else concurrent_runs.start
    benchmarks = tuple(cells)
    main = run_main_job(instance, force, say, on_work=on_work, benchmarks=benchmarks)
    evaluations: list[EvaluationRun] = []
    gold: list[EvaluationRun] = []  # gold-history partitions (selection.GOLD_HISTORY_MODELS)
    if main.success and all(main.checks.values()) and not skip_eval:
        sync_models(instance)
        for b, bc in cells.items():
            why = partitions_out_of_date(instance, bc, force, b)
            evaluations += evaluate_out_of_date(instance, bc, why, max_cost, b, say=say, wave_size=wave_size)
            gc = gold_history_cells(b, bc)
            if gc:
                gwhy = gold_histories_out_of_date(gc, why, force, b)
                gold += evaluate_out_of_date(None, gc, gwhy, max_cost, b, say, wave_size, history=History.GOLD)
    if evaluations:
        say("metrics: dbt build and the report, where Dagster reports them out of date")
    report = metrics_after(evaluations + gold, instance, force)
    say("done")
    return build_run_summary(memsql_home(), main, benchmarks, evaluations, report, log, gold)
