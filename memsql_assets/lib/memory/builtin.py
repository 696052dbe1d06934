"""The built-in memory implementations of the paper's conditions, of E and E_prompt, and of H (the protocol: protocol.py).

- `none` (A): keeps nothing.
- `window` (B, B_wm5, T, H): working memory, the session's last N turns in Redis (`turns: all`: every
  earlier turn of the session, the upper bound of working memory).
- `episodic` (C, D): working memory plus the top-k similar past turns of the source (Chroma, shared
  by the sessions of a partition run, published wave by wave), and with `semantic_top_k` the
  source's nearest semantic hints (D).
- `trajectory` (E, E_prompt): working memory plus the AgentSM trajectory of the most similar synthetic question.

Working memory follows DESIGN's "state updates are not cumulative": each entry carries its own turn's
state updates (annotated context mode only), and the window decides what is visible. In observed
mode `episodic` offers its own facts block (facts.py) in place of the annotated Resolved block. Each
epoch has its own Redis keys and Chroma collection (the context's run id), so epochs never see each other.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field

from memsql_assets.lib.config_files import Strict
from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.history import History
from memsql_assets.lib.memory.chroma import chroma_client, collection_name, open_collection
from memsql_assets.lib.memory.episodic import EpisodicMemory, analyst_peers
from memsql_assets.lib.memory.facts import facts_block
from memsql_assets.lib.memory.protocol import (
    MemoryBase,
    MemoryContext,
    MemoryTurn,
    Retrieval,
    StoreSize,
    Visibility,
)
from memsql_assets.lib.memory.resolution import Payload
from memsql_assets.lib.memory.semantic import SemanticMemory
from memsql_assets.lib.memory.working import WorkingMemory
from memsql_assets.lib.paths import sessions_file

SERVER_TOKEN_KEY = "memsql:server-token"  # never expires; a restarted server has none


class Stateless(MemoryBase):
    """Condition A: nothing is kept, nothing retrieved."""

    stateful = False

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        return Retrieval()

    def persist(self, payload: Payload) -> None:
        return None


class WindowParams(Strict):
    """The working-memory window."""

    turns: Annotated[int, Field(ge=1)] | Literal["all"]
    """How many of the session's most recent turns the prompt shows; `all`: every earlier turn."""


class Window(MemoryBase):
    """The session's last N turns from Redis, in the Recent conversation block; the paper's resolution."""

    Params: ClassVar[type[BaseModel]] = WindowParams
    blocking = True  # Redis: a restart can hold a call for seconds, never on the event loop

    def __init__(self, params: Any = None):
        super().__init__(params)
        turns = self.params.turns
        self.window: int | None = None if turns == "all" else int(turns)
        # session -> (turn_index or None, window): what Redis replied to that turn's append, which is what
        # the session's next turn would recall (only this session writes its key), without another round
        # trip; (None, []) after the session's memory was cleared.
        self._known: dict[str, tuple[int | None, list[Payload]]] = {}

    def open(self, ctx: MemoryContext) -> None:
        super().open(ctx)
        self.redis = ctx.redis()
        self.working = WorkingMemory(self.redis, ctx.run_id)

    def _cached(self, turn: MemoryTurn) -> list[Payload] | None:
        index, known = self._known.pop(turn.session_id, (None, None))
        if known is not None and (index is None or index == turn.turn_index - 1):
            return known[: self.window] if self.window else known
        return None

    def recent(self, turn: MemoryTurn) -> list[Payload]:
        cached = self._cached(turn)
        return cached if cached is not None else self.working.recall(turn.session_id, self.window)

    async def arecent(self, turn: MemoryTurn) -> list[Payload]:
        cached = self._cached(turn)
        if cached is not None:
            return cached
        return await asyncio.to_thread(self.working.recall, turn.session_id, self.window)  # a redone session

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        return Retrieval(recent=self.recent(turn))

    async def aretrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        return Retrieval(recent=await self.arecent(turn))

    def persist(self, payload: Payload) -> None:
        sid = payload["session_id"]
        self._known[sid] = (payload["turn_index"], self.working.append(sid, payload, self.window))

    def reset(self, keep: set[str]) -> None:
        if not keep:
            self.working.clear_run()

    def forget(self, session_id: str) -> None:
        self.working.clear(session_id)
        self._known[session_id] = (None, [])

    def identity(self) -> str | None:
        """A token that changes when the Redis server restarts (its data, and this key, are gone).
        One GET: INFO server, which also changes then, costs a parse of ~100 fields per session."""
        token = self.redis.get(SERVER_TOKEN_KEY)
        if token is None:
            self.redis.set(SERVER_TOKEN_KEY, uuid.uuid4().hex, nx=True)
            token = self.redis.get(SERVER_TOKEN_KEY)
        return token.decode() if isinstance(token, bytes) else str(token)

    def size(self, session_id: str | None = None) -> StoreSize:
        """The session's window as this process last saw Redis reply it (no round trip); the whole run's
        keys without a session."""
        if session_id is None:
            return self.working.size()
        window = self._known.get(session_id, (None, []))[1]
        return StoreSize(len(window), sum(len(_json(p)) for p in window))


class EpisodicParams(Strict):
    """Working memory plus the top-k similar past turns of the source (and the nearest hints)."""

    window: int = Field(ge=1)
    """Working-memory turns (the Recent conversation)."""
    top_k: int | None = Field(default=None, ge=1)
    """Similar past turns retrieved; unset: the run setting `episodic_k` (3 by default)."""
    semantic_top_k: int = Field(default=0, ge=0)
    """Semantic hints of the turn's source retrieved (Appendix A.5's seed; 0: none)."""
    scope: Literal["shared", "analyst"] = "shared"
    """Whose past turns a session retrieves: every session's of the run (shared, the paper's), or only
    its own analyst's sessions' (analyst: needs a benchmark whose sessions name their analyst)."""


