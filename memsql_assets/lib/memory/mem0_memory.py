"""Condition M0: the session's memory kept by mem0 (the `mem0ai` library), offline, without an LLM.

Each turn is added to a mem0 `Memory` as it is (`infer=False`: mem0's LLM fact extraction is never
called), its question as the memory text and the turn's payload as metadata, under the session as
mem0's `user_id`. Before a turn, mem0's `search` over the session's earlier turns returns the top-k by
similarity to the question; they are shown as the Similar past turns, and the Resolved block takes each
referenced value from them, most similar first. There is no recency window: what the session said
last reaches the prompt only if it is among the most similar.

`scope` says whose turns a session searches: its own (`session`, the default: the memory is forgotten
when the session ends), or also those of the earlier sessions of its analyst (`analyst`, mem0's
per-user memory: the analyst lookup of the episodic memory's `scope: analyst`, `analyst_peers`). Scoped
per analyst the memory outlives a session, so its sessions run in waves of W, as C's do: a session
searches its own turns and those of its analyst's sessions that ran in an earlier wave.

Offline by construction: the vector store is mem0's local Qdrant (a folder in the partition's own
directory, one collection per epoch), mem0's telemetry is off (`MEM0_TELEMETRY`), and the LLM mem0
requires in its configuration is never called. mem0's embedder is replaced by the project's packaged
all-MiniLM-L6-v2 (no hub access): a question is given the vector the runner passes to `retrieve`,
the partition's batch vector that C's episodic memory uses too (lib/memory/embeddings.py), and its
`add` after the turn finds the same vector; only a text without one (a retrieval without a vector)
is embedded, alone. A batch vector differs from the text's vector embedded alone in its last bits,
so a score can differ in its sixth decimal from the one mem0's own embedder would give. mem0 orders
equal scores as its store returns them; ties are broken here by the more recent turn, so retrieval
is a pure function of what the session stored.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from memsql_assets.lib.config_files import Strict
from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.memory.embeddings import embedding_function
from memsql_assets.lib.memory.episodic import analyst_peers
from memsql_assets.lib.memory.facts import facts_block
from memsql_assets.lib.memory.protocol import (
    MemoryBase,
    MemoryContext,
    MemoryTurn,
    Retrieval,
    StoreSize,
    Visibility,
)
from memsql_assets.lib.memory.resolution import Payload, resolve_from
from memsql_assets.lib.paths import sessions_file

MEM0_STORE = "mem0"
EMBEDDING_DIMS = 384  # all-MiniLM-L6-v2
# mem0's search returns at most this many before the tie-break and cut to top_k (a session has <= 10 turns).
SEARCH_LIMIT = 50


class Mem0Params(Strict):
    """What mem0 retrieves for a turn."""

    top_k: int = Field(default=3, ge=1)
    """The session's earlier turns retrieved, most similar first."""
    threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    """mem0's minimum similarity score of a retrieved turn."""
    scope: Literal["session", "analyst"] = "session"
    """Whose turns a session searches: its own (session), or also its analyst's earlier sessions'
    (analyst: needs a benchmark whose sessions name their analyst; sessions run in waves)."""


def mem0_config(ctx: MemoryContext) -> dict[str, Any]:
    """mem0's configuration for one partition run: local Qdrant, no embedding or LLM call of its own."""
    folder = ctx.store_dir / MEM0_STORE
    run = f"epoch{ctx.epoch}" + ("" if ctx.sample is None else f".sample{ctx.sample}")
    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": f"memsql_{run.replace('.', '_')}",
                "path": str(folder / f"qdrant-{run}"),
                "embedding_model_dims": EMBEDDING_DIMS,
                "on_disk": True,
            },
        },
        # mem0 builds an embedder from its configuration; _open_mem0 puts the packaged model's in its
        # place (its huggingface embedder imports sentence-transformers; bench/README.md has the cost).
        "embedder": {
            "provider": "openai",
            "config": {"api_key": "unused-replaced-by-the-packaged-model", "embedding_dims": EMBEDDING_DIMS},
        },
        # mem0 builds an LLM client from its configuration; with infer=False it is never called.
        "llm": {"provider": "openai", "config": {"api_key": "unused-infer-is-off"}},
        # mem0's audit log of every add, which nothing here reads: in memory, not a disk write (and its
        # commit) per turn, a third of the partition's time.
        "history_db_path": ":memory:",
    }


def _open_mem0(ctx: MemoryContext, vectors: dict[str, list[float]]) -> Any:
    # mem0 reads these when it is first imported: telemetry off (lib/offline.py sets it for every
    # process; a library caller may not have), its own folder under the home rather than ~/.mem0.
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", str(ctx.home / MEM0_STORE))
    # Its warnings about optional extras (spaCy, fastembed) and resets are not about the run.
    logging.getLogger("mem0").setLevel(logging.ERROR)
    try:
        from mem0 import Memory
    except ImportError as exc:
        raise MemsqlError(
            f"condition {ctx.condition} needs mem0 (the mem0ai package, a dependency of memsql): {exc}; "
            "reinstall the environment with scripts/bootstrap.sh"
        ) from None
    (ctx.store_dir / MEM0_STORE).mkdir(parents=True, exist_ok=True)
    memory = Memory.from_config(mem0_config(ctx))
    memory.embedding_model = _packaged_embedder(memory.embedding_model.config, vectors)
    return memory


