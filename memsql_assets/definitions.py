"""The one Definitions object of the project (workspace.yaml loads this module): the lineage up to
the evaluations (defs/without_metrics.py), and the dbt metrics and the report on top of it."""

import dagster as dg

from memsql_assets.defs import without_metrics
from memsql_assets.defs.evaluation.automation import automation_sensor
from memsql_assets.defs.jobs import metrics_job
from memsql_assets.defs.metrics.assets import dbt_resource, metrics_dbt, results_report

defs = dg.Definitions.merge(
    without_metrics.defs,
    dg.Definitions(
        assets=[metrics_dbt, results_report],
        jobs=[metrics_job],
        sensors=[automation_sensor],  # its conditions span the whole graph, the metrics included
        resources={"dbt": dbt_resource()},
    ),
)
