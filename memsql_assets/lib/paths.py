"""Where memsql keeps its data: one directory outside git, laid out by what produced it."""

from __future__ import annotations

import os
from pathlib import Path

from memsql_assets.lib.vocabulary import PAPER_BENCHMARK, History

REPO_ROOT = Path(__file__).resolve().parents[2]
# What `dagster dev`, the daemon and `dagster job launch` load: the code location of definitions.py.
WORKSPACE_FILE = REPO_ROOT / "workspace.yaml"


def memsql_home() -> Path:
    """`MEMSQL_HOME`, else `.memsql/` at the repository root."""
    env = os.environ.get("MEMSQL_HOME")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / ".memsql"


def sources_dir(home: Path) -> Path:
    return home / "sources"


def source_db_path(home: Path, source_name: str) -> Path:
    return sources_dir(home) / f"{source_name}.sqlite"


def benchmark_dir(home: Path, benchmark: str = PAPER_BENCHMARK) -> Path:
    """The paper benchmark's files at benchmark/, another benchmark's in its own folder below it."""
    base = home / "benchmark"
    return base if benchmark == PAPER_BENCHMARK else base / benchmark


TURNS_FILE = "turns.jsonl"  # a benchmark's turns, one JSON object a line
TURNS_PARQUET_FILE = "turns.parquet"  # the same turns as a table (dbt and the viewer read it)
SESSIONS_FILE = "sessions.parquet"  # a benchmark's sessions (analyst, profile, tier), one row each
PROFILES_FILE = "profiles.json"  # the entity profiles a benchmark's sessions were built from


def turns_file(home: Path, benchmark: str = PAPER_BENCHMARK) -> Path:
    return benchmark_dir(home, benchmark) / TURNS_FILE


def sessions_file(home: Path, benchmark: str = PAPER_BENCHMARK) -> Path:
    return benchmark_dir(home, benchmark) / SESSIONS_FILE


def report_dir(home: Path) -> Path:
    """The report (report.html, its figures, summary.txt)."""
    return home / "report"


def _rooted(home: Path, kind: str, benchmark: str, history: History) -> Path:
    name = kind if benchmark == PAPER_BENCHMARK else f"{kind}_{benchmark}"
    return home / (name if history == History.MODEL else f"{name}_{history}")


def results_root(home: Path, benchmark: str = PAPER_BENCHMARK, history: History = History.MODEL) -> Path:
    """Full evaluations: results/ for the paper benchmark, results_<name>/ for another one, so
    that neither benchmark's glob (dbt's sources, the viewer) ever reads the other's files. A gold
    history's evaluations (lib/history.py) have a tree of their own beside it, results_gold/
    and results_<name>_gold/: both histories of one model x condition exist side by side."""
    return _rooted(home, "results", benchmark, history)


def samples_root(home: Path, benchmark: str = PAPER_BENCHMARK, history: History = History.MODEL) -> Path:
    return _rooted(home, "samples", benchmark, history)


def trajectories_dir(home: Path) -> Path:
    """The trajectory store's files (questions, JSON copies, composite tools) beside its ChromaDB."""
    return home / "trajectories"


def composite_tools_path(home: Path) -> Path:
    """The composite tools mined with the trajectory store (the `composite_tools` asset)."""
    return trajectories_dir(home) / "composite_tools.json"


def dagster_home(home: Path) -> Path:
    return home / "dagster_home"


# A folder of embedding vectors that several homes share (bench runs, a CI cache, the test suite).
EMBEDDINGS_CACHE_ENV = "MEMSQL_EMBEDDINGS_CACHE"


def embeddings_cache_dir(home: Path) -> Path:
    """Vectors of embedded text batches (lib/memory/embeddings.py: embed_texts): `MEMSQL_EMBEDDINGS_CACHE`,
    else the home's cache/embeddings. A file is named by the model's identity and its whole batch, so
    homes can share one folder."""
    shared = os.environ.get(EMBEDDINGS_CACHE_ENV)
    return Path(shared).expanduser().resolve() if shared else home / "cache" / "embeddings"


def sql_cache_path(home: Path) -> Path:
    """The persistent results of the benchmark's own SQL (lib/sql/result_cache.py)."""
    return home / "cache" / "sql_results.sqlite"


def run_log_path(home: Path, command: str, stamp: str) -> Path:
    """Where a command's Dagster and dbt output goes when the console shows only its progress."""
    return home / "logs" / f"{command}-{stamp}.log"
