"""Episodic memory: past turns of one condition-run, retrieved by similarity to the current question.

One collection per condition-run (model × condition × benchmark version), shared by all sessions of
that run. The agent adds each turn as it finishes (SPEC §2). What a session may see is decided by
waves (DESIGN decision 6): a turn is visible at once to its own session, and to every other session
only after `publish`, which the runner calls for a wave's sessions when the wave has finished. So a
session sees its own earlier turns and every turn of earlier waves, never a wave-mate's, whatever
the timing of concurrent sessions; waves of one session (W = 1) keep "session i sees sessions
1..i-1". A resumed run calls `forget_session` before redoing an interrupted session;
`exclude_session` filters a session out where a caller wants that.

ChromaDB is the store (persistent, or a server); nearest neighbours are computed exactly over the
collection's vectors, mirrored in process when the collection is opened. New turns enter the
mirror at once and reach Chroma in one batch per commit (`flush`): the harness checkpoints whole
sessions, and a session interrupted before its flush is forgotten and redone on resume, so nothing
finer-grained would ever be read back. Turns read back from Chroma were committed, hence published.
Why not Chroma's query: benchmark questions repeat verbatim across sessions, so many stored turns
tie in distance, and which tied turns an approximate index returns depends on insertion history. A
resumed run cannot reproduce that history, so it would retrieve different turns than an
uninterrupted run. Exact search with an explicit tie-break (the asking session's own turns, then
the most recent published turn) makes retrieval a pure function of what is stored. A
condition-run holds at most 1,400 vectors: the search costs microseconds.

The store is shared by every session of the run, as the paper's; a query may be limited to some
sessions (`among`): the Episodic memory's `scope: analyst` limits it to the sessions of the asking
session's analyst (the extended benchmark's `analyst` column, `analyst_peers`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.memory.chroma import open_collection, recreate_collection
from memsql_assets.lib.memory.embeddings import embedding_function
from memsql_assets.lib.memory.errors import MemoryPayloadError, MemoryServiceError
from memsql_assets.lib.memory.protocol import StoreSize
from memsql_assets.lib.memory.working import validate_payload

DEFAULT_TOP_K = 3


def turn_id(session_id: str, turn_index: int) -> str:
    return f"{session_id}#{turn_index}"


def payload_source(payload: dict[str, Any]) -> str:
    """The source prefix (NW, SEC, BIRD): the payload's `source`, else the session id's prefix."""
    source = payload.get("source") or str(payload["session_id"]).split("-", 1)[0]
    if not source:
        raise MemoryPayloadError(f"session {payload['session_id']!r}: cannot tell the source of this payload")
    return str(source)


def analyst_peers(sessions_path: Path, required: bool = True) -> dict[str, frozenset[str]]:
    """Per session of a benchmark's sessions file, the sessions of its analyst (itself included).
    A file without an analyst column (the paper's benchmark) fails when `required`, else each session
    is its own analyst's only one."""
    if not sessions_path.exists():
        raise SourceError(sessions_path, "benchmark sessions file does not exist", "the output of the sessions asset")
    table = pq.read_table(sessions_path)
    if "analyst" not in table.column_names and not required:
        return {sid: frozenset({sid}) for sid in table.column("session_id").to_pylist()}
    if "analyst" not in table.column_names:
        raise SourceError(
            sessions_path, "has no analyst column", "a benchmark whose sessions name their analyst (the extended one)"
        )
    by_analyst: dict[str, set[str]] = {}
    rows = table.select(["session_id", "analyst"]).to_pylist()
    for row in rows:
        by_analyst.setdefault(row["analyst"], set()).add(row["session_id"])
    return {row["session_id"]: frozenset(by_analyst[row["analyst"]]) for row in rows}


class EpisodicMemory:
    """A Chroma collection of turn payloads (metadata and vectors) with exact retrieval.

    No Chroma documents: the payload already holds the question and SQL, nothing searches their
    text, and Chroma's full-text index of documents was half the cost of every upsert."""

    def __init__(self, client: Any, name: str):
        self.client = client
        self.name = name
        self._collection = open_collection(client, name)
        self._entries: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}  # published: visible to all
        # Unpublished turns by session: visible only to their own session until `publish`.
        self._staged: dict[str, dict[str, tuple[np.ndarray, dict[str, Any]]]] = {}
        self._pending: dict[str, tuple[dict[str, Any], list[float]]] = {}
        self._index: dict[str | None, tuple[np.ndarray, list[dict[str, Any]], np.ndarray]] = {}
        # The sessions of a wave add, forget and query from worker threads at once.
        self._lock = threading.RLock()
        self._stored: set[str] = set()  # sessions with turns in Chroma (read at open, or flushed since)
        self._load()

    def _load(self) -> None:
        try:
            got = self._collection.get(include=["embeddings", "metadatas"])
        except Exception as exc:
            raise MemoryServiceError(
                f"episodic memory {self.name!r}: cannot read the collection: {exc}"
            ) from exc
        self._entries = {
            eid: (np.asarray(vec, dtype=np.float32), meta)
            for eid, vec, meta in zip(got["ids"], got["embeddings"], got["metadatas"], strict=True)
        }
        self._stored = {meta["session_id"] for _, meta in self._entries.values()}
        self._index.clear()

    def reset(self) -> None:
        """Empty the collection (delete + create): used when a condition-run starts from scratch."""
        self._collection = recreate_collection(self.client, self.name)
        self._entries = {}
        self._staged = {}
        self._pending = {}
        self._stored = set()
        self._index.clear()

    def count(self) -> int:
        return len(self._entries) + sum(len(turns) for turns in self._staged.values())

    def size(self) -> StoreSize:
        """Every turn held (published and staged): its payload's bytes plus its vector's."""
        with self._lock:
            entries = [*self._entries.values(), *(e for t in self._staged.values() for e in t.values())]
        return StoreSize(len(entries), sum(len(meta["payload"].encode()) + vec.nbytes for vec, meta in entries))

    def publish(self, sessions: Iterable[str]) -> None:
        """Make these sessions' turns visible to every session (the runner: their wave has finished;
        other sessions' turns stay staged: waves of other sources are still running)."""
        with self._lock:
            for session_id in sessions:
                turns = self._staged.pop(session_id, None)
                if turns:
                    self._entries.update(turns)
                    self._index.clear()

    def forget_session(self, session_id: str) -> None:
        """Drop one session's turns: a resumed run redoes an interrupted session from a clean slate.
        Chroma is asked only if it holds the session (a fresh session costs it nothing: every
        session of a wave forgets itself as it starts, and Chroma's deletes run one at a time)."""
        if session_id in self._stored:
            try:
                self._collection.delete(where={"session_id": session_id})
            except Exception as exc:
                raise MemoryServiceError(
                    f"episodic memory {self.name!r}: cannot forget {session_id}: {exc}"
                ) from exc
        with self._lock:
            self._stored.discard(session_id)
            published = {k: v for k, v in self._entries.items() if v[1]["session_id"] != session_id}
            if len(published) != len(self._entries):
                self._entries = published
                self._index.clear()
            self._staged.pop(session_id, None)
            self._pending = {k: v for k, v in self._pending.items() if v[0]["session_id"] != session_id}

    def retain_sessions(self, keep: set[str]) -> None:
        """Drop every turn of a session not in `keep` (a resume redoes those sessions from scratch)."""
        with self._lock:
            stored = {meta["session_id"] for _, meta in self._entries.values()} | set(self._staged)
        drop = sorted(stored - keep)
        for session_id in drop:
            self.forget_session(session_id)

    def add(self, payload: dict[str, Any], embedding: list[float] | None = None) -> None:
        """Upsert one turn under id `{session_id}#{turn_index}`: re-adding it on resume changes nothing.
        Until `publish`, only its own session retrieves it.

        `embedding`, when given, is the question's vector (the agent embeds each question once and
        reuses it for retrieval and storage); otherwise the document is embedded here.
        """
        validate_payload(payload)
        metadata = {
            "session_id": payload["session_id"],
            "turn_index": int(payload["turn_index"]),
            "source": payload_source(payload),
            "payload": json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str),
        }
        if embedding is None:
            document = f"{payload['question']}\n{payload['sql'] or ''}"
            embedding = [float(x) for x in embedding_function()([document])[0]]
        vector = embedding
        eid = turn_id(payload["session_id"], payload["turn_index"])
        entry = (np.asarray(vector, dtype=np.float32), metadata)
        with self._lock:
            self._pending[eid] = (metadata, list(vector))
            if eid in self._entries:  # re-added after publishing: replaced in place, still visible to all
                self._entries[eid] = entry
                self._index.clear()
            else:
                self._staged.setdefault(payload["session_id"], {})[eid] = entry

    def flush(self) -> int:
        """Write the turns added since the last flush to Chroma in one upsert; returns how many."""
        with self._lock:
            pending = dict(self._pending)
        if not pending:
            return 0
        ids = list(pending)
        metas, vectors = zip(*pending.values(), strict=True)
        try:
            self._collection.upsert(ids=ids, metadatas=list(metas), embeddings=list(vectors))
        except Exception as exc:
            raise MemoryServiceError(
                f"episodic memory {self.name!r}: cannot store {len(ids)} turns: {exc}"
            ) from exc
        with self._lock:
            self._pending = {k: v for k, v in self._pending.items() if k not in pending}
            self._stored.update(meta["session_id"] for meta in metas)
        return len(ids)

    def _source_index(self, source: str | None) -> tuple[np.ndarray, list[dict[str, Any]], np.ndarray]:
        """(vectors, metadata, recency rank) of one source's published turns, rebuilt only after a change."""
        if source not in self._index:
            items = [
                (vec, meta)
                for vec, meta in self._entries.values()
                if source is None or meta["source"] == source
            ]
            items.sort(key=lambda vm: (vm[1]["session_id"], int(vm[1]["turn_index"])))
            vectors = np.stack([v for v, _ in items]) if items else np.zeros((0, 0), dtype=np.float32)
            recency = np.arange(len(items))  # position in (session, turn) order: larger is more recent
            self._index[source] = (vectors, [m for _, m in items], recency)
        return self._index[source]

    def _own_turns(self, session_id: str | None, source: str | None) -> list[tuple[np.ndarray, dict[str, Any]]]:
        """The asking session's unpublished turns of `source`, in turn order."""
        turns = self._staged.get(session_id, {}) if session_id is not None else {}
        own = [vm for vm in turns.values() if source is None or vm[1]["source"] == source]
        return sorted(own, key=lambda vm: int(vm[1]["turn_index"]))

    def query(
        self,
        text: str,
        k: int = DEFAULT_TOP_K,
        source: str | None = None,
        exclude_session: str | None = None,
        embedding: list[float] | None = None,
        session_id: str | None = None,
        among: Collection[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Up to `k` payloads nearest to `text` (squared L2 on unit vectors, Chroma's default space),
        each with its `distance`, among the published turns and the unpublished turns of `session_id`
        (the asking session), of the sessions `among` when given. Ties go to the most recent turn: the
        asking session's own turns (latest first), then published turns by (session id, turn)."""
        with self._lock:
            vectors, metas, recency = self._source_index(source)
            own = self._own_turns(session_id, source)
        if own:
            own_vectors = np.stack([v for v, _ in own])
            vectors = np.vstack([vectors, own_vectors]) if metas else own_vectors
            metas = [*metas, *(m for _, m in own)]
            recency = np.arange(len(metas))  # published in (session, turn) order, then own turns in order
        if k < 1 or not metas:
            return []
        query = np.asarray(
            embedding if embedding is not None else embedding_function()([text])[0], dtype=np.float32
        )
        distances = ((vectors - query) ** 2).sum(axis=1)
        keep = np.array(
            [m["session_id"] != exclude_session and (among is None or m["session_id"] in among) for m in metas],
            dtype=bool,
        )
        # lexsort: last key is primary. Distance (to 1e-6), then the most recent turn first.
        order = np.lexsort((-recency, np.round(distances, 6)))
        hits = []
        for i in order:
            if not keep[i]:
                continue
            payload = json.loads(metas[i]["payload"])
            payload["distance"] = float(distances[i])
            payload.setdefault("source", metas[i]["source"])
            hits.append(payload)
            if len(hits) == k:
                break
        return hits
