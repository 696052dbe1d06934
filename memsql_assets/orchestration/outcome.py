"""One partition run's outcome, decoded once for both paths (a run in this process, a run queued on
the scale-out instance): its Dagster run, its checks, its summary or its failure's cause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import BaseModel, ConfigDict

from memsql_assets.lib.harness.summary import PartitionSummary, read_summary
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK

UP_TO_DATE = "up to date"


class EvaluationRun(BaseModel):
    """What `memsql eval` and `memsql run` report for one partition. It crosses the run worker's
    pipe as is; `memsql eval --json` prints it flat (`as_json`)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    model: str
    """The registry key of the evaluated model."""
    condition: str
    """The memory condition."""
    benchmark: str = PAPER_BENCHMARK
    """The benchmark evaluated."""
    success: bool
    """The run succeeded, published its summary and every check passed."""
    run_id: str | None = None
    """The Dagster run (None: not run)."""
    checks: dict[str, bool] = {}
    """The run's asset checks: passed or not."""
    error: str | None = None
    """Why it failed or was not run, in one line."""
    skipped: str | None = None
    """Why it was not run although it has a summary (`up to date`)."""
    why: str | None = None
    """Why `memsql run` evaluated it (None: current)."""
    summary: PartitionSummary | None = None
    """The partition's published summary."""

    def as_json(self) -> dict[str, Any]:
        """The summary's fields and the run's, in one object (`--json`)."""
        run = self.model_dump(mode="json", exclude={"summary"}, exclude_none=True)
        return {**(self.summary.model_dump(mode="json") if self.summary else {}), **run}


def step_failure(instance: dg.DagsterInstance, run_id: str) -> str | None:
    """The first failed step's cause, in one line (the run's page in the UI has the rest)."""
    for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_FAILURE):
        error = record.dagster_event.event_specific_data.error
        cause = error.cause or error
        return cause.message.strip().splitlines()[-1]
    return None


def check_results(instance: dg.DagsterInstance, run_id: str) -> dict[str, bool]:
    records = instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    data = [r.dagster_event.event_specific_data for r in records]
    return {d.check_name: d.passed for d in data}


def decode_run(
    instance: dg.DagsterInstance, run_id: str, model: str, condition: str, benchmark: str, summary_dir: Path
) -> EvaluationRun:
    """The ended run `run_id` of one partition, whose summary is published in `summary_dir`."""
    run = instance.get_run_by_id(run_id)
    status = run.status if run is not None else dg.DagsterRunStatus.NOT_STARTED
    checks = check_results(instance, run_id)
    summary = read_summary(summary_dir) if status == dg.DagsterRunStatus.SUCCESS else None
    error = None
    if summary is None:
        error = step_failure(instance, run_id) or f"run {run_id} ended {status.value} without a summary"
    return EvaluationRun(
        model=model,
        condition=condition,
        benchmark=benchmark,
        run_id=run_id,
        checks=checks,
        error=error,
        summary=summary,
        success=summary is not None and all(checks.values()),
    )
