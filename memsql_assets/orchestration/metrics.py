"""The metrics step of `memsql run`: dbt build and the report through Dagster, where Dagster reports
any of them missing or stale (a turn_results partition with a new data version, a changed dbt model
or report code)."""

from __future__ import annotations

import dagster as dg
from pydantic import BaseModel, ConfigDict

from memsql_assets.defs.evaluation.concurrent_runs import RunWorkerError, in_run_worker
from memsql_assets.defs.jobs import METRICS_JOB
from memsql_assets.defs.planning import out_of_date
from memsql_assets.lib.paths import memsql_home, report_dir
from memsql_assets.lib.report.build import REPORT_FILE, REPORT_SUMMARY_FILE
from memsql_assets.orchestration.dagster_jobs import QUIET_RUN_CONFIG, group_keys, latest_checks
from memsql_assets.orchestration.outcome import EvaluationRun

METRICS_GROUP = "metrics"


class MetricsOutcome(BaseModel):
    """The metrics step's run."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    success: bool
    """The metrics job succeeded (or had nothing to do)."""
    skipped: bool
    """Nothing was out of date."""
    run_id: str | None = None
    """The metrics job's Dagster run."""
    failed_dbt_tests: list[str] = []
    """dbt tests (asset checks) whose latest evaluation failed."""
    html: str
    """The report's path."""
    summary_text: str = ""
    """The report's text summary (report/summary.txt)."""
    error: str | None = None
    """Why the step could not run."""


def metrics_after(evaluations: list[EvaluationRun], instance: dg.DagsterInstance, force: bool) -> MetricsOutcome | None:
    """The metrics after the evaluations: in a run worker when any partition ran (the fork server is up
    and has dagster-dbt imported), else here (nothing new: usually only the check)."""
    if not evaluations:
        return None
    if all(e.skipped for e in evaluations):
        return run_metrics(instance, force)
    try:
        return in_run_worker(metrics_here, force)
    except RunWorkerError as exc:
        return MetricsOutcome(success=False, skipped=False, html=str(report_html()), error=str(exc))


def metrics_here(force: bool) -> MetricsOutcome:
    """`run_metrics` in a run worker of `memsql run`, which imported dagster-dbt before it was needed."""
    with dg.DagsterInstance.get() as instance:
        return run_metrics(instance, force)


def report_html() -> str:
    return str(report_dir(memsql_home()) / REPORT_FILE)


def run_metrics(instance: dg.DagsterInstance, force: bool = False) -> MetricsOutcome:
    """dbt build + the report through Dagster, when Dagster reports any of them missing or stale."""
    from memsql_assets.definitions import defs  # with dagster-dbt: imported only when metrics run

    summary_file = memsql_home() / "report" / REPORT_SUMMARY_FILE
    keys = group_keys(defs, (METRICS_GROUP,))
    todo = keys if force else list(out_of_date(instance, defs, keys))
    run_id, success = None, True
    if todo:
        result = defs.resolve_job_def(METRICS_JOB).execute_in_process(
            instance=instance, raise_on_error=False, run_config=QUIET_RUN_CONFIG
        )
        run_id, success = result.run_id, bool(result.success)
    checks = latest_checks(instance, defs, keys)
    return MetricsOutcome(
        success=success,
        skipped=not todo,
        run_id=run_id,
        failed_dbt_tests=sorted(name for name, passed in checks.items() if not passed),
        html=report_html(),
        summary_text=summary_file.read_text(encoding="utf-8") if summary_file.exists() else "",
    )
