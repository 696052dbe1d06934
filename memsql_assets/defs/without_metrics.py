"""The lineage up to the evaluations: every definition but the dbt metrics and the report.

`memsql eval` and the worker processes of `memsql run` execute their jobs from here: importing
dagster-dbt and building the dbt assets from the manifest is a cost every such process would pay, and
none of their jobs touches a dbt asset. memsql_assets.definitions adds the metrics to this."""

import dagster as dg

from memsql_assets.defs.benchmark.assets import profiles, sessions
from memsql_assets.defs.benchmark.checks import benchmark_checks
from memsql_assets.defs.benchmark.extended import extended_checks, extended_sessions
from memsql_assets.defs.evaluation.assets import extended_turn_results, semantic_memory, turn_results
from memsql_assets.defs.evaluation.automation import (
    condition_registry,
    condition_registry_sensor,
    model_registry,
    model_registry_sensor,
)
from memsql_assets.defs.evaluation.resources import EvaluationSettings
from memsql_assets.defs.jobs import (
    evaluate_job,
    extended_evaluate_job,
    main_job,
    observe_conditions_job,
    observe_models_job,
    observe_sources_job,
)
from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.defs.scale_out import run_executor
from memsql_assets.defs.sources.assets import raw_source_assets, source_assets
from memsql_assets.defs.trajectories.assets import synthetic_questions, trajectory_coverage, trajectory_store
from memsql_assets.defs.trajectories.resources import TrajectorySettings

defs = dg.Definitions(
    assets=[
        *raw_source_assets,
        *source_assets,
        model_registry,
        condition_registry,
        profiles,
        sessions,
        extended_sessions,
        semantic_memory,
        synthetic_questions,
        trajectory_store,
        trajectory_coverage,
        turn_results,
        extended_turn_results,
    ],
    asset_checks=[*benchmark_checks, *extended_checks],
    jobs=[
        main_job,
        evaluate_job,
        extended_evaluate_job,
        observe_sources_job,
        observe_models_job,
        observe_conditions_job,
    ],
    sensors=[model_registry_sensor, condition_registry_sensor],
    executor=run_executor(),  # None: Dagster's default; the scale-out profile's Celery executor
    resources={
        "memsql": MemsqlSettings(),
        "evaluation": EvaluationSettings(),
        "trajectories": TrajectorySettings(),
    },
)
