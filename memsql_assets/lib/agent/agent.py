"""`run_turn`: the condition-aware agent of SPEC §2, over the condition's memory (lib/memory/protocol.py).

The memory retrieves (working-memory recall, episodic top-k, semantic top-1, the trajectory lookup of
conditions E and E_prompt, a summary, a plug-in's blocks) and, where it resolves nothing itself, context resolution
walks the retrieved turns; the prompt is built from both. In observed context mode
(lib/context_mode.py) the memory gets no key names and stores no annotations, and the prompt has
no Resolved block: the grader alone resolves the turn's keys from the retrieved turns' annotations
(`missing_keys`, contamination, stale state); the model is called through the gateway,
the SQL is scored, and the turn's payload is persisted to the memory. A memory that raises (a
plug-in's bug, a library's error) gives that turn a `MemoryFailure` instead of a crash: the turn is
recorded as a memory error and the partition goes on. A store that is down (`MemoryServiceError`)
still stops the partition, as it would any condition.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memsql_assets.lib.agent.prompts import PromptParts, build_messages
from memsql_assets.lib.agent.turn_tools import markdown_segments
from memsql_assets.lib.benchmark.store import turn_id
from memsql_assets.lib.conditions import Condition
from memsql_assets.lib.context_mode import ContextMode, WithheldKeys
from memsql_assets.lib.memory.errors import MemoryServiceError
from memsql_assets.lib.memory.protocol import Memory, MemoryTurn, Retrieval
from memsql_assets.lib.memory.resolution import Payload, Resolution, resolve_context


@dataclass(frozen=True)
class MemoryFailure:
    """The condition's memory raised during a turn: in which step, and what."""

    step: str  # retrieve | persist
    error: str  # the exception's type and message

    @classmethod
    def of(cls, step: str, exc: BaseException) -> MemoryFailure:
        return cls(step, f"{type(exc).__name__}: {exc}")

    def message(self) -> str:
        return f"memory error during {self.step}: {self.error}"


@dataclass
class TurnPrompt:
    messages: list[dict[str, str]]
    resolution: Resolution
    prompt_hash: str
    retrieval_s: float
    working: list[Payload] = field(default_factory=list)
    episodic: list[Payload] = field(default_factory=list)
    memory_failure: MemoryFailure | None = None  # retrieval failed: the model is not asked
    # Under a condition with tools, the retrieved trajectory's segments by phase (turn_tools.markdown_segments):
    # the explore segment is in `messages`, the others are the agent's to load.
    trajectory: dict[str, str] = field(default_factory=dict)


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


def memory_turn(
    turn: Mapping[str, Any], mode: ContextMode = ContextMode.ANNOTATED, condition: str = ""
) -> MemoryTurn:
    """What the memory may see of a benchmark turn (in observed mode, never its referenced keys)."""
    keys = (
        tuple(turn["referenced_context_keys"]) if mode == ContextMode.ANNOTATED else WithheldKeys(condition)
    )
    return MemoryTurn(
        session_id=turn["session_id"],
        turn_index=turn["turn_index"],
        source=turn["source"],
        question=turn["question"],
        referenced_keys=keys,
    )


def annotated(payloads: list[Payload], annotations: Mapping[str, Mapping[str, Any]]) -> list[Payload]:
    """Retrieved payloads with their turns' annotated state updates, for the grader's resolution only."""
    return [
        {**p, "state_updates": annotations.get(turn_id(p), {})}
        if "session_id" in p and "turn_index" in p
        else p
        for p in payloads
    ]


async def _retrieve(memory: Memory, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
    """The memory's retrieval: its own async form where it has one (MemoryBase), else `retrieve`."""
    aretrieve = getattr(memory, "aretrieve", None)
    if aretrieve is not None:
        return await aretrieve(turn, vector)
    if getattr(memory, "blocking", False):
        return await asyncio.to_thread(memory.retrieve, turn, vector)
    return memory.retrieve(turn, vector)


@dataclass
class Agent:
    condition: Condition
    schemas: Mapping[str, str]  # source prefix -> schema text
    memory: Memory
    embed: Callable[[str], list[float]] | None = None  # question -> vector, shared by all vector stores
    context_mode: ContextMode = ContextMode.ANNOTATED
    # Observed mode: each turn's annotated state updates by turn id, which only the grader reads.
    annotations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def observed(self) -> bool:
        return self.context_mode == ContextMode.OBSERVED

    def _vector(self, question: str) -> list[float] | None:
        return self.embed(question) if getattr(self.memory, "uses_vectors", False) and self.embed else None

    async def assemble(self, turn: Mapping[str, Any]) -> TurnPrompt:
        started = time.perf_counter()
        question = turn["question"]
        failure = None
        try:
            mturn = memory_turn(turn, self.context_mode, self.condition.name)
            retrieval = await _retrieve(self.memory, mturn, self._vector(question))
        except MemoryServiceError:
            raise  # a store is down: the partition stops, as under any condition
        except Exception as exc:  # the memory's own failure: this turn's memory_error
            retrieval, failure = Retrieval(), MemoryFailure.of("retrieve", exc)
        working, episodic = list(retrieval.recent), list(retrieval.similar)
        segments = (
            markdown_segments(retrieval.trajectory) if retrieval.trajectory and self.condition.tools else {}
        )
        resolution = self._resolution(turn, retrieval, working, episodic)
        parts = PromptParts(
            source=turn["source"],
            schema=self.schemas[turn["source"]] if self.condition.schema_in_prompt else "",
            question=question,
            output_requirements=turn.get("output_requirements", ""),
            semantic_hints=list(retrieval.hints),
            episodic=episodic,
            working=working,
            trajectory=segments.get("explore") if segments else retrieval.trajectory or None,
            resolved=None if self.observed else resolution.values or None,
            blocks=tuple(b.render() for b in retrieval.blocks),
            observed=self.observed,
        )
        messages = build_messages(parts)
        return TurnPrompt(
            messages=messages,
            resolution=resolution,
            prompt_hash=prompt_hash(messages),
            retrieval_s=time.perf_counter() - started,
            working=working,
            episodic=episodic,
            memory_failure=failure,
            trajectory=segments,
        )

    def _resolution(
        self, turn: Mapping[str, Any], retrieval: Retrieval, working: list[Payload], episodic: list[Payload]
    ) -> Resolution:
        """The turn's keys resolved: the memory's own resolution, else the paper's rule over the retrieved
        turns; in observed mode the grader's, from their annotations (never shown in the prompt)."""
        keys = turn["referenced_context_keys"]
        if self.observed:
            return resolve_context(
                keys, annotated(working, self.annotations), annotated(episodic, self.annotations)
            )
        return retrieval.resolution or resolve_context(keys, working, episodic)

    def persist(
        self, turn: Mapping[str, Any], generated_sql: str | None, result_summary: str
    ) -> MemoryFailure | None:
        """Write the turn's payload to the condition's memory; its failure, if it raised. Blocking for
        a memory that waits on I/O (Redis): the runner calls it in a worker thread then."""
        payload: Payload = {
            "session_id": turn["session_id"],
            "turn_index": turn["turn_index"],
            "source": turn["source"],
            "question": turn["question"],
            "sql": generated_sql,
            "result_summary": result_summary,
        }
        if not self.observed:  # the paper's mode: the turn's annotated values travel with it
            payload["state_updates"] = dict(turn["state_updates"])
        try:
            self.memory.persist(payload)
        except MemoryServiceError:
            raise
        except Exception as exc:
            return MemoryFailure.of("persist", exc)
        return None
