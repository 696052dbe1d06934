"""Where memsql keeps its data: one directory outside git, laid out by what produced it."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def memsql_home() -> Path:
    """`MEMSQL_HOME`, else `.memsql/` at the repository root."""
    env = os.environ.get("MEMSQL_HOME")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / ".memsql"


def sources_dir(home: Path) -> Path:
    return home / "sources"


def source_db_path(home: Path, source_name: str) -> Path:
    return sources_dir(home) / f"{source_name}.sqlite"


def benchmark_dir(home: Path) -> Path:
    return home / "benchmark"


def dagster_home(home: Path) -> Path:
    return home / "dagster_home"


def embeddings_cache_dir(home: Path) -> Path:
    """Vectors of embedded text batches (lib/memory/embeddings.py: embed_texts)."""
    return home / "cache" / "embeddings"


def sql_cache_path(home: Path) -> Path:
    """The persistent results of the benchmark's own SQL (lib/sql/result_cache.py)."""
    return home / "cache" / "sql_results.sqlite"


def run_log_path(home: Path, command: str, stamp: str) -> Path:
    """Where a command's Dagster and dbt output goes when the console shows only its progress."""
    return home / "logs" / f"{command}-{stamp}.log"
