"""Automatic re-evaluation: a sensor for newly registered models, a schedule for stale partitions."""

import dagster as dg

from memsql_assets.defs.evaluation.partitions import condition_partitions, model_partitions, partition_key
from memsql_assets.defs.evaluation.resources import EvaluationSettings
from memsql_assets.defs.jobs import EVALUATE_JOB
from memsql_assets.defs.resources import model_api_keys
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.harness.evaluate import EvalSettings, partition_staleness
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.paths import memsql_home


@dg.sensor(
    job_name=EVALUATE_JOB,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Syncs models.yaml to the `model` dynamic partitions and requests every condition of each "
    "newly added model that is available (API key set, weights present).",
)
def model_registry_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    try:
        registry = load_registry()
    except MemsqlError as exc:
        return dg.SkipReason(f"model registry is invalid: {exc}")
    known = set(context.instance.get_dynamic_partitions(model_partitions.name))
    new = [k for k in registry.enabled_keys() if k not in known]
    if not new:
        return dg.SkipReason("no new models in the registry")
    runs = []
    for key in new:
        available, reason = registry.available(key, model_api_keys(registry))
        if not available:
            context.log.info(f"model {key} added as a partition but not run: {reason}")
            continue
        runs += [
            dg.RunRequest(partition_key=partition_key(key, c), tags={"memsql/trigger": "new-model"})
            for c in condition_partitions.get_partition_keys()
        ]
    return dg.SensorResult(
        dynamic_partitions_requests=[model_partitions.build_add_request(new)], run_requests=runs
    )


def stale_partitions(
    instance: dg.DagsterInstance, settings: EvalSettings | None = None
) -> list[tuple[str, str, str]]:
    """(model, condition, why) for each available model's partition that is missing or out of date.

    Out of date: computed from another benchmark, source data, model configuration (litellm id,
    params, reasoning), harness code, evaluation settings or trajectory store than the current ones.
    """
    home = memsql_home()
    registry = load_registry()
    out = []
    for model in instance.get_dynamic_partitions(model_partitions.name):
        if model not in registry.entries or not registry.available(model, model_api_keys(registry))[0]:
            continue
        for condition in condition_partitions.get_partition_keys():
            why = partition_staleness(home, registry.get(model), condition, settings)
            if why:
                out.append((model, condition, why))
    return out


@dg.schedule(
    job_name=EVALUATE_JOB,
    cron_schedule="0 3 * * *",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Nightly: re-evaluates every partition whose result is missing or stale (benchmark, source "
    "data, model configuration, harness code, evaluation settings or trajectory store changed).",
)
def reevaluate_stale_partitions(context: dg.ScheduleEvaluationContext, evaluation: EvaluationSettings):
    try:
        stale = stale_partitions(context.instance, evaluation.settings())
    except (MemsqlError, FileNotFoundError) as exc:
        return dg.SkipReason(f"cannot assess staleness: {exc}")
    if not stale:
        return dg.SkipReason("every partition is up to date")
    return [
        dg.RunRequest(partition_key=partition_key(m, c), tags={"memsql/trigger": f"stale: {why}"})
        for m, c, why in stale
    ]
