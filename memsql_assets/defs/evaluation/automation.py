"""Automatic (re-)evaluation, decided by Dagster: which models are partitions, what each model's
configuration is, and when a turn_results partition is materialized.

- The `model` partitions are the registry's runnable models (enabled, and available here: API key
  set, weights present). The sensor adds a model when it becomes runnable (a key set later included)
  and removes it when it is disabled, unavailable or gone, so automation never requests it.
- `model_registry` observes each model's configuration (litellm id, params, reasoning) as a data
  version: an edited entry shows in the UI as a new data version and marks its partitions stale.
- `condition_registry` does the same for each condition of the conditions file (its memory
  implementation, parameters, tools, a plug-in's source).
- `turn_results` is materialized when a partition is missing, when the harness code version changes,
  or when an upstream data version changes (benchmark, sources, memories, the model's configuration).
"""

from __future__ import annotations

import dagster as dg

from memsql_assets.defs.evaluation.partitions import (
    add_model_partition,
    condition_partitions,
    evaluation_partitions,
    model_partitions,
)
from memsql_assets.defs.jobs import OBSERVE_CONDITIONS_JOB, OBSERVE_MODELS_JOB, TURN_RESULTS
from memsql_assets.defs.planning import DATA_VERSION_TAG
from memsql_assets.defs.resources import model_api_keys
from memsql_assets.lib.code_versions import digest
from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.memory.plugins import applies
from memsql_assets.lib.models.registry import Registry, load_registry
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK


def runnable_models(registry: Registry) -> list[str]:
    """Enabled registry entries that can run here (API key set, through `dg.EnvVar`; weights present)."""
    keys = model_api_keys(registry)
    return [k for k in registry.enabled_keys() if registry.available(k, keys)[0]]


def registry_versions(registry: Registry, keys: list[str]) -> dict[str, str]:
    return {k: registry.get(k).fingerprint() for k in keys if k in registry.entries}


@dg.observable_source_asset(
    name="model_registry",
    group_name="evaluation",
    partitions_def=model_partitions,
    description="Each runnable model's entry in models.yaml (litellm id, provider params, reasoning config) as a "
    "data version per `model` partition: editing an entry marks that model's turn_results partitions stale.",
)
def model_registry(context: dg.AssetExecutionContext) -> dg.DataVersionsByPartition:
    registry = load_registry()
    keys = list(context.instance.get_dynamic_partitions(model_partitions.name))
    return dg.DataVersionsByPartition(
        {k: dg.DataVersion(v) for k, v in registry_versions(registry, keys).items()}
    )


@dg.observable_source_asset(
    name="condition_registry",
    group_name="evaluation",
    partitions_def=condition_partitions,
    description="Each condition of the conditions file (conditions.yaml, and MEMSQL_CONDITIONS_FILE's) as a data "
    "version per `condition` partition: its memory implementation, parameters and tools, and a plug-in's source. "
    "Editing a condition, or upgrading its plug-in, marks that condition's turn_results partitions stale.",
)
def condition_registry(context: dg.AssetExecutionContext) -> dg.DataVersionsByPartition:
    return dg.DataVersionsByPartition({name: dg.DataVersion(v) for name, v in condition_versions().items()})


def observe_conditions(instance: dg.DagsterInstance) -> None:
    """What the observation job records, without a run: each condition's data version. `memsql run`
    does this first, where a whole Dagster run for a handful of events would be most of the work."""
    for name, version in condition_versions().items():
        instance.report_runless_asset_event(
            dg.AssetObservation("condition_registry", partition=name, tags={DATA_VERSION_TAG: version})
        )


def condition_versions() -> dict[str, str]:
    from memsql_assets.lib.memory.plugins import condition_fingerprint

    return {name: condition_fingerprint(c) for name, c in CONDITIONS.items()}


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    job_name=OBSERVE_CONDITIONS_JOB,
    description="Observes `condition_registry` whenever a condition of the conditions file changes (its memory, "
    "parameters, tools, a plug-in's source); the automation condition of turn_results then re-evaluates that "
    "condition's partitions.",
)
def condition_registry_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    try:
        fingerprint = digest(condition_versions())
    except MemsqlError as exc:
        return dg.SkipReason(f"conditions file is invalid: {exc}")
    if fingerprint == context.cursor:
        return dg.SkipReason("the conditions are unchanged")
    return dg.SensorResult(run_requests=[dg.RunRequest()], cursor=fingerprint)


