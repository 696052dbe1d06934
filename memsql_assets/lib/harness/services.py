"""The stores a condition reads and writes, opened for one partition run and closed after it.

This is the one place that knows which stores a condition needs: Redis only when it has a
working-memory window, episodic Chroma only for C/D (kept inside the partition's own result
directory, so two partitions never write one Chroma database), semantic Chroma read-only for D,
the trajectory store for E. Each epoch of a partition has its own memory (Redis keys and a Chroma
collection per model x condition x benchmark version x epoch), so that epochs never see each other.

A resume skips the sessions its checkpoints record, so it is only faithful if the memory those
sessions wrote is still there: if the partition's episodic Chroma directory was deleted (or
replaced after corruption) the checkpoints are discarded with a warning and the partition is
rebuilt from its first session, its model calls coming back from the request store.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memsql_assets.lib.agent.agent import Agent, TrajectoryLookup
from memsql_assets.lib.agent.conditions import Condition
from memsql_assets.lib.harness.results import output_dir, progress_dir, read_checkpoints
from memsql_assets.lib.memory.chroma import chroma_client, collection_name, open_collection
from memsql_assets.lib.memory.embeddings import EmbeddingCache
from memsql_assets.lib.memory.episodic import EpisodicMemory, turn_id
from memsql_assets.lib.memory.redis_service import redis_connection
from memsql_assets.lib.memory.semantic import SemanticMemory
from memsql_assets.lib.memory.working import WorkingMemory
from memsql_assets.lib.paths import embeddings_cache_dir
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK

log = logging.getLogger(__name__)

TrajectoryFactory = Callable[[Path], TrajectoryLookup]

SERVER_TOKEN_KEY = "memsql:server-token"  # never expires; a restarted server has none


class PartitionMemory(Protocol):
    """What the runner asks of a condition's memory, across the sessions of one partition run."""

    def identity(self) -> str | None:
        """The memory server's identity; a change within a session means its memory was lost."""
        ...

    def start(self, done: set[str]) -> None:
        """Before the run: keep exactly the memory of the sessions already done (all, on a fresh run)."""
        ...

    def forget(self, session_id: str) -> None:
        """Drop one session's entries (before it is (re)run; after it, for per-session memory)."""
        ...

    def end_wave(self, sessions: Sequence[str]) -> None:
        """A wave of sessions has finished: their memory becomes visible to every later session."""
        ...

    def commit(self) -> None:
        """Make the finished sessions' memory durable (before their checkpoints are written)."""
        ...


@dataclass
class ConditionMemory:
    """Working memory (Redis) and episodic memory (Chroma), as the condition has them."""

    working: WorkingMemory | None
    episodic: EpisodicMemory | None
    redis: Any | None

    def identity(self) -> str | None:
        """A token that changes when the Redis server restarts (its data, and this key, are gone).
        One GET: INFO server, which also changes then, costs a parse of ~100 fields per session."""
        if self.redis is None:
            return None
        token = self.redis.get(SERVER_TOKEN_KEY)
        if token is None:
            self.redis.set(SERVER_TOKEN_KEY, uuid.uuid4().hex, nx=True)
            token = self.redis.get(SERVER_TOKEN_KEY)
        return token.decode() if isinstance(token, bytes) else str(token)

    def start(self, done: set[str]) -> None:
        if self.working is not None and not done:
            self.working.clear_run()
        if self.episodic is not None:
            # A resume keeps exactly the checkpointed sessions' turns: memory is committed before
            # checkpoints, so a run killed in between stored sessions that it will now redo.
            if done:
                self.episodic.retain_sessions(done)
            else:
                self.episodic.reset()

    def forget(self, session_id: str) -> None:
        if self.working is not None:
            self.working.clear(session_id)
        if self.episodic is not None:
            self.episodic.forget_session(session_id)

    def end_wave(self, sessions: Sequence[str]) -> None:
        if self.episodic is not None:
            self.episodic.publish(sessions)

    def commit(self) -> None:
        if self.episodic is not None:
            self.episodic.flush()


@dataclass
class PartitionServices:
    agent: Agent
    memory: PartitionMemory | None  # None: the condition keeps no memory (A)


def _drop_checkpoints_without_memory(checkpoints: Path, episodic: EpisodicMemory) -> None:
    """Discard the checkpoints if episodic memory lacks any turn of a session they record as done."""
    done = read_checkpoints(checkpoints)
    if not done:
        return
    needed = {turn_id(r["session_id"], r["turn_index"]) for rows in done.values() for r in rows}
    stored = set(open_collection(episodic.client, episodic.name).get(include=[])["ids"])
    missing = needed - stored
    if missing:
        log.warning(
            "%s: episodic memory %r lacks %d turns of %d checkpointed sessions (its Chroma directory was "
            "deleted or replaced); discarding the checkpoints and rebuilding the partition from its first session",
            checkpoints,
            episodic.name,
            len(missing),
            len(done),
        )
        shutil.rmtree(checkpoints)


@contextlib.contextmanager
def _redis(home: Path, condition: Condition, url: str | None) -> Iterator[Any]:
    if not condition.window:
        yield None
        return
    with redis_connection(home, url) as client:
        yield client


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
) -> Iterator[PartitionServices]:
    """The agent for `condition` over its stores, and the memory the runner manages between sessions.
    A sample run (`sample` sessions) keeps memory of its own: it never resets the full run's. Episodic
    memory lives in the benchmark's own partition directory and collection (named by its version), so
    it only ever holds, and retrieves, past sessions of the same benchmark."""
    run_name = f"{model_key}.{condition.name}.{benchmark_version}.epoch{epoch}"
    run_id = run_name if sample is None else f"{run_name}.sample{sample}"
    with _redis(home, condition, redis_url) as client:
        working = WorkingMemory(client, run_id) if client is not None else None
        episodic = None
        if condition.episodic:
            chroma = chroma_client(output_dir(home, model_key, condition.name, sample, benchmark), chroma_url)
            parts = [f"epoch{epoch}"] + ([] if sample is None else [f"sample{sample}"])
            episodic = EpisodicMemory(
                chroma, collection_name("episodic", model_key, condition.name, benchmark_version, *parts)
            )
            _drop_checkpoints_without_memory(
                progress_dir(home, model_key, condition.name, epoch, sample, benchmark), episodic
            )
        semantic = SemanticMemory(chroma_client(home, chroma_url)) if condition.semantic else None
        trajectories = trajectory_factory(home) if condition.trajectory and trajectory_factory else None
        embed = None
        if condition.episodic or condition.semantic or condition.trajectory:
            embed = EmbeddingCache(store=embeddings_cache_dir(home))
            embed.warm([t["question"] for t in turns])  # one batch, fixed order: deterministic vectors
            # The static stores answer every turn up front, in one batched query per source.
            queries = [(t["source"], t["question"], embed(t["question"])) for t in turns]
            for store in (semantic, trajectories):
                if hasattr(store, "warm"):
                    store.warm(queries)
        agent = Agent(condition, schemas, working, episodic, semantic, trajectories, episodic_k, embed)
        memory = ConditionMemory(working, episodic, client) if working or episodic else None
        yield PartitionServices(agent=agent, memory=memory)
