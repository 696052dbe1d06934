"""Benchmark assets: profiles extracted from the sources, then the 300 sessions / 1,400 turns (or the
sample of them the size setting asks for)."""

from collections import Counter

import dagster as dg

from memsql_assets.defs.resources import MemsqlSettings, benchmark_sessions_env
from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.benchmark.pipeline import build_measured_sessions, extract_all_profiles
from memsql_assets.lib.benchmark.store import read_profiles, write_benchmark, write_profiles
from memsql_assets.lib.code_versions import BENCHMARK_CODE, EXTENDED_ONLY_CODE, code_version
from memsql_assets.lib.paths import PROFILES_FILE, benchmark_dir, source_db_path
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.vocabulary import REPORT_SOURCES


def profiles_path(memsql: MemsqlSettings):
    return benchmark_dir(memsql.home_path) / PROFILES_FILE


@dg.asset(
    group_name="benchmark",
    kinds={"sqlite", "json"},
    deps=list(SOURCE_NAMES),
    code_version=code_version(*BENCHMARK_CODE, exclude=EXTENDED_ONLY_CODE),
    description="Phase 1: eligible profiles per source, by the deterministic SQL in "
    "memsql_assets/lib/benchmark/templates/profiles.yaml (BIRD region x loan status, SEC ticker x metric "
    "with >= 2 fiscal years, NW customers with orders in >= 2 years).",
)
def profiles(context: dg.AssetExecutionContext, memsql: MemsqlSettings) -> dg.MaterializeResult:
    db_paths = {s: source_db_path(memsql.home_path, s) for s in SOURCE_NAMES}
    extracted = extract_all_profiles(db_paths)
    path = profiles_path(memsql)
    write_profiles(path, extracted)
    table = "| source | profile | rows |\n| --- | --- | ---: |\n" + "".join(
        f"| {s} | {name} | {len(rows)} |\n"
        for s, queries in extracted.items()
        for name, rows in queries.items()
    )
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "profiles": dg.MetadataValue.md(table),
            "profile_count": sum(len(r) for q in extracted.values() for r in q.values()),
        },
        data_version=dg.DataVersion(sha256_file(path)),
    )


def sized_code_version() -> str:
    """The sessions' code version, and the size $MEMSQL_BENCHMARK_SESSIONS sets when it is set: a
    changed size is a new code version, so Dagster reports the benchmark (and what reads it) stale."""
    version = code_version(*BENCHMARK_CODE, exclude=EXTENDED_ONLY_CODE)
    size = benchmark_sessions_env()
    return f"{version}+sessions={size}" if size else version


@dg.asset(
    group_name="benchmark",
    kinds={"parquet", "json"},
    deps=[profiles],
    code_version=sized_code_version(),
    description="Phases 2-3: tier templates instantiated with profiles into 300 sessions / 1,400 turns "
    "(ground-truth SQL, fallback SQL, referenced keys, state updates, memory-critical flags), verified "
    "against the SPEC §1 invariants before anything is written; each memory-critical turn's guess_rate "
    "(the share of the other profiles' values that give its answer) is measured on the sources. With the "
    "size setting (memsql.benchmark_sessions, $MEMSQL_BENCHMARK_SESSIONS) only the stratified sample of that "
    "many sessions is measured and written, as `memsql eval --sessions N` would take it.",
)
def sessions(context: dg.AssetExecutionContext, memsql: MemsqlSettings) -> dg.MaterializeResult:
    db_paths = {s: source_db_path(memsql.home_path, s) for s in SOURCE_NAMES}
    size = memsql.benchmark_size()
    built = build_measured_sessions(read_profiles(profiles_path(memsql)), db_paths, size=size)
    out = benchmark_dir(memsql.home_path)
    paths = write_benchmark(out, built)
    turns = [t for s in built for t in s.turns]
    grid = Counter((s.source, s.tier) for s in built)
    turn_grid = Counter((t.source, t.tier) for t in turns)
    table = "| source | T1 | T2 | T3 | sessions | turns |\n| --- | ---: | ---: | ---: | ---: | ---: |\n"
    for src in REPORT_SOURCES:
        cells = " | ".join(str(grid[(src, tier)]) for tier in (1, 2, 3))
        n_sessions = sum(grid[(src, t)] for t in (1, 2, 3))
        n_turns = sum(turn_grid[(src, t)] for t in (1, 2, 3))
        table += f"| {src} | {cells} | {n_sessions} | {n_turns} |\n"
    example = next(s for s in built if s.session_id.startswith("SEC-2-"))  # SEC-2-001 in the whole benchmark
    example_md = "\n".join(
        f"{t.turn_index}. {t.question}  \n   refs={t.referenced_context_keys} binds={t.state_updates}"
        for t in example.turns
    )
    rates = [t.guess_rate for t in turns if t.memory_critical and t.guess_rate is not None]
    digest = sha256_file(paths["turns_jsonl"])
    return dg.MaterializeResult(
        metadata={
            "sessions": len(built),
            "turns": len(turns),
            "memory_critical_turns": sum(t.memory_critical for t in turns),
            "mean_guess_rate_pct": dg.MetadataValue.float(round(100 * sum(rates) / max(1, len(rates)), 2)),
            "by_source_and_tier": dg.MetadataValue.md(table),
            f"example_{example.session_id}": dg.MetadataValue.md(example_md),
            "sized": size is not None,  # a sample of the whole benchmark (the size setting)
            "turns_jsonl": dg.MetadataValue.path(str(paths["turns_jsonl"])),
            "turns_parquet": dg.MetadataValue.path(str(paths["turns_parquet"])),
            "turns_sha256": digest,
        },
        data_version=dg.DataVersion(digest),
    )
