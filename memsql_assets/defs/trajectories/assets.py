"""AgentSM trajectory memory: synthetic questions -> explored, phase-structured trajectories."""

import json
from pathlib import Path

import dagster as dg

from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.defs.trajectories.resources import TrajectorySettings
from memsql_assets.lib.atomic import sha256_file, sha256_tree, write_text_atomic
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.code_versions import TRAJECTORY_CODE, code_version, digest
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.memory.chroma import chroma_client
from memsql_assets.lib.paths import (
    benchmark_dir,
    composite_tools_path,
    embeddings_cache_dir,
    source_db_path,
    trajectories_dir,
)
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.trajectories.phases import classifier_accuracy
from memsql_assets.lib.trajectories.store import (
    STORE_REPORT_FILE,
    QuestionPlan,
    StoreReport,
    build_home_store,
    plan_questions,
    store_coverage,
)

QUESTIONS_FILE = "questions.json"  # synthetic_questions' plan, which trajectory_store explores


def _dir(memsql: MemsqlSettings):
    return trajectories_dir(memsql.home_path)


def _db_paths(memsql: MemsqlSettings):
    return {s: source_db_path(memsql.home_path, s) for s in SOURCE_NAMES}


def _md(mapping: dict, key: str, value: str) -> str:
    return f"| {key} | {value} |\n| --- | ---: |\n" + "".join(f"| {k} | {v} |\n" for k, v in mapping.items())


@dg.asset(
    group_name="trajectories",
    kinds={"sqlite", "json"},
    deps=[*SOURCE_NAMES, "sessions"],
    code_version=code_version(*TRAJECTORY_CODE),
    description="Algorithm 1: a budget of N synthetic questions allocated across the source databases by schema "
    "complexity (weight = tables + columns/4 + 2·FK edges + log10(rows+1)), generated deterministically from the "
    "schema, the data and the source guidance: measures over foreign-key paths of 1-3 joins (or a join chain "
    "the guidance spells out), named entities and years, in analyst shapes (totals, breakdowns, top-1 with ties, "
    "two-year comparisons, shares); each SQL verified to execute, none equal to or a near copy of a benchmark "
    "question.",
)
def synthetic_questions(memsql: MemsqlSettings, trajectories: TrajectorySettings) -> dg.MaterializeResult:
    exclude = {t["question"] for t in read_turns(benchmark_dir(memsql.home_path))}
    propose = (
        trajectories.propose(memsql.home_path, trajectories.question_model)
        if trajectories.question_model
        else None
    )
    plan = plan_questions(_db_paths(memsql), trajectories.budget, trajectories.seed, exclude, propose)
    path = _dir(memsql) / QUESTIONS_FILE
    data = plan.to_file_json()
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True))
    info = plan.as_json()
    return dg.MaterializeResult(
        metadata={
            "budget": trajectories.budget,
            "allocation": dg.MetadataValue.md(_md(info["allocation"], "database", "questions")),
            "questions_per_db": dg.MetadataValue.json(info["questions_per_db"]),
            "shortfall": dg.MetadataValue.json(info.get("shortfall", {})),
            "path": dg.MetadataValue.path(str(path)),
        },
        data_version=dg.DataVersion(sha256_file(path)),
    )


@dg.multi_asset(
    group_name="trajectories",
    specs=[
        dg.AssetSpec(
            "trajectory_store",
            deps=[synthetic_questions],
            kinds={"chromadb", "json"},
            code_version=code_version(*TRAJECTORY_CODE),
            description="Exploration traces of every synthetic question (deterministic explorer with real tools; "
            "join discovery by foreign-key lookups and a sample join), phase-classified by rules (explore / "
            "execute / validate), rewritten as markdown with a header per "
            "phase segment, stored per phase in ChromaDB plus a JSON copy per question.",
        ),
        dg.AssetSpec(
            "composite_tools",
            deps=[synthetic_questions],
            kinds={"json"},
            code_version=code_version(*TRAJECTORY_CODE),
            description="Tool subsequences with support >= theta within one phase, mined from the first "
            "exploration pass; the second pass (what the store holds) calls them as single actions.",
        ),
    ],
    check_specs=[
        dg.AssetCheckSpec(
            "final_sql_executes",
            asset="trajectory_store",
            blocking=True,
            description="Every stored trajectory's final SQL executed without error.",
        )
    ],
)
def trajectory_store(memsql: MemsqlSettings, trajectories: TrajectorySettings):
    if trajectories.explorer == "llm" and not trajectories.explorer_model:
        raise MemsqlError(
            "trajectories.explorer is 'llm' but trajectories.explorer_model names no registry model"
        )
    report = _build_store(memsql, trajectories)
    yield _store_result(memsql, report)
    yield _composites_result(trajectories, report, composite_tools_path(memsql.home_path))


