"""Evaluate one partition end to end: check the model, open the condition's services, run, publish.

API keys: a provider may echo the key in an error message (e.g. "Incorrect API key provided:
sk-..."). The request store redacts what it writes, but the reply handed back for the turn carries
the raw message, so every reply is redacted here before it becomes a row, a checkpoint or a file.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import memsql_assets.lib.reference  # noqa: F401  (registers the built-in models with the gateway)
from memsql_assets.lib.agent.limits import AgentLimits
from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.benchmark.sample import allowed_range, sample_turns
from memsql_assets.lib.benchmark.store import read_turns, turn_id
from memsql_assets.lib.conditions import Condition, get_condition
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.harness.results import (
    RESULT_FILE,
    ResultSchemaError,
    full_epochs,
    partition_dir,
    read_results,
)
from memsql_assets.lib.harness.runner import PartitionRunner, Progress, RunStats
from memsql_assets.lib.harness.schedule import twins_reachable_pct
from memsql_assets.lib.harness.services import TrajectoryFactory, open_services
from memsql_assets.lib.harness.settings import EvalSettings, check_epochs, resolve_wave_size
from memsql_assets.lib.harness.summary import PartitionSummary, cross_session_turns, summarize
from memsql_assets.lib.history import check_history
from memsql_assets.lib.memory.plugins import check_benchmark, check_conditions, check_context_mode
from memsql_assets.lib.models.gateway import ModelGateway, ModelReply
from memsql_assets.lib.models.registry import ModelEntry, Registry, load_registry
from memsql_assets.lib.models.request_store import RequestStore, evaluation_cell, redact
from memsql_assets.lib.paths import benchmark_dir, source_db_path, turns_file
from memsql_assets.lib.sql.schema import schema_text
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK, SOURCE_BY_PREFIX, History, context_mode, history

log = logging.getLogger(__name__)


class ModelUnavailableError(MemsqlError):
    pass


@dataclass(frozen=True)
class PartitionOutcome:
    summary: dict[str, Any]  # PartitionSummary's fields, as a mapping for the library's callers
    result_path: Path
    rows: list[dict[str, Any]]


def benchmark_version(home: Path, benchmark: str = PAPER_BENCHMARK) -> str:
    return sha256_file(turns_file(home, benchmark))[:16]


def _redacting(
    call_model: Callable[..., Awaitable[ModelReply]], secrets: list[str]
) -> Callable[..., Awaitable[ModelReply]]:
    """`call_model` whose replies have every known key value replaced in text, reasoning and error."""
    if not secrets:
        return call_model

    async def call(*args: Any, **kwargs: Any) -> ModelReply:
        reply = await call_model(*args, **kwargs)
        error = reply.error_message
        return replace(
            reply,
            text=redact(reply.text, secrets),
            reasoning=redact(reply.reasoning, secrets),
            error_message=redact(error, secrets) if error is not None else None,
        )

    return call


def _in_cells(
    call_model: Callable[..., Awaitable[ModelReply]],
    condition: str,
    share_identical_prompts: bool,
    epoch: int,
    retries: Mapping[str, int],
    history: History = History.MODEL,
) -> Callable[..., Awaitable[ModelReply]]:
    """`call_model` that asks for the evaluation cell's own answer in `epoch`. With prompts shared,
    identical prompts share one answer within an epoch (epoch 1: the schema-1 key, no cell at all),
    and epochs stay independent samples. A turn retried n times (`retries`, by turn id) asks for
    its cell's n-th retry: a new answer, which later runs replay. A gold history's cells are their
    own: never the model history's answer, even to an identical prompt."""
    gold = {} if history == History.MODEL else {"history": history.value}
    if share_identical_prompts and epoch == 1 and not retries and not gold:
        return call_model

    async def call(
        model_key: str,
        messages: list[dict[str, Any]],
        context: Mapping[str, Any],
        tools: list[dict[str, Any]] | None = None,
    ) -> ModelReply:
        retry = retries.get(context["turn_id"], 0)
        offered = {"tools": tools} if tools else {}  # a call without tools is the single-shot one
        if share_identical_prompts and not retry:
            if epoch == 1 and not gold:
                return await call_model(model_key, messages, context, **offered)
            cell: dict[str, Any] = {"epoch": epoch}
        else:
            cell = evaluation_cell(model_key, condition, context["turn_id"], epoch=epoch)
        cell.update(gold)
        if retry:
            cell["retry"] = retry
        return await call_model(model_key, messages, context, cell=cell, **offered)

    return call


