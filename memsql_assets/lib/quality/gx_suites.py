"""Run the Great Expectations suites kept as JSON in expectations/ against a DataFrame."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from memsql_assets.lib.benchmark.invariants import WHOLE_BENCHMARK_COUNTS, expected_counts
from memsql_assets.lib.paths import REPO_ROOT
from memsql_assets.lib.vocabulary import PHENOMENA, REPORT_SOURCES

EXPECTATIONS_DIR = REPO_ROOT / "expectations"
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")  # offline by construction: no usage telemetry


def gx_params(sessions: int | None = None) -> dict[str, Any]:
    """The `{"$PARAMETER": name}` values of the suites under expectations/: the vocabulary, and the
    counts of the paper benchmark built whole (`sessions` None) or at that size (expected_counts)."""
    return {
        "sources": list(REPORT_SOURCES),
        "session_id_regex": f"^(?:{'|'.join(REPORT_SOURCES)})-[123]-[0-9]{{3}}$",
        "extended_session_id_regex": f"^(?:{'|'.join(REPORT_SOURCES)})-X-[0-9]{{3}}$",
        "phenomena": list(PHENOMENA),
        **expected_counts(sessions),
    }


def _parameters(expectation: dict[str, Any]) -> set[str]:
    return {v["$PARAMETER"] for v in expectation["kwargs"].values() if isinstance(v, dict) and "$PARAMETER" in v}


def sized_suite(suite: dict[str, Any], params: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The suite without the expectations on counts only the whole benchmark has (a sized build's
    params lack them), each invariant text filled with the params; and the left-out invariants,
    stated with the whole benchmark's counts."""
    kept, left_out = [], []
    for expectation in suite["expectations"]:
        meta = dict(expectation.get("meta") or {})
        if _parameters(expectation) & (WHOLE_BENCHMARK_COUNTS - set(params)):
            left_out.append(meta.get("invariant", expectation["type"]).format(**expected_counts()))
            continue
        if "invariant" in meta:
            meta["invariant"] = meta["invariant"].format(**params)
        kept.append({**expectation, "meta": meta})
    return {**suite, "expectations": kept}, left_out


@dataclass
class SuiteReport:
    suite: str
    evaluated: int
    failures: list[str] = field(default_factory=list)
    failing_ids: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    """Invariants on counts only the whole benchmark has, not checked on a sized build."""

    @property
    def success(self) -> bool:
        return not self.failures


def load_suite_dict(name: str, directory: Path = EXPECTATIONS_DIR) -> dict[str, Any]:
    path = directory / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def validate(
    df: pd.DataFrame, suite_name: str, id_column: str, directory: Path = EXPECTATIONS_DIR, sessions: int | None = None
) -> SuiteReport:
    """The suite over `df`; `sessions`: the size the paper benchmark was built at (None: whole)."""
    import great_expectations as gx  # slow import: only when a check actually runs
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    params = gx_params(sessions)
    suite_dict, left_out = sized_suite(load_suite_dict(suite_name, directory), params)
    suite = gx.ExpectationSuite(**suite_dict)
    batch = (
        context.data_sources.add_pandas(f"{suite_name}_source")
        .add_dataframe_asset(suite_name)
        .add_batch_definition_whole_dataframe("whole")
        .get_batch(batch_parameters={"dataframe": df})
    )
    result = batch.validate(
        suite,
        result_format={"result_format": "COMPLETE", "unexpected_index_column_names": [id_column]},
        expectation_parameters=params,  # filled into the {"$PARAMETER": name} kwargs
    )
    report = SuiteReport(suite=suite_name, evaluated=len(result.results), left_out=left_out)
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
