"""Proposed fixes, emulated inside the benchmark process (`--what-if NAME ...`): what a figure would be.

Not library code and not a test. Each entry patches this process only, to measure a fix proposed
in bench/README.md before it is made in memsql_assets; the default benchmark runs apply none of
them, so their tables describe the library as it is.

- litellm-prices: register every registry model in litellm's cost map with the registry's prices
  (`litellm.register_model`), so litellm's per-call cost bookkeeping (it prices every response
  twice: in the call and in its success logger, plus a "zero cost" diagnostic) finds the model
  directly instead of searching its fallback generalisations for an unknown model id.
- builtin-cost: the built-in provider stamps `response_cost` 0.0 in the response's hidden params,
  so litellm skips its cost calculation for the call (its zero-cost diagnostic still runs).
- semantic-vector: condition D's semantic lookup uses the question's vector that the agent already
  holds (EmbeddingCache) instead of `query_texts`, which makes Chroma embed the question again.
- trajectory-vector: condition E's trajectory lookup opens the collection once and queries by the
  question's vector from an EmbeddingCache warmed with the benchmark questions (as C/D do), instead
  of re-opening the collection and embedding the question on every turn.
- sql-progress: run_query's time-limit callback (a Python progress handler, so it takes the GIL)
  runs every 1,000,000 SQLite VM steps instead of every 1,000: under concurrency each call waits for
  the GIL held by the event loop, which stretches the SQL of every worker thread.
- sql-cache: the scorer looks the generated SQL up in the per-source result cache it already keeps
  for the ground truth (exact SQL text; not for SQL calling random() or the clock): the same text
  on the same read-only database gives the same rows, so gold (and every correct answer written
  like the GT) stops executing its query a second time.
- no-fsync: atomic writes (request-store records, session checkpoints) skip fsync; they keep the
  temp-file + rename, so a killed process still never leaves half a file (only an OS crash could
  lose the last records: a request would be made again).
- checkpoint-thread: the runner writes a session's checkpoint (write + fsync) in a worker thread
  (`await asyncio.to_thread(...)`) instead of on the event loop, where it stalls every session.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import litellm

import memsql_assets.lib.atomic as atomic_mod
import memsql_assets.lib.evaluation.score as score_mod
import memsql_assets.lib.harness.runner as runner_mod
import memsql_assets.lib.memory.embeddings as embeddings_mod
import memsql_assets.lib.sql.execute as execute_mod
import memsql_assets.lib.trajectories.lookup as lookup_mod
from memsql_assets.lib.memory.chroma import open_collection
from memsql_assets.lib.memory.semantic import SemanticMemory
from memsql_assets.lib.models.builtins import MemsqlBuiltins
from memsql_assets.lib.models.registry import Registry
from memsql_assets.lib.trajectories import store as store_mod

NAMES = (
    "litellm-prices",
    "builtin-cost",
    "semantic-vector",
    "trajectory-vector",
    "sql-progress",
    "sql-cache",
    "no-fsync",
    "checkpoint-thread",
)
NONDETERMINISTIC = re.compile(r"random|now|current_|julianday\s*\(\s*\)", re.IGNORECASE)


@contextlib.contextmanager
def applied(names: Sequence[str], registry: Registry | None = None) -> Iterator[None]:
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise SystemExit(f"unknown --what-if {unknown}; expected some of {list(NAMES)}")
    undo: list[tuple[Any, str, Any]] = []

    def patch(obj: Any, name: str, new: Any) -> None:
        undo.append((obj, name, getattr(obj, name)))
        setattr(obj, name, new)

    if "litellm-prices" in names and registry is not None:
        litellm.register_model(
            {
                e.litellm_model: {
                    "input_cost_per_token": e.price_input_per_mtok / 1e6,
                    "output_cost_per_token": e.price_output_per_mtok / 1e6,
                    "litellm_provider": e.litellm_model.split("/", 1)[0],
                    "mode": "chat",
                }
                for e in registry.entries.values()
            }
        )
    if "builtin-cost" in names:
        orig_ac = MemsqlBuiltins.acompletion

        async def stamped(self: Any, *args: Any, **kwargs: Any) -> Any:
            response = await orig_ac(self, *args, **kwargs)
            response._hidden_params["response_cost"] = 0.0
            return response

        patch(MemsqlBuiltins, "acompletion", stamped)

    caches: list[Any] = []
    if "semantic-vector" in names or "trajectory-vector" in names:
        orig_init = embeddings_mod.EmbeddingCache.__init__

        def remember(self: Any, *args: Any, **kwargs: Any) -> None:
            orig_init(self, *args, **kwargs)
            caches.append(self)

        patch(embeddings_mod.EmbeddingCache, "__init__", remember)
    if "semantic-vector" in names:
        orig_q = SemanticMemory.query

        def query(self: Any, text: str, source: str, k: int = 1, embedding: Any = None) -> Any:
            if embedding is None and caches:
                embedding = caches[-1](text)
            return orig_q(self, text, source, k, embedding)

        patch(SemanticMemory, "query", query)
    if "trajectory-vector" in names:
        orig_lookup = lookup_mod.trajectory_lookup

        def trajectory_lookup(home: Any, server_url: str | None = None) -> Any:
            from memsql_assets.lib.benchmark.gt_check import SOURCE_BY_PREFIX
            from memsql_assets.lib.benchmark.store import read_turns
            from memsql_assets.lib.memory.chroma import chroma_client
            from memsql_assets.lib.memory.embeddings import EmbeddingCache
            from memsql_assets.lib.paths import benchmark_dir

            client = chroma_client(home, server_url)
            col = open_collection(client, store_mod.DEFAULT_COLLECTION, create=False)
            embed = EmbeddingCache()
            embed.warm([t["question"] for t in read_turns(benchmark_dir(home))])

            def lookup(source: str, question: str) -> str | None:
                res = col.query(
                    query_embeddings=[embed(question)],
                    n_results=1,
                    where={"$and": [{"db": SOURCE_BY_PREFIX[source]}, {"phase": store_mod.FULL}]},
                    include=["documents", "metadatas", "distances"],
                )
                docs = res["documents"][0]
                return str(docs[0]) if docs else None

            return lookup

        patch(lookup_mod, "trajectory_lookup", trajectory_lookup)
        _ = orig_lookup
    if "sql-progress" in names:
        patch(execute_mod, "PROGRESS_STEPS", 1_000_000)
    if "sql-cache" in names:
        orig_run_query = score_mod.run_query
        memo: dict[tuple[int, str], Any] = {}

        def run_query(conn: Any, sql: str, *args: Any, **kwargs: Any) -> Any:
            if NONDETERMINISTIC.search(sql):
                return orig_run_query(conn, sql, *args, **kwargs)
            key = (id(conn), sql)
            if key not in memo:
                memo[key] = orig_run_query(conn, sql, *args, **kwargs)
            return memo[key]

        patch(score_mod, "run_query", run_query)
    if "no-fsync" in names:
        patch(atomic_mod, "os", _NoFsyncOs())
    if "checkpoint-thread" in names:
        patch(runner_mod.PartitionRunner, "_run_session", _run_session_checkpoint_in_thread)
    try:
        yield
    finally:
        for obj, name, old in reversed(undo):
            setattr(obj, name, old)


async def _run_session_checkpoint_in_thread(
    self: Any, turns: Sequence[Mapping[str, Any]], stats: Any
) -> list[dict[str, Any]]:
    """PartitionRunner._run_session with one change: the checkpoint is written in a worker thread."""
    ordered = sorted(turns, key=lambda t: t["turn_index"])
    sid = ordered[0]["session_id"]
    while True:
        if self.forget_session:
            await asyncio.to_thread(self.forget_session, sid)
        identity = self.session_guard() if self.session_guard else None
        rows = []
        for turn in ordered:
            rows.append(await self._run_turn(turn))
        if self.session_guard and self.session_guard() != identity:
            stats.redone_sessions += 1
            continue
        break
    if self.commit_session:
        await asyncio.to_thread(self.commit_session)
    await asyncio.to_thread(runner_mod.write_session_checkpoint, self.progress_dir, sid, rows)  # the change
    if self.forget_session and not self.condition.cross_session:
        await asyncio.to_thread(self.forget_session, sid)
    stats.done_turns += len(rows)
    stats.correct += sum(1 for r in rows if r["ex_strict"])
    if self.progress:
        self.progress(stats)
    return rows


class _NoFsyncOs:
    """`os` for memsql_assets.lib.atomic with fsync a no-op (everything else is the real module)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def fsync(fd: int) -> None:
        return None
