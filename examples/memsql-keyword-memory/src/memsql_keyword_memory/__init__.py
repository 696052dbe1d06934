"""An example memory plug-in for memsql: the session's latest turn, plus its earlier turns ranked by the
words they share with the question.

It implements memsql's memory protocol (memsql_assets/lib/memory/protocol.py) by subclassing
`MemoryBase`: `Params` declares the parameters the conditions file may give, `retrieve` returns what
the prompt shows before the question, `persist` keeps the turn after it was scored, and `forget` drops
a session's turns (memsql calls it before a session runs and after it ended: the memory is per session).
It reads only the question and the stored turns' question and SQL, never `turn.referenced_keys` or a
payload's `state_updates`, so it runs in either context mode: in annotated mode (the paper's) memsql
resolves the values the turn refers to from the retrieved turns by its own rule (the first retrieved
turn that bound each one), because `retrieve` returns no resolution of its own; in observed mode the
payloads carry no annotations and the model reads the values from the turns shown.
"""

from __future__ import annotations

import re
import threading

from pydantic import BaseModel, ConfigDict, Field

from memsql_assets.lib.memory.protocol import MemoryBase, MemoryTurn, Retrieval, StoreSize

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class KeywordParams(BaseModel):
    """What the conditions file may set under `params`."""

    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=2, ge=1)
    """Earlier turns shown besides the latest, those sharing the most words with the question."""


class KeywordOverlapMemory(MemoryBase):
    """The session's latest turn, then its `top_k` earlier turns by shared words (ties: the later turn)."""

    Params = KeywordParams

    def __init__(self, params: KeywordParams | None = None):
        super().__init__(params)
        self._turns: dict[str, list[dict]] = {}
        self._lock = threading.Lock()  # sessions run concurrently

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        with self._lock:
            earlier = list(self._turns.get(turn.session_id, []))
        if not earlier:
            return Retrieval()
        latest, rest = earlier[-1], earlier[:-1]
        asked = words(turn.question)
        ranked = sorted(rest, key=lambda p: (len(asked & words(p["question"])), p["turn_index"]), reverse=True)
        # The latest turn as the recent conversation, the matches as similar past turns.
        return Retrieval(recent=[latest], similar=ranked[: self.params.top_k])

    def persist(self, payload: dict) -> None:
        with self._lock:
            self._turns.setdefault(payload["session_id"], []).append(dict(payload))

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._turns.pop(session_id, None)

    def reset(self, keep: set[str]) -> None:
        with self._lock:
            self._turns.clear()

    def size(self, session_id: str | None = None) -> StoreSize:
        with self._lock:
            turns = self._turns.get(session_id, []) if session_id else [t for ts in self._turns.values() for t in ts]
        return StoreSize(len(turns), sum(len(t["question"].encode()) + len((t["sql"] or "").encode()) for t in turns))
