"""A reduced home, built one way for the tests, the benches and the scale-out deployment: source
databases, a subset of sessions, the seeded semantic memory and, when asked, the trajectory store
with its composite tools (what condition E reads). Partitions over it take seconds, not minutes."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from memsql_assets.lib.benchmark.generate import Session
from memsql_assets.lib.benchmark.store import EXTENDED_TURNS_SCHEMA, TURNS_SCHEMA, write_benchmark
from memsql_assets.lib.memory.chroma import chroma_client
from memsql_assets.lib.memory.semantic import seed_semantic_memory
from memsql_assets.lib.paths import benchmark_dir, source_db_path
from memsql_assets.lib.trajectories.store import StoreSettings, build_home_store
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, PAPER_BENCHMARK


def every_kth(sessions: Sequence[Session], every: int, limit: int | None = None) -> list[Session]:
    """Every `every`-th session, so that all sources and tiers stay present (10 of 300 -> 30)."""
    return [s for i, s in enumerate(sessions) if i % every == 0][:limit]


def build_home(
    home: Path,
    sources: Mapping[str, Path],
    sessions: Sequence[Session],
    *,
    benchmark: str = PAPER_BENCHMARK,
    semantic: bool = True,
    store: StoreSettings | None = None,
    exclude_questions: frozenset[str] = frozenset(),
) -> Path:
    """`home` with copies of `sources`, these sessions as its `benchmark`, the seeded semantic memory
    (unless `semantic` is false) and, with `store`, the trajectory store built while leaving out
    `exclude_questions` (by default the home's own questions)."""
    for name, path in sources.items():
        target = source_db_path(home, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    schema = EXTENDED_TURNS_SCHEMA if benchmark == EXTENDED_BENCHMARK else TURNS_SCHEMA
    write_benchmark(benchmark_dir(home, benchmark), list(sessions), schema)
    if semantic:
        seed_semantic_memory(chroma_client(home))
    if store is not None:
        own = {t.question for s in sessions for t in s.turns}
        build_home_store(home, store, exclude_questions | own)
    return home
