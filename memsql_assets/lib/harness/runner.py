"""Run one partition (model × condition) over the benchmark, resumably.

Sessions are the unit of work and of checkpointing: a finished session's rows are written under
`_progress/` atomically, so a run killed at any point (kill -9) resumes by skipping finished
sessions; the interrupted session is redone from its first turn, and its model calls come back
from the request store, so the resumed run ends with exactly the rows of an uninterrupted one.

Conditions without cross-session state (A, B, B_wm5, E, T) run sessions concurrently, bounded by the
model's concurrency. Conditions with episodic memory (C, D) run each source's sessions in waves of W
consecutive sessions of that source (session order; W defaults to the model's concurrency): the
sessions of a wave run concurrently, each sees its own earlier turns and every turn of its source's
earlier waves, never a wave-mate's (episodic.py), so rows are a pure function of W. Retrieval never
crosses sources, so the three sources' chains of waves run side by side: while one waits for its
wave's longest session, the others fill the free slots. W = 1 is the paper's strictly sequential
order (session i sees exactly the earlier sessions of its source, all retrieval can reach). A wave's
sessions start one after another, longest first, each once the one before has sent its first request,
so that their turns do not fall into lock-step (only timing: what each sees is fixed by the waves).
Memory is stored, and then checkpoints written, once COMMIT_EVERY_SESSIONS sessions' waves have
finished since the last commit; a killed run redoes the sessions since, and a wave counts as done only
if it and every earlier wave of its source were wholly checkpointed (checkpoints are written one by one).
Checkpoints of another W, or of waves cut another way (WAVES), are void.

One runner runs one epoch (one independent sample of every turn): its checkpoints live under
`_progress/epoch=<n>/` and its rows carry the epoch, so each epoch resumes on its own.

An unusable endpoint stops the partition: after `stop_after_failures` consecutive turns fail with
the same endpoint failure (gateway.ENDPOINT_FAILURES), no success between, the run raises
PartitionStopped naming the model, the endpoint and the cause. A session with such a failure is
never checkpointed (in C and D, nor is any later one: it saw that session's memory), so a re-run
after the fix re-asks those turns; the request store never replays them. A turn refused for the
run's cost cap (gateway COST_CAP) stops the partition at once, in the same way.
"""

from __future__ import annotations

import asyncio
import functools
import json
import queue
import shutil
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsql_assets.lib.agent.agent import Agent, MemoryFailure, TurnPrompt, turn_context
from memsql_assets.lib.agent.agent_turn import agent_turn, turn_reply
from memsql_assets.lib.agent.limits import AgentLimits
from memsql_assets.lib.agent.loop import AgentTrace, trace_json
from memsql_assets.lib.agent.turn_tools import TurnTools, trajectory_tables
from memsql_assets.lib.atomic import write_text_atomic
from memsql_assets.lib.benchmark.store import turn_id
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.evaluation.contamination import OtherProfileSQL, SessionValues
from memsql_assets.lib.evaluation.score import TurnScore, score_turn
from memsql_assets.lib.evaluation.taxonomy import ErrorClass
from memsql_assets.lib.harness.priority_gate import PriorityGate
from memsql_assets.lib.harness.results import (
    output_dir,
    progress_dir,
    read_checkpoints,
    write_results,
    write_session_checkpoint,
)
from memsql_assets.lib.harness.schedule import WAVES, Schedule, history_reach, waves, whole_waves
from memsql_assets.lib.harness.settings import resolve_wave_size
from memsql_assets.lib.harness.summary import PartitionSummary
from memsql_assets.lib.harness.turn_result import SCHEMA_VERSION, TurnResult
from memsql_assets.lib.memory.protocol import Memory, StoreSize, Visibility
from memsql_assets.lib.memory.resolution import retrieved_sessions
from memsql_assets.lib.models.failures import COST_CAP, ENDPOINT_FAILURES
from memsql_assets.lib.models.gateway import ModelReply
from memsql_assets.lib.paths import benchmark_dir, sql_cache_path
from memsql_assets.lib.sql.execute import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S
from memsql_assets.lib.sql.result_cache import RESULTS, DatabaseResults, NotCached
from memsql_assets.lib.sql.sandbox import check_sqlite_file, open_readonly
from memsql_assets.lib.sql.schema import SchemaStats, introspect
from memsql_assets.lib.trajectories.composites import CompositeTool
from memsql_assets.lib.trajectories.lookup import load_composites
from memsql_assets.lib.trajectories.phases import PHASES
from memsql_assets.lib.trajectories.tools import AGENT_OBSERVATION_CHARS, DbTools
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK, SOURCE_BY_PREFIX, History

