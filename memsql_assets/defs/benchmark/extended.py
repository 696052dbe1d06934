"""The extended benchmark's asset: its own profiles and tagged sessions, under benchmark/extended/.

It reads the source databases only, never the paper benchmark's files: building either benchmark
leaves the other (and its evaluations) current.
"""

from collections import Counter

import dagster as dg

from memsql_assets.defs.benchmark.checks import answers_result, ground_truth_result, suite_check
from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.benchmark.extended.template import EXTENDED_DIR
from memsql_assets.lib.benchmark.pipeline import build_measured_extended_sessions, extract_all_profiles
from memsql_assets.lib.benchmark.store import (
    EXTENDED_TURNS_SCHEMA,
    write_benchmark,
    write_profiles,
)
from memsql_assets.lib.code_versions import BENCHMARK_CODE, code_version
from memsql_assets.lib.memory.embeddings import EmbeddingCache
from memsql_assets.lib.paths import PROFILES_FILE, benchmark_dir, embeddings_cache_dir, source_db_path
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, PHENOMENA, REPORT_SOURCES


def _tag_table(turns: list) -> str:
    grid = Counter((t.source, t.tag) for t in turns)
    table = "| source | " + " | ".join(PHENOMENA) + " |\n| --- |" + " ---: |" * len(PHENOMENA) + "\n"
    for src in REPORT_SOURCES:
        table += f"| {src} | " + " | ".join(str(grid[(src, tag)]) for tag in PHENOMENA) + " |\n"
    return table


@dg.asset(
    group_name="benchmark",
    kinds={"parquet", "json"},
    deps=list(SOURCE_NAMES),
    code_version=code_version(*BENCHMARK_CODE),
    description="The extended benchmark (docs/specification.md, section 6): profiles by "
    "templates/extended/profiles.yaml, then each source's tagged templates (long-range references, "
    "corrections with their stale ground truth, entity switches, cross-session distractors, varied wording, "
    "analysts' histories of four sessions) "
    "instantiated, their wording checked (lib/benchmark/wording.py) and verified against the extended "
    "invariants; each memory-critical turn's guess_rate is measured as the paper's. Writes benchmark/extended/, and embeds its "
    "questions into the home's embedding cache for the conditions that retrieve by similarity.",
)
def extended_sessions(context: dg.AssetExecutionContext, memsql: MemsqlSettings) -> dg.MaterializeResult:
    home = memsql.home_path
    out = benchmark_dir(home, EXTENDED_BENCHMARK)
    db_paths = {s: source_db_path(home, s) for s in SOURCE_NAMES}
    profiles = extract_all_profiles(db_paths, EXTENDED_DIR)
    write_profiles(out / PROFILES_FILE, profiles)
    built = build_measured_extended_sessions(profiles, db_paths)
    paths = write_benchmark(out, built, EXTENDED_TURNS_SCHEMA)
    turns = [t for s in built for t in s.turns]
    critical = [t for t in turns if t.memory_critical]
    rates = [t.guess_rate for t in critical]
    # The questions in the one batch every partition embeds them in (harness/services.py): the
    # evaluations that run concurrently then read the vectors from disk instead of each computing them.
    EmbeddingCache(store=embeddings_cache_dir(home)).warm([t.question for t in turns])
    digest = sha256_file(paths["turns_jsonl"])
    return dg.MaterializeResult(
        metadata={
            "benchmark": EXTENDED_BENCHMARK,
            "sessions": len(built),
            "turns": len(turns),
            "memory_critical_turns": len(critical),
            "mean_guess_rate_pct": dg.MetadataValue.float(round(100 * sum(rates) / max(1, len(rates)), 2)),
            "beyond_five_turns": sum(t.recall_distance > 5 for t in critical),
            "stale_ground_truths": sum(t.stale_gt_sql is not None for t in turns),
            "turns_by_source_and_tag": dg.MetadataValue.md(_tag_table(turns)),
            "turns_jsonl": dg.MetadataValue.path(str(paths["turns_jsonl"])),
            "turns_parquet": dg.MetadataValue.path(str(paths["turns_parquet"])),
            "turns_sha256": digest,
        },
        data_version=dg.DataVersion(digest),
    )


@dg.asset_check(
    asset=extended_sessions,
    blocking=True,
    description="GX suite expectations/extended_sessions.json: the session count and split per source, "
    "id format PREFIX-X-NNN and uniqueness, the turn total.",
)
def extended_sessions_suite(memsql: MemsqlSettings) -> dg.AssetCheckResult:
    return suite_check(memsql.home_path, EXTENDED_BENCHMARK, "sessions_frame", "extended_sessions", "session_id")


@dg.asset_check(
    asset=extended_sessions,
    blocking=True,
    description="GX suite expectations/extended_turns.json: the turn count, every turn tagged with a "
    "phenomenon and every phenomenon in every source, referenced keys bound earlier, a stale ground truth "
    "only after a correction and never equal to the ground truth, long-range turns 3 to 8 turns back, "
    "the cross-session turns' count, each answerable from its analyst's earlier sessions' questions and SQL "
    "and not from its own session (lib/benchmark/extended/checks.py history_violations).",
)
def extended_turns_suite(memsql: MemsqlSettings) -> dg.AssetCheckResult:
    return suite_check(memsql.home_path, EXTENDED_BENCHMARK, "extended_turns_frame", "extended_turns", "turn_id")


@dg.asset_check(
    asset=extended_sessions,
    blocking=True,
    description="Every ground-truth, fallback and stale ground-truth SQL of the extended benchmark executes "
    "on its source database with a non-empty, non-NULL result.",
)
def extended_ground_truth_executes(memsql: MemsqlSettings) -> dg.AssetCheckResult:
    return ground_truth_result(memsql.home_path, EXTENDED_BENCHMARK)


@dg.asset_check(
    asset=extended_sessions,
    blocking=True,
    description="Every extended turn states its output requirements, its paraphrase returns the ground truth's "
    "result, and no LIMIT 1 ground truth, fallback or stale ground truth ties on its ranking key.",
)
def extended_answers_unambiguous(memsql: MemsqlSettings) -> dg.AssetCheckResult:
    return answers_result(memsql.home_path, EXTENDED_BENCHMARK)


extended_checks = [
    extended_sessions_suite,
    extended_turns_suite,
    extended_ground_truth_executes,
    extended_answers_unambiguous,
]
