"""Memory seed and evaluation assets: semantic_memory, and turn_results partitioned model × condition."""

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg

from memsql_assets.defs.evaluation.automation import (
    EVALUATE_WHEN_OUT_OF_DATE,
    condition_registry,
    model_registry,
)
from memsql_assets.defs.evaluation.partitions import evaluation_partitions
from memsql_assets.defs.evaluation.resources import EvaluationSettings
from memsql_assets.defs.jobs import BENCHMARK_ASSETS, TURN_RESULTS
from memsql_assets.defs.resources import MemsqlSettings, model_api_keys
from memsql_assets.defs.scale_out_settings import check_shared_home, scale_out_enabled
from memsql_assets.lib.code_versions import (
    EXTENDED_ONLY_CODE,
    HARNESS_CODE,
    SEMANTIC_CODE,
    code_version,
    digest,
)
from memsql_assets.lib.console import report_progress
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.evaluation.interval import interval_text
from memsql_assets.lib.harness.results import comparable_rows
from memsql_assets.lib.memory.chroma import chroma_client
from memsql_assets.lib.memory.semantic import SEMANTIC_COLLECTION, SEMANTIC_HINTS, seed_semantic_memory
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.paths import embeddings_cache_dir, results_root
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.trajectories.lookup import trajectory_lookup
from memsql_assets.lib.viewer.server import partition_url
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, MUST_SCORE_100, PAPER_BENCHMARK, History


@dg.asset(
    group_name="memory",
    kinds={"chromadb"},
    code_version=code_version(*SEMANTIC_CODE),
    description="Static semantic memory: the six hints of the paper's Appendix A.5, verbatim, in a read-only "
    f"ChromaDB namespace ({SEMANTIC_COLLECTION}); condition D retrieves the top-1 hint of the turn's source.",
)
def semantic_memory(memsql: MemsqlSettings, evaluation: EvaluationSettings) -> dg.MaterializeResult:
    home = memsql.home_path
    count = seed_semantic_memory(
        chroma_client(home, evaluation.chroma_url), embeddings_store=embeddings_cache_dir(home)
    )
    table = "| id | hint |\n| --- | --- |\n" + "".join(f"| {h.id} | {h.text} |\n" for h in SEMANTIC_HINTS)
    return dg.MaterializeResult(
        metadata={"hints": count, "collection": SEMANTIC_COLLECTION, "seed": dg.MetadataValue.md(table)},
        data_version=dg.DataVersion(digest([h.text for h in SEMANTIC_HINTS])),
    )


def _table(title: str, values: dict) -> str:
    return f"| {title} | EX % |\n| --- | ---: |\n" + "".join(
        f"| {k} | {v:.1f} |\n" for k, v in values.items()
    )


def turn_results_asset(benchmark: str) -> dg.AssetsDefinition:
    """The `benchmark`'s evaluations: one asset per benchmark, each with the model x condition partitions,
    so that a partition's asset names its benchmark and neither benchmark's inputs make the other stale."""
    name = TURN_RESULTS[benchmark]
    results = f"{results_root(Path(), benchmark).name}/model=MODEL/condition=CONDITION"
    own_code = () if benchmark == EXTENDED_BENCHMARK else EXTENDED_ONLY_CODE

    @dg.asset(
        name=name,
        group_name="evaluation",
        kinds={"python", "parquet"},
        partitions_def=evaluation_partitions,
        deps=[
            *SOURCE_NAMES,
            BENCHMARK_ASSETS[benchmark],
            semantic_memory,
            "trajectory_store",
            "composite_tools",
            dg.AssetDep(
                model_registry,
                partition_mapping=dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="model"),
            ),
            dg.AssetDep(
                condition_registry,
                partition_mapping=dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="condition"),
            ),
        ],
        code_version=code_version(*HARNESS_CODE, exclude=own_code),
        automation_condition=EVALUATE_WHEN_OUT_OF_DATE,
        output_required=False,  # a sample run records an observation, never a materialization
        check_specs=[
            dg.AssetCheckSpec(
                "harness_integrity",
                asset=name,
                blocking=True,
                description="One row per benchmark turn and epoch, every ground truth executed, and 100.0 % EX for "
                "`gold` and `paraphrase` (anything less is a harness or comparator bug); failing turns are listed.",
            )
        ],
        description=f"The {benchmark} benchmark ({BENCHMARK_ASSETS[benchmark]}): every turn evaluated for one model "
        "under one memory condition: the agent's prompt, the model's reply (request store: cache, resume point and "
        "audit trail), strict/bag/set EX, the six-class error taxonomy, contamination and stale state. Writes "
        f"{results}/turn_results.parquet atomically. A sample run (setting `sessions`) writes its own sample "
        "folder instead and is recorded as an observation.",
    )
    def evaluate(
        context: dg.AssetExecutionContext, memsql: MemsqlSettings, evaluation: EvaluationSettings
    ) -> Iterator[dg.MaterializeResult | dg.AssetObservation]:
        yield from _evaluate(context, memsql, evaluation, benchmark)

    return evaluate


