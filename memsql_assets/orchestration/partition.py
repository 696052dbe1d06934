"""One turn_results partition through Dagster, recorded in the instance: in this process (the
embedded default), in a run worker of `memsql run`, or queued on the shared instance (scale-out)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import dagster as dg

from memsql_assets.defs.evaluation.partitions import add_model_partition, evaluation_partitions, partition_key
from memsql_assets.defs.evaluation.resources import HISTORY_TAG, SAMPLE_TAG, evaluation_run_config
from memsql_assets.defs.jobs import EVALUATE_JOBS
from memsql_assets.defs.scale_out_settings import scale_out_enabled
from memsql_assets.defs.without_metrics import defs as evaluation_defs
from memsql_assets.lib.harness.results import output_dir
from memsql_assets.lib.harness.settings import resolve_wave_size
from memsql_assets.lib.memory.plugins import check_conditions
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.paths import memsql_home
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK, History
from memsql_assets.lib.vocabulary import history as resolve_history
from memsql_assets.orchestration.dagster_jobs import QUIET_RUN_CONFIG, observe_models
from memsql_assets.orchestration.outcome import EvaluationRun, decode_run


def evaluate_partition_run(
    instance: dg.DagsterInstance,
    model: str,
    condition: str,
    sessions: int | None = None,
    epochs: int | None = None,
    only_failed: bool = False,
    benchmark: str = PAPER_BENCHMARK,
    retry_errors: bool = False,
    wave_size: int | None = None,
    max_cost_usd: float | None = None,
    history: History | None = None,
) -> EvaluationRun:
    """One partition's Dagster run, ended and decoded. `sessions`, `epochs`, `only_failed`,
    `retry_errors`, `wave_size`, `max_cost_usd`, `history`: the evaluation resource's fields of that name, passed
    as the run's config (validated by the caller; None: the resource's default). The job comes from the
    definitions without the dbt metrics: no evaluation process pays for importing those."""
    told = resolve_history(condition, history)  # unknown condition: a clear error before anything runs
    check_conditions([condition])  # its memory imports and takes its params: else one line
    load_registry().get(model)  # unknown model: names the registry file
    if add_model_partition(instance, model):
        observe_models(instance)
    resources = evaluation_run_config(
        sessions=sessions,
        epochs=epochs,
        only_failed=only_failed or None,
        retry_errors=retry_errors or None,
        wave_size=wave_size,
        max_cost_usd=max_cost_usd,
        history=history.value if history else None,
    )
    run_config = {**QUIET_RUN_CONFIG, "resources": resources} if resources else QUIET_RUN_CONFIG
    key = partition_key(model, condition)
    tags = {SAMPLE_TAG: str(sessions)} if sessions is not None else {}
    if told != History.MODEL:
        tags[HISTORY_TAG] = told.value
    job = EVALUATE_JOBS[benchmark]
    if scale_out_enabled():  # MEMSQL_PROFILE=scale-out: queued on the shared instance, run by Celery workers
        from memsql_assets.defs.scale_out import submit_evaluation

        tags.update(evaluation_partitions.get_tags_for_partition_key(key))
        with stdout_to_stderr():  # the code server it starts logs to stdout, which carries the summary
            run_id = submit_evaluation(instance, job, run_config, tags)
    else:
        result = evaluation_defs.resolve_job_def(job).execute_in_process(
            instance=instance, partition_key=key, raise_on_error=False, run_config=run_config, tags=tags or None
        )
        run_id = result.run_id
    summary_dir = output_dir(memsql_home(), model, condition, sessions, benchmark, told)
    return decode_run(instance, run_id, model, condition, benchmark, summary_dir)


def wave_size_now(model: str, requested: int | None, reach: int | None = None) -> int:
    """The W a C/D partition of `model` would run with now (`requested`, else its concurrency, at most
    `reach`: the benchmark's schedule.history_reach)."""
    return resolve_wave_size(requested, load_registry().get(model).max_concurrency, reach)


def evaluate_here(
    model: str,
    condition: str,
    epochs: int | None,
    benchmark: str,
    wave_size: int | None,
    max_cost_usd: float | None = None,
    history: History | None = None,
) -> EvaluationRun:
    """One partition in a run worker of `memsql run` (its environment names the same instance);
    `max_cost_usd`: the partition's live cap (`memsql run --max-cost`; None: the registry's)."""
    with dg.DagsterInstance.get() as instance:
        return evaluate_partition_run(
            instance,
            model,
            condition,
            epochs=epochs,
            benchmark=benchmark,
            wave_size=wave_size,
            max_cost_usd=max_cost_usd,
            history=history,
        )


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """stdout carries the summary alone (text or --json): a subprocess's output goes to stderr meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