def sync_model_partitions(instance: dg.DagsterInstance, registry: Registry) -> tuple[list[str], list[str]]:
    """Make the `model` partitions exactly the runnable models; returns (added, removed)."""
    runnable = set(runnable_models(registry))
    known = set(instance.get_dynamic_partitions(model_partitions.name))
    added = [model for model in sorted(runnable - known) if add_model_partition(instance, model)]
    removed = sorted(known - runnable)
    for key in removed:
        instance.delete_dynamic_partition(model_partitions.name, key)
    return added, removed


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    job_name=OBSERVE_MODELS_JOB,
    description="Keeps the `model` partitions equal to the runnable models of models.yaml (enabled, API key set, "
    "weights present) and observes `model_registry` whenever an entry's configuration changes; the automation "
    "condition of turn_results then evaluates what is missing or stale.",
)
def model_registry_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    try:
        registry = load_registry()
    except MemsqlError as exc:
        return dg.SkipReason(f"model registry is invalid: {exc}")
    runnable = set(runnable_models(registry))
    known = set(context.instance.get_dynamic_partitions(model_partitions.name))
    added, removed = sorted(runnable - known), sorted(known - runnable)
    for key in sorted(set(registry.enabled_keys()) - runnable):
        context.log.info(f"model {key} is not a partition: {registry.available(key, model_api_keys(registry))[1]}")
    fingerprint = digest(registry_versions(registry, sorted(runnable)))
    requests = []
    if added:
        requests.append(model_partitions.build_add_request(added))
    for key in removed:
        requests.append(model_partitions.build_delete_request([key]))
    observe = fingerprint != context.cursor
    if not requests and not observe:
        return dg.SkipReason("the model partitions and their configurations are unchanged")
    return dg.SensorResult(
        dynamic_partitions_requests=requests,
        run_requests=[dg.RunRequest()] if observe else [],
        cursor=fingerprint,
    )


def over_cost_cap(
    registry: Registry, model: str, condition: str, benchmark: str = PAPER_BENCHMARK
) -> str | None:
    """Why the automation must not evaluate this partition: its run's cost bound exceeds the model's
    `max_cost_usd` (None: within it, or the entry sets no cap)."""
    from memsql_assets.lib.harness.plan import plan_partition
    from memsql_assets.lib.paths import memsql_home

    entry = registry.entries.get(model)
    if entry is None or entry.max_cost_usd is None:
        return None
    plan = plan_partition(memsql_home(), entry, condition, benchmark=benchmark)
    if not plan.exceeds(entry.max_cost_usd):
        return None
    return f"{plan.describe()}: above the registry's max_cost_usd ${entry.max_cost_usd:,.2f}"


class AppliesToBenchmark(dg.AutomationCondition):
    """The candidate partitions whose condition applies to the asset's benchmark: a memory scoped to
    the analyst never runs where the sessions name no analyst (lib/memory/plugins.py `applies`)."""

    @property
    def name(self) -> str:
        return "applies_to_benchmark"

    def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:
        candidates = context.candidate_subset
        if candidates.is_empty:
            return dg.AutomationResult(context, candidates)
        benchmark = next(b for b, name in TURN_RESULTS.items() if name == context.key.to_user_string())
        left_out = {
            key
            for key in candidates.expensively_compute_partition_keys()
            if not applies(CONDITIONS[_dimensions(key)["condition"]], benchmark)
        }
        if not left_out:
            return dg.AutomationResult(context, candidates)
        skipped = candidates.compute_intersection_with_partition_keys(left_out)
        return dg.AutomationResult(context, candidates.compute_difference(skipped))


def _dimensions(key: str) -> dict[str, str]:
    return evaluation_partitions.get_partition_key_from_str(key).keys_by_dimension


class WithinCostCap(dg.AutomationCondition):
    """The candidate partitions whose run stays within their model's `max_cost_usd`; each one left
    out is logged with its bound (the count reads the request store, so only capped models pay it)."""

    @property
    def name(self) -> str:
        return "within_cost_cap"

    def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:
        candidates = context.candidate_subset
        if candidates.is_empty:
            return dg.AutomationResult(context, candidates)
        registry = load_registry()
        asset = context.key.to_user_string()
        benchmark = next(b for b, name in TURN_RESULTS.items() if name == asset)
        over = set()
        for key in candidates.expensively_compute_partition_keys():
            dims = _dimensions(key)
            reason = over_cost_cap(registry, dims["model"], dims["condition"], benchmark)
            if reason is not None:
                context.log.info(f"{asset} {key} not launched: {reason}")
                over.add(key)
        if not over:
            return dg.AutomationResult(context, candidates)
        skipped = candidates.compute_intersection_with_partition_keys(over)
        return dg.AutomationResult(context, candidates.compute_difference(skipped))


# Missing (a new or newly runnable model), a new harness code version, or a new upstream data version;
# never while an input is missing or being rebuilt. Requests fire once per change: a failed run is
# not retried in a loop.
EVALUATE_WHEN_OUT_OF_DATE = (
    (
        dg.AutomationCondition.newly_missing()
        | dg.AutomationCondition.code_version_changed()
        | dg.AutomationCondition.any_deps_match(dg.AutomationCondition.data_version_changed())
    ).since_last_handled()
    & ~dg.AutomationCondition.any_deps_missing()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
    & AppliesToBenchmark()
    & WithinCostCap()
).with_label(
    "missing, new code version or new input data version, its condition applying to the benchmark, "
    "within the model's max_cost_usd"
)

automation_sensor = dg.AutomationConditionSensorDefinition(
    "memsql_automation",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Evaluates the automation conditions: turn_results partitions that are missing or out of date, "
    "then the dbt metrics and the report downstream of them.",
)
