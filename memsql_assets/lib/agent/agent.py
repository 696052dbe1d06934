"""`run_turn`: the condition-aware agent of SPEC §2.

The retrievals (working-memory recall, episodic top-k, semantic top-1, the trajectory lookup of
condition E) and context resolution over the first two feed the prompt; the model is called through
the gateway, the SQL is scored, and the turn's payload is persisted to the stores the condition uses.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from memsql_assets.lib.agent.conditions import Condition
from memsql_assets.lib.agent.context import Resolution, resolve_context
from memsql_assets.lib.agent.prompts import PromptParts, build_messages
from memsql_assets.lib.benchmark.store import turn_id

Payload = dict[str, Any]


class WorkingStore(Protocol):
    def append(self, session_id: str, payload: Payload, window: int) -> list[Payload]: ...
    def recall(self, session_id: str, window: int) -> list[Payload]: ...


class EpisodicStore(Protocol):
    def add(self, payload: Payload, embedding: list[float] | None = None) -> None: ...
    def query(
        self,
        text: str,
        k: int = 3,
        source: str | None = None,
        exclude_session: str | None = None,
        embedding: list[float] | None = None,
        session_id: str | None = None,
    ) -> list[Payload]: ...


class SemanticStore(Protocol):
    def query(
        self, text: str, source: str, k: int = 1, embedding: list[float] | None = None
    ) -> list[dict[str, Any]]: ...


# (source prefix, question, question vector or None) -> markdown or None
TrajectoryLookup = Callable[[str, str, list[float] | None], str | None]


@dataclass
class TurnPrompt:
    messages: list[dict[str, str]]
    resolution: Resolution
    prompt_hash: str
    retrieval_s: float
    working: list[Payload] = field(default_factory=list)
    episodic: list[Payload] = field(default_factory=list)


def prompt_hash(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def turn_context(turn: Mapping[str, Any]) -> dict[str, Any]:
    """What a built-in model may know about the turn (never the referenced keys' values)."""
    return {
        "turn_id": turn_id(turn),
        "source": turn["source"],
        "gt_sql": turn["gt_sql"],
        "paraphrase_sql": turn["paraphrase_sql"],
        "sql_template": turn["sql_template"],
        "referenced_context_keys": list(turn["referenced_context_keys"]),
        "stated_values": dict(turn["stated_values"]),
        "guess_values": dict(turn["guess_values"]),
    }


@dataclass
class Agent:
    condition: Condition
    schemas: Mapping[str, str]  # source prefix -> schema text
    working: WorkingStore | None = None
    episodic: EpisodicStore | None = None
    semantic: SemanticStore | None = None
    trajectories: TrajectoryLookup | None = None
    episodic_k: int = 3
    embed: Callable[[str], list[float]] | None = None  # question -> vector, shared by all vector stores
    # session -> (turn_index, window): what Redis replied to that turn's append, which is what the
    # session's next turn would recall (only this session writes its key), without another round trip.
    _appended: dict[str, tuple[int, list[Payload]]] = field(default_factory=dict, init=False, repr=False)

    def _vector(self, question: str) -> list[float] | None:
        uses_vectors = self.condition.episodic or self.condition.semantic or self.condition.trajectory
        return self.embed(question) if uses_vectors and self.embed else None

    async def assemble(self, turn: Mapping[str, Any]) -> TurnPrompt:
        started = time.perf_counter()
        sid, question, source = turn["session_id"], turn["question"], turn["source"]
        c = self.condition
        vector = self._vector(question)

        working: list[Payload] = []
        if c.window and self.working:
            index, known = self._appended.pop(sid, (None, None))
            if known is not None and index == turn["turn_index"] - 1:
                working = known[: c.window]
            else:  # the session's first turn (or a redone one): ask Redis
                working = await asyncio.to_thread(self.working.recall, sid, c.window)
        # The other stores answer in process in well under a millisecond (episodic from its mirror,
        # semantic and trajectory from the answers warmed up front): a thread hand-off costs more.
        episodic = (
            self.episodic.query(question, self.episodic_k, source, None, vector, sid)
            if c.episodic and self.episodic
            else []
        )
        semantic_hits = self.semantic.query(question, source, 1, vector) if c.semantic and self.semantic else []
        trajectory = self.trajectories(source, question, vector) if c.trajectory and self.trajectories else None
        resolution = resolve_context(turn["referenced_context_keys"], working, episodic)
        parts = PromptParts(
            source=source,
            schema=self.schemas[source],
            question=question,
            output_requirements=turn.get("output_requirements", ""),
            semantic_hints=[h["text"] for h in semantic_hits],
            episodic=episodic,
            working=working,
            trajectory=trajectory or None,
            resolved=resolution.values or None,
        )
        messages = build_messages(parts)
        return TurnPrompt(
            messages=messages,
            resolution=resolution,
            prompt_hash=prompt_hash(messages),
            retrieval_s=time.perf_counter() - started,
            working=working,
            episodic=episodic,
        )

    def cleared(self, session_id: str, first_turn: int) -> None:
        """The session's working memory was just emptied: its `first_turn` recalls nothing (no round trip)."""
        self._appended[session_id] = (first_turn - 1, [])

    def persist(self, turn: Mapping[str, Any], generated_sql: str | None, result_summary: str) -> None:
        """Write the turn's payload to the stores this condition uses (semantic memory is read-only).
        Blocking (Redis): the runner calls it in the worker thread that scored the turn."""
        payload: Payload = {
            "session_id": turn["session_id"],
            "turn_index": turn["turn_index"],
            "source": turn["source"],
            "question": turn["question"],
            "sql": generated_sql,
            "result_summary": result_summary,
            "state_updates": dict(turn["state_updates"]),
        }
        if self.condition.window and self.working:
            window = self.working.append(turn["session_id"], payload, self.condition.window)
            self._appended[turn["session_id"]] = (turn["turn_index"], window)
        if self.condition.episodic and self.episodic:  # in process until the runner's commit
            self.episodic.add(payload, self._vector(turn["question"]))