def _evaluate(
    context: dg.AssetExecutionContext, memsql: MemsqlSettings, evaluation: EvaluationSettings, benchmark: str
) -> Iterator[dg.MaterializeResult | dg.AssetObservation]:
    # The harness (litellm with it) loads only when a partition runs: definitions load fast for the CLI and UI.
    from memsql_assets.lib.harness.evaluate import evaluate_partition
    from memsql_assets.lib.harness.runner import RunStats

    if scale_out_enabled():  # a worker without the shared data directory fails here, naming the path
        check_shared_home(memsql.home_path, f"{socket.gethostname()} (pid {os.getpid()})")
    keys = context.partition_key.keys_by_dimension
    model, condition = keys["model"], keys["condition"]
    last_log = [0.0]

    def progress(stats: RunStats) -> None:
        label = f"{model}/{condition}" + (f" epoch {stats.epoch}" if stats.epoch > 1 else "")
        report_progress(label, stats)
        now = time.monotonic()
        if now - last_log[0] >= 5 or stats.done_turns == stats.total_turns:
            last_log[0] = now
            eta = f"{stats.eta_s:.0f}s" if stats.eta_s is not None else "?"
            context.log.info(
                f"{label}: {stats.done_turns}/{stats.total_turns} turns, EX so far {stats.ex:.1f} %, ETA {eta}"
            )

    _within_budget(context, memsql.home_path, model, condition, evaluation, benchmark)
    outcome = evaluate_partition(
        memsql.home_path,
        model,
        condition,
        settings=evaluation.settings(),
        progress=progress,
        trajectory_factory=trajectory_lookup,
        api_keys=model_api_keys(load_registry()),
        benchmark=benchmark,
    )
    s = outcome.summary
    for warning in s["warnings"]:
        context.log.warning(warning)
    check = _harness_integrity(model, s, outcome.rows)
    if evaluation.sessions or s["history"] != History.MODEL:  # the check's output is required: it checks these rows
        yield _observation(context, s, outcome.result_path)
        yield check
        return
    yield dg.MaterializeResult(
        metadata=_metadata(s, outcome.result_path, benchmark, model, condition),
        data_version=dg.DataVersion(digest(comparable_rows(outcome.rows))),
        check_results=[check],
    )


def _sampled(s: dict[str, Any]) -> str:
    """How much of the benchmark the rows cover, when not all of it."""
    if not s["complete"]:
        return f"sample of {s['sessions']} sessions: "
    if s.get("partition_sample"):
        return f"the model's fixed sample of {s['partition_sample']} sessions: "
    return ""


def _harness_integrity(model: str, s: dict[str, Any], rows: list[dict[str, Any]]) -> dg.AssetCheckResult:
    """Every ground truth ran, and a model that must score 100 % did: else the failing turns."""
    failing = [f"{r['session_id']}#{r['turn_index']}" for r in rows if r["gt_error"]]
    if model in MUST_SCORE_100:
        failing += [f"{r['session_id']}#{r['turn_index']}" for r in rows if not r["ex_strict"]]
    passed = not failing and s["turns"] > 0
    return dg.AssetCheckResult(
        check_name="harness_integrity",
        passed=passed,
        description=_sampled(s)
        + f"{s['n_turns']} rows ({s['turns']} turns x {s['epochs']} epochs); gt errors {s['gt_errors']}; EX {s['ex_strict']} %"
        + ("" if passed else f"; failing turns: {', '.join(sorted(set(failing))[:20])}"),
        metadata={
            "failing_turns": dg.MetadataValue.json(sorted(set(failing))[:200]),
            "ex_strict": s["ex_strict"],
        },
    )


turn_results = turn_results_asset(PAPER_BENCHMARK)
extended_turn_results = turn_results_asset(EXTENDED_BENCHMARK)


