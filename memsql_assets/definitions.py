"""The one Definitions object of the project (workspace.yaml loads this module)."""

import dagster as dg

from memsql_assets.defs.benchmark.assets import profiles, sessions
from memsql_assets.defs.benchmark.checks import benchmark_checks
from memsql_assets.defs.evaluation.assets import semantic_memory, turn_results
from memsql_assets.defs.evaluation.automation import automation_sensor, model_registry, model_registry_sensor
from memsql_assets.defs.evaluation.resources import EvaluationSettings
from memsql_assets.defs.jobs import (
    evaluate_job,
    main_job,
    metrics_job,
    observe_models_job,
    observe_sources_job,
)
from memsql_assets.defs.metrics.assets import dbt_resource, metrics_dbt, results_report
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
        profiles,
        sessions,
        semantic_memory,
        synthetic_questions,
        trajectory_store,
        trajectory_coverage,
        turn_results,
        metrics_dbt,
        results_report,
    ],
    asset_checks=benchmark_checks,
    jobs=[main_job, evaluate_job, metrics_job, observe_sources_job, observe_models_job],
    sensors=[model_registry_sensor, automation_sensor],
    executor=run_executor(),  # None: Dagster's default; the scale-out profile's Celery executor
    resources={
        "memsql": MemsqlSettings(),
        "evaluation": EvaluationSettings(),
        "trajectories": TrajectorySettings(),
        "dbt": dbt_resource(),
    },
)
