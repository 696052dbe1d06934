"""Evaluate one partition end to end: services up, agent built for the condition, run, publish.

This is the one place that knows which stores a condition needs: Redis only when it has a
working-memory window, episodic Chroma only for C/D (kept inside the partition's own result
directory, so two partitions never write one Chroma database), semantic Chroma read-only for D,
the trajectory store for E.

A resume skips the sessions its checkpoints record, so it is only faithful if the memory those
sessions wrote is still there: if the partition's episodic Chroma directory was deleted (or
replaced after corruption) the checkpoints are discarded with a warning and the partition is
rebuilt from its first session, its model calls coming back from the request store.

API keys: a provider may echo the key in an error message (e.g. "Incorrect API key provided:
sk-..."). The request store redacts what it writes, but the reply handed back for the turn carries
the raw message, so every reply is redacted here before it becomes a row, a checkpoint or a file.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memsql_assets.lib.agent.agent import Agent
from memsql_assets.lib.agent.conditions import Condition, get_condition
from memsql_assets.lib.agent.schema import schema_text
from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.benchmark.gt_check import SOURCE_BY_PREFIX
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.freshness import code_hash, digest, first_difference, read_stamp, tree_hash
from memsql_assets.lib.harness.results import (
    RESULT_FILE,
    SUMMARY_FILE,
    partition_dir,
    progress_dir,
    read_checkpoints,
)
from memsql_assets.lib.harness.runner import PartitionRunner, Progress
from memsql_assets.lib.harness.summary import summarize
from memsql_assets.lib.memory.chroma import chroma_client, collection_name, open_collection
from memsql_assets.lib.memory.embeddings import EmbeddingCache
from memsql_assets.lib.memory.episodic import EpisodicMemory, turn_id
from memsql_assets.lib.memory.redis_service import redis_connection
from memsql_assets.lib.memory.semantic import SemanticMemory
from memsql_assets.lib.memory.working import WorkingMemory
from memsql_assets.lib.models.gateway import ModelGateway, ModelReply
from memsql_assets.lib.models.registry import ModelEntry, Registry, load_registry
from memsql_assets.lib.models.request_store import REDACTED, RequestStore
from memsql_assets.lib.paths import benchmark_dir, source_db_path

log = logging.getLogger(__name__)


class ModelUnavailableError(MemsqlError):
    pass


@dataclass(frozen=True)
class EvalSettings:
    redis_url: str | None = None
    chroma_url: str | None = None
    episodic_k: int = 3
    timeout_s: float = 10.0
    row_cap: int = 100_000
    retry_errors: bool = False  # re-ask every turn whose recorded reply is a failure


@dataclass(frozen=True)
class PartitionOutcome:
    summary: dict[str, Any]
    result_path: Path
    rows: list[dict[str, Any]]


def benchmark_version(home: Path) -> str:
    return sha256_file(benchmark_dir(home) / "turns.jsonl")[:16]


def model_fingerprint(entry: ModelEntry) -> str:
    """Identity of what is called: a changed model id, params or reasoning config makes results stale."""
    text = json.dumps(
        {"model": entry.litellm_model, "params": entry.call_params()}, sort_keys=True, default=str
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# The code a partition's result depends on: a change here makes every partition stale (a re-run
# replays unchanged prompts from the request store, so only what really changed costs model calls).
HARNESS_PACKAGES = (
    "lib/agent",
    "lib/evaluation",
    "lib/harness",
    "lib/memory",
    "lib/models",
    "lib/sql",
    "lib/trajectories",
)
STALE_REASONS = {
    "missing": "missing",
    "benchmark": "benchmark changed",
    "sources": "source data changed",
    "model": "model configuration changed",
    "harness": "harness code changed",
    "settings": "evaluation settings changed",
    "trajectories": "trajectory store changed",
}


def partition_inputs(
    home: Path, entry: ModelEntry, condition: Condition, settings: EvalSettings
) -> dict[str, str]:
    """Fingerprints of everything a partition's result is a function of (the keys of STALE_REASONS)."""
    inputs = {
        "benchmark": benchmark_version(home),
        "sources": digest({p: sha256_file(source_db_path(home, n)) for p, n in SOURCE_BY_PREFIX.items()}),
        "model": model_fingerprint(entry),
        "harness": code_hash(*HARNESS_PACKAGES),
        "settings": digest(
            {"episodic_k": settings.episodic_k, "timeout_s": settings.timeout_s, "row_cap": settings.row_cap}
        ),
    }
    if condition.trajectory:
        inputs["trajectories"] = tree_hash(home / "trajectories")
    return inputs


def partition_staleness(
    home: Path, entry: ModelEntry, condition_name: str, settings: EvalSettings | None = None
) -> str | None:
    """Why the partition's published result is out of date ("missing", "benchmark changed", ...), or None."""
    condition = get_condition(condition_name)
    out = partition_dir(home, entry.key, condition.name)
    summary = read_stamp(out / SUMMARY_FILE)
    if summary is None or not (out / RESULT_FILE).exists():
        return STALE_REASONS["missing"]
    if "inputs" not in summary:
        return "computed by an older memsql (no input fingerprints recorded)"
    key = first_difference(
        summary.get("inputs"), partition_inputs(home, entry, condition, settings or EvalSettings())
    )
    return STALE_REASONS[key] if key else None


TrajectoryFactory = Callable[[Path], Callable[[str, str], str | None]]


