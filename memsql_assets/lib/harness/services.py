"""A condition's memory, opened for one partition run (one epoch) and closed after it.

The conditions file names each condition's memory implementation (lib/memory/plugins.py resolves it);
this module gives it what it may use (lib/memory/protocol.py, `MemoryContext`): the run's identity
(its Redis keys and Chroma collection are per model x condition x benchmark version x epoch, so
epochs never see each other), the partition's own folder for stores on disk, the questions' vectors
(all of a partition's questions embedded in one batch up front, when the memory uses vectors), the
trajectory store, and the model gateway for a memory that asks a model.

A resume skips the sessions its checkpoints record, so it is only faithful if the memory those
sessions wrote is still there: if a shared memory lacks a turn of a checkpointed session (its
episodic Chroma directory deleted, or replaced after corruption; M0 per analyst, kept in memory) the
checkpoints are discarded with a warning and the partition is rebuilt from its first session, its
model calls coming back from the request store.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsql_assets.lib.agent.agent import Agent
from memsql_assets.lib.benchmark.store import turn_id as benchmark_turn_id
from memsql_assets.lib.conditions import Condition
from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.harness.results import output_dir, progress_dir, read_checkpoints
from memsql_assets.lib.memory.embeddings import EmbeddingCache
from memsql_assets.lib.memory.episodic import turn_id
from memsql_assets.lib.memory.plugins import build_memory
from memsql_assets.lib.memory.protocol import Memory, MemoryContext, TrajectoryFactory, opened
from memsql_assets.lib.paths import embeddings_cache_dir
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK, History, context_mode

log = logging.getLogger(__name__)

__all__ = ["PartitionServices", "TrajectoryFactory", "open_services"]

# (model key, messages, cell) -> the reply's text: how a memory asks a registry model
AskModel = Callable[[str, list[dict[str, str]], Mapping[str, Any]], Awaitable[str]]


@dataclass
class PartitionServices:
    agent: Agent
    memory: Memory | None  # None: the condition keeps nothing (A): the runner skips the per-session work


def _drop_checkpoints_without_memory(checkpoints: Path, memory: Memory) -> None:
    """Discard the checkpoints if the memory lacks any turn of a session they record as done."""
    done = read_checkpoints(checkpoints)
    stored = memory.stored_turns() if done else None
    if stored is None:
        return
    needed = {turn_id(r["session_id"], r["turn_index"]) for rows in done.values() for r in rows}
    missing = needed - stored
    if missing:
        log.warning(
            "%s: the memory lacks %d turns of %d checkpointed sessions (its store was deleted or replaced, "
            "or is kept in memory only); "
            "discarding the checkpoints and rebuilding the partition from its first session",
            checkpoints,
            len(missing),
            len(done),
        )
        shutil.rmtree(checkpoints)


@contextlib.contextmanager
def open_services(
    home: Path,
    model_key: str,
    condition: Condition,
    benchmark_version: str,
    schemas: Mapping[str, str],
    turns: Sequence[Mapping[str, Any]],
    *,
    redis_url: str | None,
    chroma_url: str | None,
    episodic_k: int,
    trajectory_factory: TrajectoryFactory | None,
    epoch: int = 1,
    sample: int | None = None,
    benchmark: str = PAPER_BENCHMARK,
    ask_model: AskModel | None = None,
    history: History = History.MODEL,
) -> Iterator[PartitionServices]:
    """The agent over `condition`'s memory, which the runner also manages between sessions. A sample
    run (`sample` sessions) keeps memory of its own: it never resets the full run's. A store on disk
    lives in the benchmark's own partition folder and collection (named by its version), so it only
    ever holds, and retrieves, past sessions of the same benchmark. A gold history's memory is its own
    (run id, folder, collection): it never holds a turn of the model's history."""
    mode = context_mode(condition.name, benchmark)
    told = "" if history == History.MODEL else f".{history}"
    run_name = f"{model_key}.{condition.name}.{benchmark_version}.{mode}{told}.epoch{epoch}"
    memory = build_memory(condition)
    embed = None
    if getattr(memory, "uses_vectors", False):
        embed = EmbeddingCache(store=embeddings_cache_dir(home))
        embed.warm([t["question"] for t in turns])  # one batch, fixed order: deterministic vectors
    checkpoints = progress_dir(home, model_key, condition.name, epoch, sample, benchmark, history)
    ctx = MemoryContext(
        home=home,
        run_id=run_name if sample is None else f"{run_name}.sample{sample}",
        model=model_key,
        condition=condition.name,
        benchmark=benchmark,
        benchmark_version=benchmark_version,
        epoch=epoch,
        sample=sample,
        store_dir=output_dir(home, model_key, condition.name, sample, benchmark, history),
        progress_dir=checkpoints,
        questions=[(t["source"], t["question"]) for t in turns],
        episodic_k=episodic_k,
        redis_url=redis_url,
        chroma_url=chroma_url,
        trajectory_factory=trajectory_factory,
        embed=embed,
        acomplete=ask_model,
        context_mode=mode,
        history=history,
    )
    with opened(memory, ctx):
        _drop_checkpoints_without_memory(checkpoints, memory)
        annotations = (
            {benchmark_turn_id(t): t["state_updates"] for t in turns} if mode == ContextMode.OBSERVED else {}
        )
        agent = Agent(condition, schemas, memory, embed, mode, annotations)
        yield PartitionServices(agent=agent, memory=memory if getattr(memory, "stateful", True) else None)