def _metadata(s: dict[str, Any], path: Path, benchmark: str, model: str, condition: str) -> dict[str, Any]:
    """What the UI shows of a materialized partition."""
    return {
        "benchmark": benchmark,
        "ex_strict": s["ex_strict"],
        "ex_bag": s["ex_bag"],
        "ex_set": s["ex_set"],
        "ex_memory_critical": s["ex_memory_critical"],
        "ex_strict_ci95": "-" if s["ex_strict_ci95"] is None else interval_text(*s["ex_strict_ci95"]),
        "epochs": s["epochs"],
        "n_turns": s["n_turns"],
        "ex_by_tier": dg.MetadataValue.md(_table("tier", s["ex_by_tier"])),
        "ex_by_source": dg.MetadataValue.md(_table("source", s["ex_by_source"])),
        "ex_by_turn": dg.MetadataValue.md(_table("turn", s["ex_by_turn_index"])),
        "error_classes": dg.MetadataValue.json(s["error_classes"]),
        "contaminated": s["contaminated"],
        "fallback_match": s["fallback_match"],
        "stale_state": s["stale_state"],
        # C/D: of the distractor turns, those whose twin ran in an earlier wave (retrievable)
        "twins_reachable_pct": "-" if s.get("twins_reachable_pct") is None else s["twins_reachable_pct"],
        "model_calls": s["calls"],
        "cache_hits": s["cache_hits"],
        "model_errors": dg.MetadataValue.json(s["model_errors"]),
        "prompt_tokens": s["prompt_tokens"],
        "completion_tokens": s["completion_tokens"],
        "reasoning_tokens": s["reasoning_tokens"],
        "warnings": dg.MetadataValue.json(s["warnings"]),
        "cost_usd": s["cost_usd"],
        "wall_s": s["wall_s"],
        "resumed_sessions": s["resumed_sessions"],
        "partition_sample": s.get("partition_sample") or "-",  # the registry entry's `sessions`
        "sample_sessions": dg.MetadataValue.json(s.get("sample_sessions") or []),
        "benchmark_version": s["benchmark_version"],
        "path": dg.MetadataValue.path(str(path)),
        "viewer": dg.MetadataValue.url(partition_url(model, condition, benchmark)),
    }


def _observation(context: dg.AssetExecutionContext, s: dict[str, Any], path: Path) -> dg.AssetObservation:
    """A sample run, or a gold-history one, in the UI: an observation of the partition without a data
    version, so the latest materialization (the model-history full evaluation) stays the current one
    and nothing turns stale."""
    ci = s["ex_strict_ci95"]
    sample = not s["complete"]
    what = f"sample of {s['sessions']} sessions" if sample else "full evaluation"
    context.log.info(f"{what} with {s['history']} history x {s['epochs']} epochs: not a materialization")
    return dg.AssetObservation(
        asset_key=context.asset_key,
        partition=context.partition_key,
        metadata={
            "sample": sample,
            "history": s["history"],
            "sessions": s["sessions"],
            "epochs": s["epochs"],
            "n_turns": s["n_turns"],
            "ex_strict": s["ex_strict"],
            "ex_strict_ci95": "-" if ci is None else interval_text(*ci),
            "reasoning_tokens": s["reasoning_tokens"],
            "warnings": dg.MetadataValue.json(s["warnings"]),
            "model_calls": s["model_calls_this_run"],
            "path": dg.MetadataValue.path(str(path)),
        },
    )


def _within_budget(
    context: dg.AssetExecutionContext,
    home: Path,
    model: str,
    condition: str,
    evaluation: EvaluationSettings,
    benchmark: str,
) -> None:
    """The run's call count and cost bound in the log; the setting `max_cost_usd` stops a run above it."""
    from memsql_assets.lib.harness.plan import plan_partition

    entry = load_registry().get(model)
    if entry.kind == "builtin" and evaluation.max_cost_usd is None:
        return  # free and uncapped: nothing to print or stop (the count reads the whole request store)
    settings = evaluation.settings()
    plan = plan_partition(
        home,
        entry,
        condition,
        settings.sessions,
        settings.epochs,
        settings.retry_errors,
        only_failed=settings.only_failed,
        benchmark=benchmark,
        max_steps=settings.agent_max_steps,
    )
    context.log.info(plan.describe())
    if plan.exceeds(evaluation.max_cost_usd):
        raise MemsqlError(f"{plan.describe()}: above max_cost_usd {evaluation.max_cost_usd}; not run")