@contextlib.contextmanager
def _working_memory(home: Path, condition: Condition, settings: EvalSettings, run_id: str) -> Iterator[Any]:
    if not condition.window:
        yield None, None
        return
    with redis_connection(home, settings.redis_url) as client:
        yield client, WorkingMemory(client, run_id)


def _secret_values(gateway: ModelGateway) -> list[str]:
    """Values of the API-key variables the registry names (longest first; short ones, like the request
    store, are ignored: they would redact innocent text)."""
    values = {
        gateway.environ.get(e.api_key_env, "") for e in gateway.registry.entries.values() if e.api_key_env
    }
    return sorted((v for v in values if len(v) >= 8), key=len, reverse=True)


def _redacting(
    call_model: Callable[..., Awaitable[ModelReply]], secrets: list[str]
) -> Callable[..., Awaitable[ModelReply]]:
    """`call_model` whose replies have every known key value replaced in text, reasoning and error."""
    if not secrets:
        return call_model

    def clean(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, REDACTED)
        return text

    async def call(*args: Any, **kwargs: Any) -> ModelReply:
        reply = await call_model(*args, **kwargs)
        error = reply.error_message
        return replace(
            reply,
            text=clean(reply.text),
            reasoning=clean(reply.reasoning),
            error_message=clean(error) if error is not None else None,
        )

    return call


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


def evaluate_partition(
    home: Path,
    model_key: str,
    condition_name: str,
    settings: EvalSettings | None = None,
    registry: Registry | None = None,
    progress: Progress | None = None,
    trajectory_factory: TrajectoryFactory | None = None,
    gateway: ModelGateway | None = None,
) -> PartitionOutcome:
    settings = settings or EvalSettings()
    condition = get_condition(condition_name)
    registry = registry or load_registry()
    entry = registry.get(model_key)  # unknown key -> clear error naming the registry file
    ok, reason = registry.available(model_key)
    if not ok:
        raise ModelUnavailableError(f"model {entry.key} is unavailable: {reason}")
    if condition.trajectory and trajectory_factory is None:
        raise MemsqlError("condition E needs the trajectory store: materialize trajectory_store first")

    turns = read_turns(benchmark_dir(home))
    version = benchmark_version(home)
    inputs = partition_inputs(home, entry, condition, settings)  # before the run: what it was computed from
    db_paths = {prefix: source_db_path(home, name) for prefix, name in SOURCE_BY_PREFIX.items()}
    schemas = {prefix: schema_text(path) for prefix, path in db_paths.items()}
    gateway = gateway or ModelGateway(
        registry, RequestStore(home / "requests"), home=home, retry_errors=settings.retry_errors
    )
    run_id = f"{model_key}.{condition.name}.{version}"
    started = time.monotonic()

    with _working_memory(home, condition, settings, run_id) as (redis_client, working):
        episodic = None
        if condition.episodic:
            client = chroma_client(partition_dir(home, model_key, condition.name), settings.chroma_url)
            episodic = EpisodicMemory(client, collection_name("episodic", model_key, condition.name, version))
            _drop_checkpoints_without_memory(progress_dir(home, model_key, condition.name), episodic)
        semantic = SemanticMemory(chroma_client(home, settings.chroma_url)) if condition.semantic else None
        trajectories = trajectory_factory(home) if condition.trajectory and trajectory_factory else None
        embed = None
        if condition.episodic or condition.semantic or condition.trajectory:
            embed = EmbeddingCache()
            embed.warm([t["question"] for t in turns])  # one batch, fixed order: deterministic vectors
        agent = Agent(
            condition, schemas, working, episodic, semantic, trajectories, settings.episodic_k, embed
        )

        def reset_memory(done: set[str]) -> None:
            if working is not None and not done:
                working.clear_run()
            if episodic is not None:
                # A resume keeps exactly the checkpointed sessions' turns: memory is committed before
                # checkpoints, so a run killed in between stored sessions that it will now redo.
                if done:
                    episodic.retain_sessions(done)
                else:
                    episodic.reset()

        def forget_session(session_id: str) -> None:
            if working is not None:
                working.clear(session_id)
            if episodic is not None:
                episodic.forget_session(session_id)

        runner = PartitionRunner(
            model_key=model_key,
            agent=agent,
            call_model=_redacting(gateway.acomplete, _secret_values(gateway)),
            home=home,
            db_paths=db_paths,
            benchmark_version=version,
            concurrency=entry.max_concurrency,
            timeout_s=settings.timeout_s,
            row_cap=settings.row_cap,
            progress=progress,
            session_guard=(lambda: str(redis_client.info("server")["run_id"])) if redis_client else None,
            reset_memory=reset_memory,
            forget_session=forget_session if working is not None or episodic is not None else None,
            commit_session=episodic.flush if episodic is not None else None,
        )
        rows, stats = asyncio.run(runner.run(turns))
    summary = summarize(rows, model_key, condition.name, time.monotonic() - started)
    summary.update(
        benchmark_version=version,
        resumed_sessions=stats.resumed_sessions,
        redone_sessions=stats.redone_sessions,
        model_calls_this_run=gateway.calls,
        model_fingerprint=model_fingerprint(entry),
        inputs=inputs,
    )
    path = runner.finish(rows, summary)
    return PartitionOutcome(summary=summary, result_path=path, rows=rows)