def retry_counts(
    home: Path,
    model: str,
    condition: str,
    only_failed: bool,
    benchmark: str = PAPER_BENCHMARK,
    history: History = History.MODEL,
) -> dict[int, dict[str, int]]:
    """By epoch and turn id, how often the partition's published turns were asked again; with
    `only_failed`, one more for each turn whose recorded answer is not strictly correct."""
    path = partition_dir(home, model, condition, benchmark, history) / RESULT_FILE
    if not path.exists():
        return {}
    try:
        rows = read_results(path)
    except ResultSchemaError:
        if only_failed:
            raise
        return {}  # a file of an older schema predates retries; this run rewrites it
    counts: dict[int, dict[str, int]] = {}
    for row in rows:
        n = (row.get("retries") or 0) + (1 if only_failed and not row["ex_strict"] else 0)
        if n:
            counts.setdefault(row["epoch"], {})[turn_id(row)] = n
    return counts


def _retries(
    home: Path, model_key: str, condition_name: str, settings: EvalSettings, benchmark: str, told: History
) -> dict[int, dict[str, int]]:
    """A full run's retry counts (`retry_counts`); a sample retries nothing."""
    if settings.sessions is not None:
        return {}
    return retry_counts(home, model_key, condition_name, settings.only_failed, benchmark, told)


def _run_epochs(
    run: _PartitionRun, epochs: int, turns: list[dict[str, Any]], retries: Mapping[int, Mapping[str, int]]
) -> tuple[PartitionRunner, list[dict[str, Any]], list[RunStats]]:
    """Epoch by epoch, each with its own memory and checkpoints: a finished epoch is resumed from its
    checkpoints, or re-run from the request store (no model call) when its partition was published.
    Returns the last epoch's runner, every epoch's rows and each epoch's stats."""
    rows: list[dict[str, Any]] = []
    stats_by_epoch: list[RunStats] = []
    for epoch in range(1, epochs + 1):
        runner, epoch_rows, stats = run.epoch(epoch, turns, retries.get(epoch, {}))
        rows += epoch_rows
        stats_by_epoch.append(stats)
    return runner, rows, stats_by_epoch


def evaluate_partition(
    home: Path,
    model_key: str,
    condition_name: str,
    settings: EvalSettings | None = None,
    registry: Registry | None = None,
    progress: Progress | None = None,
    trajectory_factory: TrajectoryFactory | None = None,
    gateway: ModelGateway | None = None,
    api_keys: Mapping[str, str] | None = None,
    benchmark: str = PAPER_BENCHMARK,
) -> PartitionOutcome:
    """`api_keys`: the values of the registry's key variables (the Dagster asset passes them through
    `dg.EnvVar`); a library caller that passes none gets the process environment's. `benchmark`:
    whose turns to evaluate; each benchmark has its own result files, checkpoints and memory."""
    settings = settings or EvalSettings()
    api_keys = os.environ if api_keys is None else api_keys
    registry = registry or load_registry()
    told = history(condition_name, check_history(settings.history) if settings.history else None)
    epochs = _epochs(home, model_key, condition_name, settings, benchmark, told)  # before anything is written
    condition, entry = _runnable(registry, model_key, condition_name, settings, api_keys, home, benchmark)
    limits = AgentLimits(settings.agent_max_steps, settings.agent_time_limit_s)  # below 1: one line
    all_turns = read_turns(benchmark_dir(home, benchmark))
    sample = settings.sessions
    fixed = _partition_sample(entry, all_turns) if sample is None else None  # the reference agent's
    turns = sample_turns(all_turns, fixed if sample is None else sample)  # a bad size fails here
    retries = _retries(home, model_key, condition_name, settings, benchmark, told)
    gateway = gateway or _gateway(registry, home, api_keys, settings, entry)
    run = _PartitionRun(
        home, entry, condition, settings, benchmark, progress, trajectory_factory, gateway, limits, registry, told
    )
    started = time.monotonic()
    runner, rows, stats_by_epoch = _run_epochs(run, epochs, turns, retries)
    wall_s, reasoning = time.monotonic() - started, entry.reasoning.expected
    scores = summarize(rows, model_key, condition.name, wall_s, reasoning, cross_session_turns(turns))
    summary = PartitionSummary(
        **scores.model_dump()
        | dict(
            epochs=epochs,
            benchmark=benchmark,
            benchmark_version=run.version,
            retried_turns=sum(1 for r in rows if r["retries"]),
            **_gateway_fields(gateway, model_key),
            model_fingerprint=entry.fingerprint(),
            share_identical_prompts=settings.share_identical_prompts,
            **_coverage(turns, all_turns, sample, fixed),
            # Rows of a shared memory (C, D) are a function of W (runner.py); per-session memory has no waves.
            wave_size=runner.wave_size if runner.shared else None,
            twins_reachable_pct=twins_reachable_pct(turns, runner.wave_size) if runner.shared else None,
            **_memory_fields(condition, benchmark, told),
            **_epoch_counts(stats_by_epoch),
        )
    )
    path = runner.finish(rows, summary)
    return PartitionOutcome(summary=summary.model_dump(), result_path=path, rows=rows)