Progress = Callable[["RunStats"], None]

STOP_AFTER_FAILURES = 5


def agent_columns(trace: AgentTrace | None, trajectory: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The row's agent measures (AgentTrace.measures, with the retrieved trajectory's tables) and trace;
    0 and null for a turn without tools."""
    if trace is None:
        return {
            "steps": 0,
            "tool_calls": 0,
            **{f"{p}_share": 0.0 for p in PHASES},
            "composite_uses": 0,
            "trajectory_tables_used": None,
            "agent_trace": None,
        }
    measures = trace.measures(trajectory_tables(trajectory or {}))
    measures.pop("tool_calls_per_step")  # the marts compute it over their groups
    return {**measures, "agent_trace": trace_json(trace, measurements=False)}


def not_asked() -> ModelReply:
    """The reply of a turn whose memory failed before the model was asked: no text, no call, no cost."""
    return ModelReply(
        text="",
        reasoning="",
        prompt_tokens=0,
        completion_tokens=0,
        latency_s=0.0,
        cost_usd=0.0,
        cache_hit=False,
        attempts=0,
        error_type=None,
        error_message=None,
        request_key="",
    )


@dataclass
class RunStats:
    total_turns: int
    done_turns: int = 0
    correct: int = 0
    resumed_sessions: int = 0
    redone_sessions: int = 0
    epoch: int = 1
    started: float = field(default_factory=time.monotonic)
    # What the memory held: a shared memory after the run; a per-session one summed over its sessions,
    # each measured as it ended (before it was forgotten).
    store: StoreSize = field(default_factory=StoreSize)

    @property
    def ex(self) -> float:
        return 100.0 * self.correct / self.done_turns if self.done_turns else 0.0

    @property
    def eta_s(self) -> float | None:
        elapsed = time.monotonic() - self.started
        if not self.done_turns or elapsed <= 0:
            return None
        return (self.total_turns - self.done_turns) * elapsed / self.done_turns


class ConnectionPool:
    """Read-only SQLite connections, one per concurrent user (sqlite3 objects are not shared).

    The file is integrity-checked once; connections are opened as concurrency demands them.
    """

    def __init__(self, db_path: Path):
        check_sqlite_file(db_path)
        self._path = db_path
        self._free: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = self._free.get_nowait()
        except queue.Empty:
            conn = open_readonly(self._path, check=False)
        try:
            yield conn
        finally:
            self._free.put(conn)


class PartitionStopped(MemsqlError):
    """The model's endpoint failed the same way on consecutive turns; finished sessions are kept."""


@dataclass
class FailureStreak:
    """The stop rule: the Nth consecutive turn failing with the same endpoint failure stops the
    partition; a success, a request-caused failure or another failure type starts the count again."""

    partition: str  # "<model>/<condition>", as the stop line names it
    stop_after: int = STOP_AFTER_FAILURES
    kind: str | None = None  # the endpoint failure being counted
    count: int = 0  # consecutive turns that failed with it

    def record(self, error_type: str | None, message: str | None) -> None:
        """Count one turn's outcome (`error_type` None: a success); raise PartitionStopped at the Nth."""
        if error_type not in ENDPOINT_FAILURES:
            self.kind, self.count = None, 0
            return
        self.count = self.count + 1 if self.kind == error_type else 1
        self.kind = error_type
        if error_type == COST_CAP:  # at once: no later call can be made either
            raise PartitionStopped(
                f"{self.partition} stopped: {message}. Finished sessions are kept: re-run with a higher cap to resume."
            )
        if self.count >= self.stop_after:
            raise PartitionStopped(
                f"{self.partition} stopped: {self.count} consecutive turns failed with "
                f"{error_type}; last: {message}. Finished sessions are kept: re-run to resume."
            )


