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

Offline by construction: the vector store is mem0's local Qdrant, mem0's telemetry is off
(`MEM0_TELEMETRY`), and the LLM mem0 requires in its configuration is never called. mem0's embedder is
replaced by the project's packaged all-MiniLM-L6-v2 (no hub access): a question is given the vector the
runner passes to `retrieve`, the partition's batch vector that C's episodic memory uses too
(lib/memory/embeddings.py), and its `add` after the turn finds the same vector; only a text without one
(a retrieval without a vector) is embedded, alone. A batch vector differs from the text's vector
embedded alone in its last bits, so a score can differ in its sixth decimal from the one mem0's own
embedder would give. mem0 orders equal scores as its store returns them; ties are broken here by the
more recent turn, so retrieval is a pure function of what the session stored.

A partition's sessions are spread over `MEM0_SHARDS` mem0 `Memory`s, each with a local Qdrant of its
own, by a fixed hash of the session: Qdrant's local mode filters a search by user in Python over every
point of its collection, deleted ones included, so in one collection a search cost grows with every turn
the partition added. A session's turns all live in its shard, and each search asks the shard of the user
it filters by: the hits are the same as one collection's. The shards are in memory (Qdrant's local mode
commits every write to its folder's SQLite, a disk write per turn): per session nothing outlives the
session anyway; per analyst a killed run loses its finished sessions' turns, so the memory holds nothing
durably (`stored_turns`) and a resumed run is rebuilt from its first session, the model's answers coming
back from the request store (lib/harness/services.py).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import zlib
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
MEM0_SHARDS = 16  # the mem0 memories a partition's sessions are spread over (module docstring)


class Mem0Params(Strict):
    """What mem0 retrieves for a turn."""

    top_k: int = Field(default=3, ge=1)
    """The session's earlier turns retrieved, most similar first."""
    threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    """mem0's minimum similarity score of a retrieved turn."""
    scope: Literal["session", "analyst"] = "session"
    """Whose turns a session searches: its own (session), or also its analyst's earlier sessions'
    (analyst: needs a benchmark whose sessions name their analyst; sessions run in waves)."""


def shard_of(session_id: str) -> int:
    """The shard that holds a session's turns, the same in every process (Python's hash is salted)."""
    return zlib.crc32(session_id.encode()) % MEM0_SHARDS


def mem0_config() -> dict[str, Any]:
    """mem0's configuration for one shard of a partition run: local Qdrant in memory, no embedding or
    LLM call of its own."""
    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": MEM0_STORE,
                "path": ":memory:",
                "embedding_model_dims": EMBEDDING_DIMS,
            },
        },
        # mem0 builds an embedder from its configuration; Mem0Memory puts the packaged model's in its
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


def _mem0_class(ctx: MemoryContext) -> Any:
    """mem0's `Memory`, imported offline."""
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
    return Memory


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
    blocking = True  # mem0's calls take milliseconds
    uses_vectors = True  # mem0's embedder reads them (module docstring)

    def __init__(self, params: Any = None):
        super().__init__(params)
        self._lock = threading.Lock()  # the mem0 memories (Qdrant, SQLite) for every session's thread
        self.by_analyst = self.params.scope == "analyst"
        self.visibility = Visibility.WAVES if self.by_analyst else Visibility.SESSION
        self.peers: dict[str, frozenset[str]] = {}  # scope analyst: each session's analyst's sessions
        self._published: set[str] = set()  # scope analyst: the sessions of finished waves
        self._vectors: dict[str, list[float]] = {}  # question -> vector, what mem0's embedder returns
        self.shards: dict[int, Any] = {}  # shard -> its mem0 Memory

    def open(self, ctx: MemoryContext) -> None:
        super().open(ctx)
        if self.by_analyst:
            self.peers = analyst_peers(sessions_file(ctx.home, ctx.benchmark))
        self._memory_class = _mem0_class(ctx)

    def _mem(self, session_id: str) -> Any:
        """The mem0 Memory that holds a session's turns (its shard's, opened on first use)."""
        shard = shard_of(session_id)
        if shard not in self.shards:
            memory = self._memory_class.from_config(mem0_config())
            memory.embedding_model = _packaged_embedder(memory.embedding_model.config, self._vectors)
            self.shards[shard] = memory
        return self.shards[shard]

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
                hits = self._mem(user).search(
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
        sid = payload["session_id"]
        with self._lock:
            self._mem(sid).add(message, user_id=sid, metadata=metadata, infer=False)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._mem(session_id).delete_all(user_id=session_id)

    def reset(self, keep: set[str]) -> None:
        """Per session, a resumed run's finished sessions were forgotten as they ended; per analyst,
        exactly the finished sessions `keep` stay (published: they ran in earlier waves)."""
        with self._lock:
            if self.by_analyst and keep:
                for sid in sorted(set(self.peers) - keep):  # what a killed run stored of sessions it redoes
                    if shard_of(sid) in self.shards:
                        self._mem(sid).delete_all(user_id=sid)
            else:
                for memory in self.shards.values():
                    memory.reset()
        self._published = set(keep) if self.by_analyst else set()

    def stored_turns(self) -> set[str] | None:
        """Per analyst, nothing is kept on disk: a resume rebuilds the partition (module docstring)."""
        return set() if self.by_analyst else None

    def end_wave(self, sessions: Sequence[str]) -> None:
        self._published.update(sessions)

    def size(self, session_id: str | None = None) -> StoreSize:
        if session_id is None:  # per session, every session's memory was forgotten as it ended
            held = [self.size(s) for s in sorted(self._published)]
            return StoreSize(sum(h.entries for h in held), sum(h.bytes for h in held))
        with self._lock:
            memory = self._mem(session_id)
            held = memory.get_all(filters={"user_id": session_id}, top_k=SEARCH_LIMIT)["results"]
        text = sum(len(h["memory"].encode()) + len(h["metadata"]["payload"].encode()) for h in held)
        return StoreSize(len(held), text + len(held) * EMBEDDING_DIMS * 4)

    def close(self) -> None:
        for memory in self.shards.values():
            memory.close()  # its history database