def _gateway(
    registry: Registry, home: Path, api_keys: Mapping[str, str] | None, settings: EvalSettings, entry: ModelEntry
) -> ModelGateway:
    """The run's gateway, its live cost cap the run's setting, else the registry entry's."""
    cap = settings.max_cost_usd if settings.max_cost_usd is not None else entry.max_cost_usd
    return ModelGateway(
        registry, RequestStore.at_home(home), home=home, environ=api_keys, retry_errors=settings.retry_errors, max_cost_usd=cap
    )


def _gateway_fields(gateway: ModelGateway, model_key: str) -> dict[str, Any]:
    """What the run asked: calls made (not replayed), the adaptive limit's range, damaged records asked again."""
    return {
        "model_calls_this_run": gateway.calls,
        "concurrency": gateway.limit(model_key).stats(),
        "damaged_records": gateway.store.rejected,
    }


def _memory_fields(condition: Condition, benchmark: str, told: History) -> dict[str, str]:
    """The partition's memory: its implementation, the context mode it was given and whose history."""
    mode = context_mode(condition.name, benchmark).value
    return {"memory_implementation": condition.implementation, "context_mode": mode, "history": told.value}


def _epoch_counts(stats: list[RunStats]) -> dict[str, int]:
    """Summed over the epochs: sessions resumed and redone, and what the memory held (a shared one after
    the run, a per-session one over its sessions as each ended; resumed sessions are not measured again)."""
    return {
        "resumed_sessions": sum(s.resumed_sessions for s in stats),  # sessions x epochs
        "redone_sessions": sum(s.redone_sessions for s in stats),
        "memory_store_entries": sum(s.store.entries for s in stats),
        "memory_store_bytes": sum(s.store.bytes for s in stats),
    }


def _coverage(
    turns: Sequence[Mapping[str, Any]], all_turns: Sequence[Mapping[str, Any]], sample: int | None, fixed: int | None
) -> dict[str, Any]:
    """What of the benchmark the run covers: `complete` unless a sample run (`--sessions`) leaves
    sessions out; the fixed sample of the model's entry; the sessions, when not all."""
    return {
        "complete": sample is None or len(turns) == len(all_turns),
        "partition_sample": fixed,
        "sample_sessions": sorted({t["session_id"] for t in turns}) if len(turns) < len(all_turns) else None,
    }


def _partition_sample(entry: ModelEntry, turns: Sequence[Mapping[str, Any]]) -> int | None:
    """The sample a model's entry fixes for its partitions (the reference agent's), None for every
    session; a benchmark with no more sessions than that is evaluated whole."""
    if entry.sessions is None or entry.sessions >= allowed_range(turns)[1]:
        return None
    return entry.sessions


def _epochs(
    home: Path, model_key: str, condition_name: str, settings: EvalSettings, benchmark: str, told: History
) -> int:
    """The epochs to run: the setting, else 1 for a sample, else those of the last full evaluation."""
    requested = settings.epochs
    if requested is None:
        requested = (
            1 if settings.sessions is not None else full_epochs(home, model_key, condition_name, benchmark, told)
        )
    return check_epochs(requested)