def _build_store(memsql: MemsqlSettings, trajectories: TrajectorySettings) -> StoreReport:
    """Explore the planned synthetic questions and store their trajectories (ChromaDB + JSON)."""
    plan = QuestionPlan.from_file_json(
        json.loads((_dir(memsql) / QUESTIONS_FILE).read_text(encoding="utf-8")), _db_paths(memsql)
    )
    return build_home_store(
        memsql.home_path,
        trajectories.store_settings(),
        frozenset(),
        questions=plan,
        propose=(
            trajectories.propose(memsql.home_path, trajectories.explorer_model)
            if trajectories.explorer == "llm"
            else None
        ),
        embeddings_store=embeddings_cache_dir(memsql.home_path),
    )


def _store_result(memsql: MemsqlSettings, report: StoreReport) -> dg.MaterializeResult:
    """The trajectory_store materialization, with its final_sql_executes check."""
    check = dg.AssetCheckResult(
        check_name="final_sql_executes",
        passed=report.all_final_sql_ok,
        metadata={"failed_questions": dg.MetadataValue.json(report.failed_final_sql[:100])},
    )
    return dg.MaterializeResult(
        asset_key="trajectory_store",
        metadata={
            "documents": report.documents,
            "questions_per_db": dg.MetadataValue.json(report.questions_per_db),
            "phase_distribution": dg.MetadataValue.json(report.phase_distribution),
            "composites_found": len(report.composites),
            "classifier_accuracy": dg.MetadataValue.json(classifier_accuracy().as_json()),
            "build_seconds": report.build_seconds,
        },
        data_version=dg.DataVersion(sha256_tree(_dir(memsql) / "json", exclude=(STORE_REPORT_FILE,))),
        check_results=[check],
    )


def _composites_result(
    trajectories: TrajectorySettings, report: StoreReport, composites_path: Path
) -> dg.MaterializeResult:
    """The composite_tools materialization: the mined composites as a table."""
    return dg.MaterializeResult(
        asset_key="composite_tools",
        metadata={
            "composites_found": len(report.composites),
            "composites": dg.MetadataValue.md(
                "| name | phase | steps | support |\n| --- | --- | --- | ---: |\n"
                + "".join(
                    f"| {c.name} | {c.phase} | {' + '.join(c.steps)} | {c.support} |\n"
                    for c in report.composites
                )
            ),
            "with_vs_without_composites": dg.MetadataValue.json(report.composite_stats),
            "theta": trajectories.theta,
            "max_len": trajectories.max_len,
            "path": dg.MetadataValue.path(str(composites_path)),
        },
        data_version=dg.DataVersion(sha256_file(composites_path)),
    )


@dg.asset(
    group_name="trajectories",
    kinds={"chromadb", "json"},
    deps=[trajectory_store, "sessions"],
    code_version=code_version(*TRAJECTORY_CODE),
    description="How well the trajectory store covers the benchmark: for each distinct benchmark question, "
    "does the top-1 trajectory's final SQL read every table the ground truth reads (target >= 80 % overall, "
    ">= 70 % per source); mean table Jaccard and mean similarity per source.",
)
def trajectory_coverage(memsql: MemsqlSettings) -> dg.MaterializeResult:
    home = memsql.home_path
    report = store_coverage(
        chroma_client(home), read_turns(benchmark_dir(home)), embeddings_store=embeddings_cache_dir(home)
    )
    store = json.loads((_dir(memsql) / "json" / STORE_REPORT_FILE).read_text(encoding="utf-8"))
    report["store"] = {k: store[k] for k in ("trajectories", "documents", "build_seconds", "total_budget")}
    path = _dir(memsql) / "coverage.json"
    write_text_atomic(path, json.dumps(report, indent=2, sort_keys=True))
    table = {
        s: f"{report['by_source'][s]:.1%} | {report['mean_jaccard'][s]:.3f} | {report['mean_similarity'][s]:.3f}"
        for s in report["by_source"]
    }
    return dg.MaterializeResult(
        metadata={
            "coverage": dg.MetadataValue.float(report["coverage"]),
            "meets_target": report["meets_target"],
            "by_source": dg.MetadataValue.md(
                "| source | covered | mean Jaccard | mean similarity |\n| --- | ---: | ---: | ---: |\n"
                + "".join(f"| {s} | {row} |\n" for s, row in table.items())
            ),
            "mean_jaccard": dg.MetadataValue.json(report["mean_jaccard"]),
            "mean_similarity": dg.MetadataValue.json(report["mean_similarity"]),
            "questions": report["questions"],
            "store": dg.MetadataValue.json(report["store"]),
            "misses": dg.MetadataValue.json(report["misses"]),
            "path": dg.MetadataValue.path(str(path)),
        },
        data_version=dg.DataVersion(digest({k: v for k, v in report.items() if k != "store"})),
    )
