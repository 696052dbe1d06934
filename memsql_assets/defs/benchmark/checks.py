"""Blocking data-quality checks on the benchmark: GX suites and ground-truth execution."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg

from memsql_assets.defs.benchmark.assets import sessions
from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.lib.benchmark.answer_check import check_answers
from memsql_assets.lib.benchmark.gt_check import check_ground_truth
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.paths import benchmark_dir, source_db_path, sql_cache_path
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK

if TYPE_CHECKING:  # the suites need pandas: imported where they run, not by every evaluation process
    from memsql_assets.lib.quality.gx_suites import SuiteReport


def _db_paths(home: Path) -> dict[str, Path]:
    return {s: source_db_path(home, s) for s in SOURCE_NAMES}


def suite_result(report: SuiteReport, size: int | None = None) -> dg.AssetCheckResult:
    outcome = "all expectations met" if report.success else "; ".join(report.failures)
    if report.left_out:
        outcome = (
            f"a benchmark built at {size} sessions (the size setting): its counts expected, "
            f"left out: {', '.join(report.left_out)}; {outcome}"
        )
    return dg.AssetCheckResult(
        passed=report.success,
        description=outcome[:2000],
        metadata={
            "suite": f"expectations/{report.suite}.json",
            "expectations_evaluated": report.evaluated,
            "left_out_for_size": dg.MetadataValue.json(report.left_out),
            "failed_expectations": dg.MetadataValue.json(report.failures),
            "failing_ids": dg.MetadataValue.json(sorted(set(report.failing_ids))[:200]),
        },
    )


def suite_check(
    home: Path, benchmark: str, frame: str, suite: str, id_column: str, size: int | None = None
) -> dg.AssetCheckResult:
    """The GX suite `suite` over the `frame` (a lib.quality.frames builder's name) of a benchmark's
    turns; `size`: the paper benchmark's size setting (None: the whole benchmark)."""
    from memsql_assets.lib.quality import frames
    from memsql_assets.lib.quality.gx_suites import validate

    turns = read_turns(benchmark_dir(home, benchmark))
    return suite_result(validate(getattr(frames, frame)(turns), suite, id_column, sessions=size), size)


@dg.asset_check(
    asset=sessions,
    blocking=True,
    description="GX suite expectations/benchmark_sessions.json: "
    "300 sessions, tier/source distributions, id format and uniqueness, the ten-turn split. Built at a size "
    "(memsql.benchmark_sessions): that sample's session counts; the ten-turn split and the 1,400 turns are "
    "left out (they depend on which sessions are drawn), and the result says so.",
)
def sessions_suite(memsql: MemsqlSettings) -> dg.AssetCheckResult:
    return suite_check(
        memsql.home_path, PAPER_BENCHMARK, "sessions_frame", "benchmark_sessions", "session_id", memsql.benchmark_size()
    )


@dg.asset_check(
    asset=sessions,
    blocking=True,
    description="GX suite expectations/benchmark_turns.json: "
    "1,400 turns, 1,100 memory-critical, turn 1 never critical, referenced keys bound earlier. Built at a "
    "size (memsql.benchmark_sessions): the two counts are left out, and the result says so; every turn "
    "after the first is still checked memory-critical.",
)
def turns_suite(memsql: MemsqlSettings) -> dg.AssetCheckResult:
    return suite_check(
        memsql.home_path, PAPER_BENCHMARK, "turns_frame", "benchmark_turns", "turn_id", memsql.benchmark_size()
    )


def ground_truth_result(home: Path, benchmark: str = PAPER_BENCHMARK) -> dg.AssetCheckResult:
    """Every ground-truth, fallback and (extended) stale ground-truth query of `benchmark` runs."""
    turns = read_turns(benchmark_dir(home, benchmark))
    report = check_ground_truth(turns, _db_paths(home), sql_cache_path(home))
    failing = sorted({f["turn"] for f in report.failures})
    return dg.AssetCheckResult(
        passed=report.ok,
        description=(
            f"{report.executed} queries executed, all non-empty"
            if report.ok
            else f"{len(report.failures)} of {report.executed} queries failed: "
            + "; ".join(f"{f['turn']} {f['field']}: {f['problem']}" for f in report.failures[:10])
        ),
        metadata={
            "queries_executed": report.executed,
            "failures": len(report.failures),
            "failing_turns": dg.MetadataValue.json(failing[:200]),
            "failure_details": dg.MetadataValue.json(report.failures[:50]),
        },
    )


def answers_result(home: Path, benchmark: str = PAPER_BENCHMARK) -> dg.AssetCheckResult:
    """Requirements and paraphrases present, paraphrases equal to their ground truth, no LIMIT 1 tie."""
    turns = read_turns(benchmark_dir(home, benchmark))
    report = check_answers(turns, _db_paths(home), sql_cache_path(home))
    shown = [
        f"{f['turn']} ({f['template']}, variant {f['variant']}): {f['problem']}"
        + "".join(f"; {k}: {v}" for k, v in f.items() if k.endswith(("_result", "_rows")))
        for f in report.failures[:5]
    ]
    return dg.AssetCheckResult(
        passed=report.ok,
        description=(
            f"{report.checked} turns: requirement and paraphrase present and equal to the ground truth; "
            f"{report.limit_one} LIMIT 1 queries without a tie"
            if report.ok
            else f"{len(report.failures)} problem(s) in {report.checked} turns: " + " | ".join(shown)
        )[:2000],
        metadata={
            "turns_checked": report.checked,
            "limit_one_queries": report.limit_one,
            "failures": len(report.failures),
            "failing_turns": dg.MetadataValue.json(sorted({f["turn"] for f in report.failures})[:200]),
            "failure_details": dg.MetadataValue.json(report.failures[:50]),
        },
    )


@dg.asset_check(
    asset=sessions,
    blocking=True,
    description="Every ground-truth and fallback SQL executes on its "
    "source database (read-only) with no error and a non-empty, non-NULL result.",
)
def ground_truth_executes(memsql: MemsqlSettings) -> dg.AssetCheckResult:
    return ground_truth_result(memsql.home_path)


@dg.asset_check(
    asset=sessions,
    blocking=True,
    description="Every turn states its output requirements and has a paraphrase SQL that returns the ground "
    "truth's result (strict EX) on the built database, and no `ORDER BY ... LIMIT 1` ground truth or fallback "
    "ties on its ranking key. A failure names the turn, the template file and variant, and both results.",
)
def answers_unambiguous(memsql: MemsqlSettings) -> dg.AssetCheckResult:
    return answers_result(memsql.home_path)


benchmark_checks = [sessions_suite, turns_suite, ground_truth_executes, answers_unambiguous]
