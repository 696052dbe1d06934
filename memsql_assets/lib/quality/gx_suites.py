"""Run the Great Expectations suites kept as JSON in expectations/ against a DataFrame."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from memsql_assets.lib.paths import REPO_ROOT
from memsql_assets.lib.vocabulary import PHENOMENA, REPORT_SOURCES

EXPECTATIONS_DIR = REPO_ROOT / "expectations"
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")  # offline by construction: no usage telemetry


def gx_params() -> dict[str, Any]:
    """The `{"$PARAMETER": name}` values of the suites under expectations/."""
    return {
        "sources": list(REPORT_SOURCES),
        "session_id_regex": f"^(?:{'|'.join(REPORT_SOURCES)})-[123]-[0-9]{{3}}$",
        "extended_session_id_regex": f"^(?:{'|'.join(REPORT_SOURCES)})-X-[0-9]{{3}}$",
        "phenomena": list(PHENOMENA),
    }


@dataclass
class SuiteReport:
    suite: str
    evaluated: int
    failures: list[str] = field(default_factory=list)
    failing_ids: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return not self.failures


def load_suite_dict(name: str, directory: Path = EXPECTATIONS_DIR) -> dict[str, Any]:
    path = directory / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def validate(
    df: pd.DataFrame, suite_name: str, id_column: str, directory: Path = EXPECTATIONS_DIR
) -> SuiteReport:
    import great_expectations as gx  # slow import: only when a check actually runs
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    suite = gx.ExpectationSuite(**load_suite_dict(suite_name, directory))
    batch = (
        context.data_sources.add_pandas(f"{suite_name}_source")
        .add_dataframe_asset(suite_name)
        .add_batch_definition_whole_dataframe("whole")
        .get_batch(batch_parameters={"dataframe": df})
    )
    result = batch.validate(
        suite,
        result_format={"result_format": "COMPLETE", "unexpected_index_column_names": [id_column]},
        expectation_parameters=gx_params(),  # the vocabulary, filled into {"$PARAMETER": name} kwargs
    )
    report = SuiteReport(suite=suite_name, evaluated=len(result.results))
    for r in result.results:
        if r.success:
            continue
        cfg = r.expectation_config
        column = cfg.kwargs.get("column") or cfg.kwargs.get("column_list") or "table"
        invariant = (cfg.meta or {}).get("invariant", cfg.type)
        observed = r.result.get("observed_value")
        ids = [
            str(row.get(id_column))
            for row in (r.result.get("unexpected_index_list") or [])
            if isinstance(row, dict)
        ]
        detail = f"observed {observed}" if observed is not None else f"{len(ids)} failing rows"
        if ids:
            detail += f": {', '.join(ids[:10])}{' …' if len(ids) > 10 else ''}"
        report.failures.append(f"{invariant} [{cfg.type} on {column}]: {detail}")
        report.failing_ids.extend(ids)
    return report