def _runnable(
    registry: Registry,
    model_key: str,
    condition_name: str,
    settings: EvalSettings,
    api_keys: Mapping[str, str],
    home: Path,
    benchmark: str,
) -> tuple[Condition, ModelEntry]:
    """The condition and the registry entry, once everything a run needs is known to be there."""
    condition = get_condition(condition_name)
    entry = registry.get(model_key)  # unknown key -> clear error naming the registry file
    resolve_wave_size(settings.wave_size, entry.max_concurrency)  # before any service starts
    ok, reason = registry.available(model_key, api_keys, home)
    if not ok:
        raise ModelUnavailableError(f"model {entry.key} is unavailable: {reason}")
    check_conditions([condition.name])  # its memory imports and takes its params, before anything runs
    check_benchmark(condition, benchmark)  # scope: analyst needs a benchmark whose sessions name their analyst
    check_context_mode(condition, context_mode(condition.name, benchmark))  # a plug-in reading withheld keys
    return condition, entry


@dataclass
class _PartitionRun:
    """What every epoch of one partition shares: its inputs, the gateway and the source databases."""

    home: Path
    entry: ModelEntry
    condition: Condition
    settings: EvalSettings
    benchmark: str
    progress: Progress | None
    trajectory_factory: TrajectoryFactory | None
    gateway: ModelGateway
    limits: AgentLimits
    registry: Registry
    history: History

    def __post_init__(self) -> None:
        self.version = benchmark_version(self.home, self.benchmark)
        self.db_paths = {prefix: source_db_path(self.home, name) for prefix, name in SOURCE_BY_PREFIX.items()}
        self.schemas = {prefix: schema_text(path) for prefix, path in self.db_paths.items()}
        self.call_model = _redacting(self.gateway.acomplete, self.gateway.store.secrets)  # the keys' values

    async def ask_model(self, epoch: int, model_key: str, messages: list[dict[str, str]], cell: Mapping[str, Any]) -> str:
        """A memory's question to a registry model (a summary's writer), as its own request-store cell
        of this partition and epoch; a failed call raises (the turn's memory_error)."""
        cell = {**cell, "model": model_key, "condition": self.condition.name, "epoch": epoch}
        if self.history != History.MODEL:
            cell["history"] = self.history.value
        self.registry.get(model_key)  # an unknown key: the registry's error, naming its file
        reply = await self.call_model(model_key, messages, {}, cell=cell)
        if not reply.ok:
            raise MemsqlError(f"{model_key} did not answer the memory's request ({reply.error_type}): {reply.error_message}")
        return reply.text

    def epoch(
        self, epoch: int, turns: list[dict[str, Any]], retries: dict[str, int]
    ) -> tuple[PartitionRunner, list[dict[str, Any]], RunStats]:
        """One epoch with its own services (memory, stores) and checkpoints."""
        s = self.settings
        with open_services(
            self.home,
            self.entry.key,
            self.condition,
            self.version,
            self.schemas,
            turns,
            redis_url=s.redis_url,
            chroma_url=s.chroma_url,
            episodic_k=s.episodic_k,
            trajectory_factory=self.trajectory_factory,
            epoch=epoch,
            sample=s.sessions,
            benchmark=self.benchmark,
            ask_model=functools.partial(self.ask_model, epoch),
            history=self.history,
        ) as services:
            self.gateway.store.make_shards()  # once the services are up: a run that cannot start writes nothing
            runner = PartitionRunner(
                model_key=self.entry.key,
                agent=services.agent,
                call_model=_in_cells(
                    self.call_model, self.condition.name, s.share_identical_prompts, epoch, retries, self.history
                ),
                home=self.home,
                db_paths=self.db_paths,
                benchmark_version=self.version,
                concurrency=self.entry.max_concurrency,
                timeout_s=s.sql_timeout_s,
                row_cap=s.row_cap,
                progress=self.progress,
                memory=services.memory,
                wave_size=s.wave_size,
                epoch=epoch,
                sample=s.sessions,
                retries=retries,
                benchmark=self.benchmark,
                agent_limits=self.limits,
                history=self.history,
            )
            rows, stats = asyncio.run(runner.run(turns))
        return runner, rows, stats
