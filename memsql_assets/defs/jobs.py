"""Jobs a user launches from the UI or the CLI."""

import dagster as dg

from memsql_assets.defs.evaluation.partitions import evaluation_partitions

MAIN_JOB = "memsql_main"
EVALUATE_JOB = "evaluate"
METRICS_JOB = "metrics"

# The README's main command, first half: every unpartitioned asset of the lineage with its checks.
main_job = dg.define_asset_job(
    MAIN_JOB,
    selection=dg.AssetSelection.groups("sources", "benchmark", "memory", "trajectories"),
    description="Sources -> profiles -> sessions, semantic memory and the trajectory store, with blocking checks.",
)

# One run per (model, condition) partition; the sensor, the schedule, backfills and `memsql eval` use it.
evaluate_job = dg.define_asset_job(
    EVALUATE_JOB,
    selection=dg.AssetSelection.assets("turn_results"),
    partitions_def=evaluation_partitions,
    description="Evaluate one model under one memory condition (a turn_results partition).",
)

# dbt build over every result file, then the report: what the main command ends with.
metrics_job = dg.define_asset_job(
    METRICS_JOB,
    selection=dg.AssetSelection.groups("metrics"),
    description="dbt build (staging -> intermediate -> marts, with tests as checks) and the HTML report.",
)
