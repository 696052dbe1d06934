"""Jobs a user launches from the UI or the CLI."""

import dagster as dg

from memsql_assets.defs.evaluation.partitions import evaluation_partitions
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, PAPER_BENCHMARK

MAIN_JOB = "memsql_main"
EVALUATE_JOB = "evaluate"
METRICS_JOB = "metrics"

# The README's main command, first half: every unpartitioned asset of the lineage with its checks.
# Each group in a newcomer's words (`memsql run`'s first summary line), in the order they are built.
MAIN_GROUP_WORDS = {
    "sources": "sources",
    "benchmark": "sessions",
    "memory": "semantic memory",
    "trajectories": "trajectory store",
}
MAIN_GROUPS = tuple(MAIN_GROUP_WORDS)
main_job = dg.define_asset_job(
    MAIN_JOB,
    selection=dg.AssetSelection.groups(*MAIN_GROUPS),
    description="Sources -> profiles -> sessions, semantic memory and the trajectory store, with blocking checks.",
)

# One run per (model, condition) partition of one benchmark: automation, backfills and `memsql eval` use them.
evaluate_job = dg.define_asset_job(
    EVALUATE_JOB,
    selection=dg.AssetSelection.assets("turn_results"),
    partitions_def=evaluation_partitions,
    description="Evaluate one model under one memory condition on the paper benchmark (a turn_results partition).",
)
EXTENDED_EVALUATE_JOB = "evaluate_extended"
extended_evaluate_job = dg.define_asset_job(
    EXTENDED_EVALUATE_JOB,
    selection=dg.AssetSelection.assets("extended_turn_results"),
    partitions_def=evaluation_partitions,
    description="Evaluate one model under one memory condition on the extended benchmark "
    "(an extended_turn_results partition).",
)
EVALUATE_JOBS = {PAPER_BENCHMARK: EVALUATE_JOB, EXTENDED_BENCHMARK: EXTENDED_EVALUATE_JOB}
# Each benchmark's sessions asset and evaluations asset. The paper's sessions are built whichever
# benchmarks are chosen: the trajectory store (conditions E and E_prompt of both) is derived from them.
BENCHMARK_ASSETS = {PAPER_BENCHMARK: "sessions", EXTENDED_BENCHMARK: "extended_sessions"}
TURN_RESULTS = {PAPER_BENCHMARK: "turn_results", EXTENDED_BENCHMARK: "extended_turn_results"}


def unchosen_assets(benchmarks: tuple[str, ...]) -> set[dg.AssetKey]:
    """The main job's assets left out when only `benchmarks` are built."""
    return {
        dg.AssetKey(BENCHMARK_ASSETS[b])
        for b in BENCHMARK_ASSETS
        if b not in benchmarks and b != PAPER_BENCHMARK
    }


# dbt build over every result file, then the report: what the main command ends with.
metrics_job = dg.define_asset_job(
    METRICS_JOB,
    selection=dg.AssetSelection.groups("metrics"),
    description="dbt build (staging -> intermediate -> marts, with tests as checks) and the HTML report.",
)

# Observations of what the lineage is built from: `memsql run` starts with them, the registry sensor
# requests the model one when an entry changes, and the UI can launch either.
OBSERVE_SOURCES_JOB = "observe_sources"
OBSERVE_MODELS_JOB = "observe_models"
observe_sources_job = dg.define_asset_job(
    OBSERVE_SOURCES_JOB,
    selection=dg.AssetSelection.assets(*(f"raw_{name}" for name in SOURCE_NAMES)),
    description="Observe each source's configuration and real files (raw_<source>).",
)
observe_models_job = dg.define_asset_job(
    OBSERVE_MODELS_JOB,
    selection=dg.AssetSelection.assets("model_registry"),
    description="Observe each runnable model's registry entry (model_registry, one data version per model).",
)
OBSERVE_CONDITIONS_JOB = "observe_conditions"
observe_conditions_job = dg.define_asset_job(
    OBSERVE_CONDITIONS_JOB,
    selection=dg.AssetSelection.assets("condition_registry"),
    description="Observe each condition of the conditions file (condition_registry, one data version per condition).",
)
