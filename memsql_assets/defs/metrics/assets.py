"""Metrics: the dbt models as assets downstream of turn_results (dbt tests are asset checks), and
the HTML report drawn from the marts."""

import queue
import signal
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
from dagster_dbt import (
    DagsterDbtTranslator,
    DagsterDbtTranslatorSettings,
    DbtCliEventMessage,
    DbtCliInvocation,
    DbtCliResource,
    DbtProject,
    dbt_assets,
)

from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.lib.paths import memsql_home, report_dir
from memsql_assets.lib.report import MARTS, build_report
from memsql_assets.lib.report.dbt_cli import DBT_DIR, DBT_LAUNCHER, dbt_args, dbt_env, ensure_manifest

ensure_manifest(memsql_home())
dbt_project = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)


class MetricsTranslator(DagsterDbtTranslator):
    """Every dbt model in group `metrics`; sources map to `sessions` / `turn_results` through their
    `meta.dagster.asset_key` (dbt_project/models/staging/_sources.yml)."""

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        return "metrics"

    def get_automation_condition(
        self, dbt_resource_props: Mapping[str, Any]
    ) -> dg.AutomationCondition | None:
        # A newly landed turn_results partition (or benchmark) rebuilds the metrics: a full rebuild's
        # data work is small next to dbt's start-up (docs/performance.md).
        return dg.AutomationCondition.eager()


@dbt_assets(
    manifest=dbt_project.manifest_path,
    project=dbt_project,
    dagster_dbt_translator=MetricsTranslator(
        settings=DagsterDbtTranslatorSettings(
            enable_asset_checks=True, enable_duplicate_source_asset_keys=True
        )
    ),
)
def metrics_dbt(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, memsql: MemsqlSettings
) -> Iterator[Any]:
    home = memsql.home_path
    dbt_env(home)
    # One target folder per home: its partial_parse.msgpack holds the home's profile (the DuckDB
    # path), so the next build parses only what changed (a fresh folder per run would parse it all).
    invocation = dbt.cli(dbt_args("build"), context=context, target_path=home / "dbt" / "target")
    for event in read_ahead(invocation):
        yield from event.to_default_asset_events(
            manifest=invocation.manifest,
            dagster_dbt_translator=invocation.dagster_dbt_translator,
            context=context,
            target_path=invocation.target_path,
            project=invocation.project,
        )


def read_ahead(invocation: DbtCliInvocation) -> Iterator[DbtCliEventMessage]:
    """dbt's events as `invocation.stream_raw_events()` gives them, read by a thread as dbt writes
    them. Read in step with Dagster, dbt waits on its full stdout pipe while Dagster stores each
    event (several SQLite commits), so the build and the event log would take turns instead of
    overlapping (docs/performance.md). dbt's failure is raised here; leaving early interrupts dbt."""
    events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()

    def read() -> None:
        try:
            for event in invocation.stream_raw_events():
                events.put(("event", event))
        except BaseException as exc:  # dbt failed (raise_on_error): the step fails with it
            events.put(("error", exc))
        events.put(("end", None))

    reader = threading.Thread(target=read, name="dbt-events", daemon=True)
    reader.start()
    try:
        while (item := events.get())[0] != "end":
            if item[0] == "error":
                raise item[1]
            yield item[1]
    finally:
        if invocation.process.poll() is None:  # the step was interrupted or failed before dbt ended
            invocation.process.send_signal(signal.SIGINT)
            invocation.process.wait(timeout=invocation.termination_timeout_seconds)
        reader.join()


@dg.asset(
    group_name="metrics",
    kinds={"html", "python"},
    deps=[dg.AssetKey(m) for m in MARTS],
    automation_condition=dg.AutomationCondition.eager(),
    description="Static HTML report drawn from the dbt marts: each benchmark's leaderboard (model × condition "
    "heatmap of memory-critical EX with its interval), then collapsible sections of figures and tables "
    "(docs/report.md).",
)
def results_report(context: dg.AssetExecutionContext, memsql: MemsqlSettings) -> dg.MaterializeResult:
    home = memsql.home_path
    paths = build_report(home / "dbt" / "memsql.duckdb", report_dir(home))
    context.log.info(f"report written to {paths.html}")
    metadata: dict[str, Any] = {"report": dg.MetadataValue.path(str(paths.html))}
    metadata.update({f"table_{k}": dg.MetadataValue.md(v) for k, v in paths.markdown.items()})
    metadata.update({f"figure_{k}": dg.MetadataValue.md(v) for k, v in paths.figure_markdown.items()})
    return dg.MaterializeResult(metadata=metadata)


def dbt_resource() -> DbtCliResource:
    return DbtCliResource(project_dir=dbt_project, dbt_executable=str(DBT_LAUNCHER))