@dataclass
class PartitionRunner:
    model_key: str
    agent: Agent
    call_model: Callable[..., Any]  # gateway.acomplete
    home: Path
    db_paths: Mapping[str, Path]  # source prefix -> database
    benchmark_version: str
    concurrency: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S
    row_cap: int = DEFAULT_ROW_CAP
    progress: Progress | None = None
    memory: Memory | None = None  # None: the condition keeps no memory
    stop_after_failures: int = STOP_AFTER_FAILURES
    wave_size: int | None = None  # C/D: sessions per wave; None: the concurrency
    epoch: int = 1  # which independent sample of every turn this run is (1-based; its own checkpoints)
    sample: int | None = None  # a sample run of this many sessions: its own file and checkpoints
    # Turn ids (`<session>#<turn>`) asked again by a user's `--only-failed`, with how often: each
    # retry is a request-store cell of its own, and the row says so.
    retries: Mapping[str, int] = field(default_factory=dict)
    benchmark: str = PAPER_BENCHMARK  # whose turns these are: its own result files and checkpoints
    agent_limits: AgentLimits = field(default_factory=AgentLimits)  # conditions with tools
    history: History = History.MODEL  # whose answers memory stores (lib/history.py)

    def __post_init__(self) -> None:
        self.requested_wave_size = self.wave_size
        self.wave_size = resolve_wave_size(self.wave_size, self.concurrency)
        self.condition = self.agent.condition
        # Memory shared by a source's sessions runs in waves (W); per-session memory runs sessions freely.
        self.shared = getattr(self.agent.memory, "visibility", Visibility.SESSION) == Visibility.WAVES
        self.out_dir = output_dir(
            self.home, self.model_key, self.condition.name, self.sample, self.benchmark, self.history
        )
        self.progress_dir = progress_dir(
            self.home, self.model_key, self.condition.name, self.epoch, self.sample, self.benchmark, self.history
        )
        self._pools: dict[str, ConnectionPool] = {}
        self._results: dict[str, DatabaseResults] = {}
        self._stats: dict[str, SchemaStats] = {}  # the agent's tools: each source's, read once
        self._composite_tools: tuple[CompositeTool, ...] | None = None
        self._pools_lock = threading.Lock()
        self._failures = FailureStreak(f"{self.model_key}/{self.condition.name}", self.stop_after_failures)
        self._store = StoreSize()  # per-session memory: each session's, summed as sessions end
        self._hold_checkpoints = False  # cross-session: a session was not checkpointed, nor is any later
        self._other_profile_sql = OtherProfileSQL(benchmark_dir(self.home, self.benchmark))
        self._session_values = SessionValues(benchmark_dir(self.home, self.benchmark))

    def _pool(self, source: str) -> ConnectionPool:
        with self._pools_lock:  # worker threads: the first turn of each source checks its file once
            if source not in self._pools:
                self._pools[source] = ConnectionPool(self.db_paths[source])  # checks the file first
                # Shared with the other partitions, processes and runs and the GT checks (same content, same SQL).
                self._results[source] = RESULTS.for_database(
                    self.db_paths[source], self.row_cap, store=sql_cache_path(self.home)
                )
            return self._pools[source]

    def _score(
        self,
        turn: Mapping[str, Any],
        raw: str | None,
        supplying: Sequence[str],
        retrieved: Sequence[str],
        execute: bool,
    ) -> TurnScore:
        """The turn's score. `execute` False: on the event loop, from cached results only (ground truths
        after the benchmark's checks, SQL the model wrote before), raising NotCached where it would have
        to run SQL or read a file: no thread hand-off there and back, which under a busy GIL costs more
        than the scoring. True: in a worker thread, running what it must."""
        source = turn["source"]

        def provenance() -> Mapping[str, str]:
            if not supplying:
                return {}
            if not execute and not self._other_profile_sql.loaded:  # its first call reads a file
                raise NotCached("the benchmark's sessions file")
            return self._other_profile_sql.for_turn(turn, supplying)

        def foreign(sql: str) -> str | None:
            if not retrieved:
                return None
            if not execute and not self._session_values.loaded:  # its first call reads a file
                raise NotCached("the benchmark's turns file")
            return self._session_values.source(turn, sql, retrieved)

        with (self._pool(source) if execute else self._pools[source]).connection() as conn:
            return score_turn(
                turn, raw, conn, self._results[source], self.timeout_s, self.row_cap, provenance,
                execute=execute, foreign=foreign,
            )  # fmt: skip

    def _score_here(
        self, turn: Mapping[str, Any], raw: str | None, supplying: Sequence[str], retrieved: Sequence[str] = ()
    ) -> TurnScore | None:
        """The turn's score on the event loop when every result it needs is cached; None: it has SQL
        to run or a file to read (a thread)."""
        if turn["source"] not in self._results:  # set last by _pool: the first turn of a source checks its file
            return None
        try:
            return self._score(turn, raw, supplying, retrieved, execute=False)
        except NotCached:
            return None

    def _score_and_persist(
        self, turn: Mapping[str, Any], raw: str | None, supplying: Sequence[str] = (), retrieved: Sequence[str] = ()
    ) -> tuple[TurnScore, MemoryFailure | None]:
        """In a worker thread, with everything that touches the database: the file check on first
        use and opening a connection (its pragmas) would otherwise stall every session's loop. The
        turn's memory writes follow in the same thread: each hand-off costs milliseconds under load."""
        score = self._score(turn, raw, supplying, retrieved, execute=True)
        return score, self._persist(turn, score)

    def _persist(self, turn: Mapping[str, Any], score: TurnScore) -> MemoryFailure | None:
        """The finished turn into memory: the model's answer, or with a gold history the ground truth's
        (the one place every memory, plug-ins included, is handed a turn)."""
        if self.history == History.GOLD:
            return self.agent.persist(turn, turn["gt_sql"], score.gt_summary)
        return self.agent.persist(turn, score.extracted_sql, score.result_summary)

    def _prepare_progress(self) -> dict[str, list[dict[str, Any]]]:
        meta_path = self.progress_dir / "_meta.json"
        # Checkpoints of another benchmark version, context mode or history, or (C/D) of other waves, are void.
        meta: dict[str, Any] = {"benchmark_version": self.benchmark_version}
        if self.agent.observed:  # annotated checkpoints predate the field: they stay valid
            meta["context_mode"] = self.agent.context_mode.value
        if self.history != History.MODEL:  # as are those of the model's history
            meta["history"] = self.history.value
        if self.shared:
            meta.update(wave_size=self.wave_size, waves=WAVES)
        if meta_path.exists() and json.loads(meta_path.read_text(encoding="utf-8")) != meta:
            shutil.rmtree(self.progress_dir)
        self.progress_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomic(meta_path, json.dumps(meta))
        return read_checkpoints(self.progress_dir)

    async def run(self, turns: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], RunStats]:
        sessions: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for t in turns:
            sessions[t["session_id"]].append(t)
        order = sorted(sessions)
        self.wave_size = resolve_wave_size(self.requested_wave_size, self.concurrency, history_reach(turns))
        done = self._prepare_progress()
        if self.shared:
            chains = waves(order, self.wave_size, {s: sessions[s][0]["source"] for s in order})
            done = whole_waves(chains, done)
        else:
            chains = {"": [order]}
        stats = RunStats(total_turns=len(turns), epoch=self.epoch)
        stats.resumed_sessions = sum(1 for s in order if s in done)
        for sid in order:
            if sid in done:
                stats.done_turns += len(done[sid])
                stats.correct += sum(1 for r in done[sid] if r["ex_strict"])
        if self.memory is not None:
            self.memory.reset(set(done))
        # Every session in flight hands its SQL and file writes to a thread; asyncio's default pool
        # (CPU count + 4 threads) would queue them behind one another at high concurrency.
        workers = max(1, self.concurrency) + 4
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(workers, "memsql-turn"))
        schedule = Schedule(self, sessions, done, stats, PriorityGate(max(1, self.concurrency)))
        await schedule.run(chains)
        if self.memory is not None:
            stats.store = await asyncio.to_thread(self.memory.size) if self.shared else self._store
        rows = [r for sid in order for r in done[sid]]
        return rows, stats

    async def run_session(
        self, turns: Sequence[Mapping[str, Any]], stats: RunStats, sent: asyncio.Event | None = None
    ) -> list[dict[str, Any]]:
        ordered = sorted(turns, key=lambda t: t["turn_index"])
        sid = ordered[0]["session_id"]
        memory = self.memory

        def fresh_start() -> str | None:  # one hand-off, and the Redis round trip off the event loop
            memory.forget(sid)  # type: ignore[union-attr]
            return memory.identity()  # type: ignore[union-attr]

        while True:
            identity = None
            if memory is not None:
                identity = await asyncio.to_thread(fresh_start)
            rows = []
            for turn in ordered:
                rows.append(await self.run_turn(turn, sent))
            if memory is not None and memory.identity() != identity:
                stats.redone_sessions += 1  # memory vanished mid-session: results would not be faithful
                continue
            break
        stats.done_turns += len(rows)
        stats.correct += sum(1 for r in rows if r["ex_strict"])
        if self.progress:
            self.progress(stats)
        return rows

    async def commit(self, sessions: Sequence[tuple[str, list[dict[str, Any]]]]) -> None:
        """Make finished sessions durable: their memory first, then their checkpoints (a checkpoint
        must never promise memory that is not stored). Off the event loop: other sessions go on."""
        await asyncio.to_thread(self._commit_now, sessions)  # one hand-off: each costs a GIL switch

    def _commit_now(self, sessions: Sequence[tuple[str, list[dict[str, Any]]]]) -> None:
        if self.memory is not None:
            self.memory.commit()
        for sid, rows in sessions:
            if any(r["model_error_type"] in ENDPOINT_FAILURES for r in rows):
                self._hold_checkpoints = self.shared
            elif not self._hold_checkpoints:
                write_session_checkpoint(self.progress_dir, sid, rows)
            if self.memory is not None and not self.shared:
                self._measure(self.memory.size(sid))
                self.memory.forget(sid)  # per-session memory

    def _measure(self, size: StoreSize) -> None:
        """Add one session's memory, as it ended, to the run's store size (per-session memory)."""
        with self._pools_lock:
            self._store = StoreSize(self._store.entries + size.entries, self._store.bytes + size.bytes)

    async def run_turn(self, turn: Mapping[str, Any], sent: asyncio.Event | None = None) -> dict[str, Any]:
        """The turn pipeline: assemble the prompt, call the model (under a condition with tools, run
        the agent loop), score the answer, persist what memory keeps of the turn, and build its row.
        A memory that failed to retrieve leaves the model unasked (memory_error)."""
        trace: AgentTrace | None = None
        if self.condition.tools:
            prompt, trace = await self._agent_turn(turn, sent)
            reply = turn_reply(trace)
        else:
            prompt = await self.agent.assemble(turn)
            if sent is not None:
                sent.set()
            if prompt.memory_failure is not None:
                reply = not_asked()
            else:
                reply = await self.call_model(self.model_key, prompt.messages, turn_context(turn))
        self._failures.record(reply.error_type, reply.error_message)
        raw = reply.text if reply.ok else None
        score, failure = await self._score_and_remember(turn, raw, prompt)
        return self._row(turn, prompt, reply, score, trace, prompt.memory_failure or failure).as_row()

    async def _agent_turn(
        self, turn: Mapping[str, Any], sent: asyncio.Event | None
    ) -> tuple[TurnPrompt, AgentTrace]:
        """The turn through the agent loop: its tools on a sandboxed read-only connection of the turn's
        source, each step one request (and request-store record) of the turn's cell."""
        source, context = turn["source"], turn_context(turn)

        async def complete(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
            if sent is not None:
                sent.set()
            return await self.call_model(self.model_key, messages, context, tools=tools)

        stats = await asyncio.to_thread(self._schema_stats, source)
        with self._pools[source].connection() as conn:
            db = DbTools(
                conn,
                SOURCE_BY_PREFIX[source],
                stats,
                sql_timeout_s=self.timeout_s,
                observation_chars=AGENT_OBSERVATION_CHARS,
            )
            tools = TurnTools(db, composites=self._composites())
            return await agent_turn(self.agent, turn, tools, complete, self.agent_limits)

    def _composites(self) -> tuple[CompositeTool, ...]:
        """The store's composite tools when the condition's memory retrieves its trajectories (E), read once."""
        if not getattr(self.agent.memory, "offers_composites", False):
            return ()
        with self._pools_lock:
            if self._composite_tools is None:
                self._composite_tools = load_composites(self.home)
            return self._composite_tools

    def _schema_stats(self, source: str) -> SchemaStats:
        """The source's schema statistics for the agent's tools, read once (its pool checks the file first)."""
        with self._pools_lock:
            known = self._stats.get(source)
        if known is None:
            with self._pool(source).connection() as conn:
                known = introspect(conn, SOURCE_BY_PREFIX[source])
            with self._pools_lock:
                self._stats[source] = known
        return known

    async def _score_and_remember(
        self, turn: Mapping[str, Any], raw: str | None, prompt: TurnPrompt
    ) -> tuple[TurnScore, MemoryFailure | None]:
        """The turn's score, after its memory writes: on the event loop when every result it needs
        is cached, else in a worker thread with the SQL."""
        supplying, retrieved = _other_sessions(prompt)
        score = self._score_here(turn, raw, supplying, retrieved)
        if score is None:
            return await asyncio.to_thread(self._score_and_persist, turn, raw, supplying, retrieved)
        persist = functools.partial(self._persist, turn, score)
        if getattr(self.agent.memory, "blocking", False):  # Redis: a restart can hold a write for seconds
            return score, await asyncio.to_thread(persist)
        return score, persist()

    def _row(
        self,
        turn: Mapping[str, Any],
        prompt: TurnPrompt,
        reply: ModelReply,
        score: TurnScore,
        trace: AgentTrace | None = None,
        memory_failure: MemoryFailure | None = None,
    ) -> TurnResult:
        verdicts = (score.ex_strict, score.ex_bag, score.ex_set)
        error_message: str | None
        if memory_failure is not None:  # the condition did not work on this turn: it counts as failed
            verdicts = (False, False, False)
            error_class, error_message = ErrorClass.MEMORY_ERROR.value, memory_failure.message()
        elif reply.ok:
            error_class, error_message = score.error_class, score.error_message
        else:
            error_class = ErrorClass.MODEL_ERROR.value
            error_message = f"model error ({reply.error_type}): {reply.error_message}"
        return TurnResult(
            **agent_columns(trace, prompt.trajectory),
            ex_strict=verdicts[0],
            ex_bag=verdicts[1],
            ex_set=verdicts[2],
            session_id=turn["session_id"],
            source=turn["source"],
            tier=turn["tier"],
            turn_index=turn["turn_index"],
            epoch=self.epoch,
            memory_critical=turn["memory_critical"],
            model=self.model_key,
            condition=self.condition.name,
            raw_output=reply.text if reply.ok else None,
            extracted_sql=score.extracted_sql,
            error_class=error_class,
            error_message=error_message,
            contaminated=score.contaminated,
            contamination_source=score.contamination_source,
            fallback_match=score.fallback_match,
            stale_state=score.stale_state,
            gt_error=score.gt_error,
            model_error_type=reply.error_type,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            reasoning_tokens=reply.reasoning_tokens,
            latency_s=reply.latency_s,
            cost_usd=reply.cost_usd,
            cache_hit=reply.cache_hit,
            attempts=reply.attempts,
            retries=self.retries.get(turn_id(turn), 0),
            prompt_hash=prompt.prompt_hash,
            request_key=reply.request_key,
            resolved_keys=json.dumps(prompt.resolution.origins, sort_keys=True),
            missing_keys=json.dumps(prompt.resolution.missing),
            retrieved_sessions=json.dumps(retrieved_sessions(prompt.episodic)),
            supplying_sessions=json.dumps(prompt.resolution.supplying_sessions),
            retrieval_ms=round(prompt.retrieval_s * 1000, 3),
            benchmark_version=self.benchmark_version,
            schema_version=SCHEMA_VERSION,
        )

    def finish(self, rows: list[dict[str, Any]], summary: PartitionSummary) -> Path:
        """Publish the partition's one file (every epoch's rows) atomically, then drop every epoch's checkpoints."""
        path = write_results(self.out_dir, rows, summary)
        shutil.rmtree(self.progress_dir.parent, ignore_errors=True)
        return path


def _other_sessions(prompt: TurnPrompt) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the sessions that supplied a resolved key, those plus every session the memory retrieved):
    where contamination by provenance and by value look (evaluation/contamination.py)."""
    supplying = tuple(prompt.resolution.supplying_sessions)
    return supplying, tuple(dict.fromkeys([*supplying, *retrieved_sessions(prompt.episodic)]))