def _packaged_embedder(config: Any, vectors: dict[str, list[float]]) -> Any:
    """mem0's embedder interface on the packaged all-MiniLM-L6-v2: a text's vector from `vectors`
    (question -> the vector the runner passed), else the text embedded alone and kept there."""
    from mem0.embeddings.base import EmbeddingBase

    class PackagedEmbedding(EmbeddingBase):
        def embed(self, text: str, memory_action: Any = None) -> list[float]:
            if text not in vectors:
                vectors[text] = [float(x) for x in embedding_function()([text])[0]]
            return list(vectors[text])

    return PackagedEmbedding(config)


class Mem0Memory(MemoryBase):
    """M0: mem0 memory of a session (or of its analyst's sessions), top-k by similarity (module docstring)."""

    Params: ClassVar[type[BaseModel]] = Mem0Params
    blocking = True  # mem0 writes to disk
    uses_vectors = True  # mem0's embedder reads them (module docstring)

    def __init__(self, params: Any = None):
        super().__init__(params)
        self._lock = threading.Lock()  # one mem0 Memory (its Qdrant and SQLite) for every session's thread
        self.by_analyst = self.params.scope == "analyst"
        self.visibility = Visibility.WAVES if self.by_analyst else Visibility.SESSION
        self.peers: dict[str, frozenset[str]] = {}  # scope analyst: each session's analyst's sessions
        self._published: set[str] = set()  # scope analyst: the sessions of finished waves
        self._vectors: dict[str, list[float]] = {}  # question -> vector, what mem0's embedder returns

    def open(self, ctx: MemoryContext) -> None:
        super().open(ctx)
        if self.by_analyst:
            self.peers = analyst_peers(sessions_file(ctx.home, ctx.benchmark))
        self.mem = _open_mem0(ctx, self._vectors)

    def _users(self, session_id: str) -> list[str]:
        """The mem0 users a session searches, most recent first: itself, then its analyst's sessions of
        earlier waves, the later first."""
        earlier = (self.peers.get(session_id, frozenset()) & self._published) - {session_id}
        return [session_id, *sorted(earlier, reverse=True)]

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        users = self._users(turn.session_id)
        found: list[tuple[float, dict[str, Any]]] = []
        with self._lock:
            if vector is not None:
                self._vectors[turn.question] = list(vector)
            for user in users:
                hits = self.mem.search(
                    turn.question, filters={"user_id": user}, top_k=SEARCH_LIMIT, threshold=self.params.threshold
                )["results"]
                found += [(round(float(h["score"]), 6), json.loads(h["metadata"]["payload"])) for h in hits]

        # Equal scores: the more recent first, by session (users' order), then by turn.
        found.sort(key=lambda hit: (-hit[0], users.index(str(hit[1]["session_id"])), -int(hit[1]["turn_index"])))
        similar = [p for _, p in found[: self.params.top_k]]
        if self.context_mode == ContextMode.OBSERVED:
            # No annotations to resolve from: the session's own top-k turns most recent first (a correction
            # is read over the value it corrected), then its analyst's earlier sessions' in mem0's order (as
            # C puts its similar past turns after the recent conversation), and the memory's own reading of
            # their SQL.
            own = sorted((p for p in similar if p["session_id"] == turn.session_id), key=lambda p: -int(p["turn_index"]))
            similar = own + [p for p in similar if p["session_id"] != turn.session_id]
            facts = facts_block(similar)
            return Retrieval(similar=similar, blocks=[facts] if facts else ())
        return Retrieval(
            similar=similar, resolution=resolve_from(turn.referenced_keys, [(MEM0_STORE, similar)])
        )

    def persist(self, payload: Payload) -> None:
        metadata = {
            "turn_index": int(payload["turn_index"]),
            "payload": json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str),
        }
        message = [{"role": "user", "content": payload["question"]}]
        with self._lock:
            self.mem.add(message, user_id=payload["session_id"], metadata=metadata, infer=False)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self.mem.delete_all(user_id=session_id)

    def reset(self, keep: set[str]) -> None:
        """Per session, a resumed run's finished sessions were forgotten as they ended; per analyst,
        exactly the finished sessions `keep` stay (published: they ran in earlier waves)."""
        with self._lock:
            if self.by_analyst and keep:
                for sid in sorted(set(self.peers) - keep):  # what a killed run stored of sessions it redoes
                    self.mem.delete_all(user_id=sid)
            else:
                self.mem.reset()
        self._published = set(keep) if self.by_analyst else set()

    def end_wave(self, sessions: Sequence[str]) -> None:
        self._published.update(sessions)

    def size(self, session_id: str | None = None) -> StoreSize:
        if session_id is None:  # per session, every session's memory was forgotten as it ended
            held = [self.size(s) for s in sorted(self._published)]
            return StoreSize(sum(h.entries for h in held), sum(h.bytes for h in held))
        with self._lock:
            held = self.mem.get_all(filters={"user_id": session_id}, top_k=SEARCH_LIMIT)["results"]
        text = sum(len(h["memory"].encode()) + len(h["metadata"]["payload"].encode()) for h in held)
        return StoreSize(len(held), text + len(held) * EMBEDDING_DIMS * 4)

    def close(self) -> None:
        mem = getattr(self, "mem", None)
        if mem is None:
            return
        mem.close()  # its history database
        closer = getattr(getattr(mem.vector_store, "client", None), "close", None)
        if closer is not None:
            closer()  # Qdrant's local mode holds a lock on its folder until closed