class Episodic(Window):
    """C and D: working memory, episodic top-k over the partition's earlier waves, semantic hints."""

    Params: ClassVar[type[BaseModel]] = EpisodicParams
    visibility = Visibility.WAVES
    uses_vectors = True

    def __init__(self, params: Any = None):
        MemoryBase.__init__(self, params)
        self.window = int(self.params.window)
        self._known = {}
        self.peers: dict[str, frozenset[str]] | None = None  # scope analyst: each session's analyst's sessions

    def open(self, ctx: MemoryContext) -> None:
        super().open(ctx)
        self.k = self.params.top_k or ctx.episodic_k
        chroma = chroma_client(ctx.store_dir, ctx.chroma_url)
        parts = [f"epoch{ctx.epoch}"] + ([] if ctx.sample is None else [f"sample{ctx.sample}"])
        parts += [] if ctx.history == History.MODEL else [str(ctx.history)]  # a shared server: never the other's
        self.episodic = EpisodicMemory(
            chroma, collection_name("episodic", ctx.model, ctx.condition, ctx.benchmark_version, *parts)
        )
        if self.params.scope == "analyst":
            self.peers = analyst_peers(sessions_file(ctx.home, ctx.benchmark))
        self.semantic = None
        if self.params.semantic_top_k:
            self.semantic = SemanticMemory(chroma_client(ctx.home, ctx.chroma_url))
            self.semantic.warm(_queries(ctx), self.params.semantic_top_k)  # one batched query per source

    def _stores(self, turn: MemoryTurn, vector: list[float] | None, recent: list[Payload]) -> Retrieval:
        # In process and cheap (episodic from its mirror, semantic from the answers
        # warmed up front): a thread hand-off costs more.
        q, source, sid = turn.question, turn.source, turn.session_id
        among = None if self.peers is None else self.peers.get(sid, frozenset({sid}))
        similar = self.episodic.query(q, self.k, source, None, vector, sid, among)
        hints = self.semantic.query(q, source, self.params.semantic_top_k, vector) if self.semantic else []
        # Observed mode: no Resolved block from annotations; the memory's own reading of the SQL instead.
        facts = facts_block([*recent, *similar]) if self.context_mode == ContextMode.OBSERVED else None
        return Retrieval(
            recent=recent, similar=similar, hints=[h["text"] for h in hints], blocks=[facts] if facts else ()
        )

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        return self._stores(turn, vector, self.recent(turn))

    async def aretrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        return self._stores(turn, vector, await self.arecent(turn))

    def persist(self, payload: Payload) -> None:
        super().persist(payload)
        vector = self.ctx.embed(payload["question"]) if self.ctx.embed else None
        self.episodic.add(payload, vector)  # in process until the runner's commit

    def reset(self, keep: set[str]) -> None:
        super().reset(keep)
        # A resume keeps exactly the checkpointed sessions' turns: memory is committed before
        # checkpoints, so a run killed in between stored sessions that it will now redo.
        if keep:
            self.episodic.retain_sessions(keep)
        else:
            self.episodic.reset()

    def forget(self, session_id: str) -> None:
        super().forget(session_id)
        self.episodic.forget_session(session_id)

    def end_wave(self, sessions: Sequence[str]) -> None:
        self.episodic.publish(sessions)

    def commit(self) -> None:
        self.episodic.flush()

    def stored_turns(self) -> set[str] | None:
        """The turns Chroma holds durably: a resume whose checkpoints promise more is not faithful."""
        return set(open_collection(self.episodic.client, self.episodic.name).get(include=[])["ids"])

    def size(self, session_id: str | None = None) -> StoreSize:
        working, episodic = super().size(session_id), self.episodic.size()
        return StoreSize(working.entries + episodic.entries, working.bytes + episodic.bytes)


class TrajectoryParams(Strict):
    """Working memory plus the retrieved exploration trajectory."""

    window: int = Field(ge=1)
    """Working-memory turns (the Recent conversation)."""


class Trajectory(Window):
    """E and E_prompt: working memory plus the AgentSM trajectory of the most similar synthetic question
    (with tools, E, the agent turn splits it by phase: agent/agent_turn.py)."""

    Params: ClassVar[type[BaseModel]] = TrajectoryParams
    uses_vectors = True
    offers_composites = True

    def __init__(self, params: Any = None):
        MemoryBase.__init__(self, params)
        self.window = int(self.params.window)
        self._known = {}

    def open(self, ctx: MemoryContext) -> None:
        if ctx.trajectory_factory is None:
            raise MemsqlError(
                f"condition {ctx.condition} needs the trajectory store: materialize trajectory_store first"
            )
        super().open(ctx)
        self.lookup = ctx.trajectory_factory(ctx.home)
        warm = getattr(self.lookup, "warm", None)
        if warm is not None:  # every turn's answer up front, one batched query per source
            warm(_queries(ctx))

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        return Retrieval(recent=self.recent(turn), trajectory=self.lookup(turn.source, turn.question, vector))

    async def aretrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        recent = await self.arecent(turn)
        return Retrieval(recent=recent, trajectory=self.lookup(turn.source, turn.question, vector))


def _queries(ctx: MemoryContext) -> list[tuple[str, str, list[float]]]:
    """(source, question, vector) of every turn of the run: what static stores answer up front."""
    embed = ctx.embed
    if embed is None:
        raise MemsqlError(f"condition {ctx.condition}: its memory uses vectors, and the run has no embedding")
    return [(source, question, embed(question)) for source, question in ctx.questions]


def _json(payload: Payload) -> bytes:
    """A payload as working memory stores it (WorkingMemory.append)."""
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str).encode()
