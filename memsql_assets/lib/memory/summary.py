"""Condition S: a rolling summary of the session's earlier turns, the compression baseline.

By default the summary is **extractive** and deterministic: it is made of sentences of the conversation
itself, the question and the SQL of a few earlier turns (their result lines are dropped). After each
turn it keeps the turns that carry the conversation's current state and the newest turn, at most
`max_turns` of them, the most recent first; a turn once dropped never comes back (a rolling summary,
not a re-read of the history). What carries the current state depends on the context mode
(context_mode.py): annotated, for each value the session has bound, the latest turn that bound it (its
annotated state updates), and the Resolved block takes each referenced value from the kept turns,
newest first; observed, for what each comparison of the SQL with a literal pins (`Filter.key`,
lib/sql/filters.py: a customer is one key whether the SQL names its id, looks its name up or joins
its table), the latest turn whose SQL pinned it: chosen from the text alone, with no Resolved block.

With `model: <registry key>`, a registry model writes the summary instead (abstractive): before each
turn that follows new turns, the model gets the previous summary and those turns and answers the
updated summary, which the prompt shows as text. That call goes through the gateway like any model
call (request store, retries, cost), as its own cell (`memory: summary`). A model's summary resolves
nothing: whatever it states, the model under evaluation must read it from the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from memsql_assets.lib.config_files import Strict
from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.memory.protocol import (
    MemoryBase,
    MemoryContext,
    MemoryTurn,
    PromptBlock,
    Retrieval,
    StoreSize,
)
from memsql_assets.lib.memory.resolution import Payload, resolve_from
from memsql_assets.lib.sql.filters import filters

SUMMARY_HEADER = "Summary of earlier turns:"
SUMMARY_STORE = "summary"
# What an extractive summary keeps of a turn: its sentences (question, SQL), and in annotated mode the
# values it bound.
KEPT_FIELDS = ("session_id", "turn_index", "question", "sql")
ANNOTATED_FIELDS = (*KEPT_FIELDS, "state_updates")
SUMMARIZER_SYSTEM = (
    "You keep a running summary of a conversation between a user and a SQL assistant. The summary is all "
    "the assistant will see of the earlier turns. Keep every entity, identifier, code, year, metric and "
    "filter value the conversation has established, and which one is current when a later turn changed "
    "it. Answer with the updated summary only."
)


class SummaryParams(Strict):
    """How the summary is written and how much of the conversation it keeps."""

    max_turns: int = Field(default=3, ge=1)
    """Extractive: the most earlier turns whose question and SQL the summary keeps."""
    model: str | None = None
    """A registry model (models.yaml key) that writes the summary instead; unset: extractive."""
    max_words: int = Field(default=150, ge=10)
    """A model's summary: the length it is asked to stay within."""


def render_turns(turns: Sequence[Payload]) -> str:
    """The kept turns in conversation order, each its question and SQL lines."""
    return "\n\n".join(f"Q: {p.get('question', '')}\nSQL: {p.get('sql') or '(none)'}" for p in turns)


def carried(turn: Payload, mode: ContextMode) -> Iterable[str]:
    """What a turn states of the conversation's state: its bound keys (annotated), else the expressions
    its SQL compared with literals (observed)."""
    if mode == ContextMode.ANNOTATED:
        return turn.get("state_updates") or {}
    return [f.key or f.label for f in filters(turn.get("sql"))]  # by meaning, not by how the SQL wrote it


def extract(
    kept: Sequence[Payload], new: Payload, max_turns: int, mode: ContextMode = ContextMode.ANNOTATED
) -> list[Payload]:
    """The summary after `new`: the turns holding each stated value's latest statement, and the newest."""
    fields = ANNOTATED_FIELDS if mode == ContextMode.ANNOTATED else KEPT_FIELDS
    turns = [*kept, {k: new.get(k) for k in fields}]
    latest: dict[str, int] = {}
    for i, turn in enumerate(turns):
        for key in carried(turn, mode):
            latest[key] = i
    chosen = sorted({*latest.values(), len(turns) - 1})[-max_turns:]
    return [turns[i] for i in chosen]


class RollingSummary(MemoryBase):
    """S: the session's summary, rolled forward after every turn (module docstring)."""

    Params: ClassVar[type[BaseModel]] = SummaryParams

    def __init__(self, params: Any = None):
        super().__init__(params)
        self._kept: dict[str, list[Payload]] = {}  # extractive: the kept turns, in conversation order
        self._text: dict[str, str] = {}  # a model's summary so far
        self._pending: dict[str, list[Payload]] = {}  # turns the model has not summarized yet

    def open(self, ctx: MemoryContext) -> None:
        super().open(ctx)
        if self.params.model is not None and ctx.acomplete is None:
            raise MemsqlError(f"condition {ctx.condition}: its summary model needs the run's model gateway")

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        if self.params.model is not None:
            raise MemsqlError("a model-written summary is retrieved asynchronously (aretrieve)")
        kept = self._kept.get(turn.session_id, [])
        if not kept:
            return Retrieval()
        block = PromptBlock(SUMMARY_HEADER, render_turns(kept))
        if self.context_mode == ContextMode.OBSERVED:
            return Retrieval(blocks=[block])
        return Retrieval(
            blocks=[block], resolution=resolve_from(turn.referenced_keys, [(SUMMARY_STORE, reversed(kept))])
        )

    async def aretrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        if self.params.model is None:
            return self.retrieve(turn, vector)
        sid = turn.session_id
        pending = self._pending.pop(sid, [])
        if pending:
            self._text[sid] = await self._summarize(turn, self._text.get(sid, ""), pending)
        text = self._text.get(sid)
        return Retrieval(blocks=[PromptBlock(SUMMARY_HEADER, text)]) if text else Retrieval()

    async def _summarize(self, turn: MemoryTurn, previous: str, new: list[Payload]) -> str:
        turns = "\n\n".join(
            f"Q: {p['question']}\nSQL: {p.get('sql') or '(none)'}\nResult: {p.get('result_summary') or '(none)'}"
            for p in new
        )
        user = (
            f"Summary so far:\n{previous or '(nothing yet)'}\n\nNew turns:\n{turns}\n\n"
            f"Write the updated summary in at most {self.params.max_words} words."
        )
        messages = [{"role": "system", "content": SUMMARIZER_SYSTEM}, {"role": "user", "content": user}]
        cell = {"memory": SUMMARY_STORE, "session": turn.session_id, "turn": turn.turn_index}
        assert self.ctx.acomplete is not None  # open() proved it
        return (await self.ctx.acomplete(self.params.model, messages, cell)).strip()

    def persist(self, payload: Payload) -> None:
        sid = payload["session_id"]
        if self.params.model is not None:
            self._pending.setdefault(sid, []).append(dict(payload))
        else:
            mode = self.context_mode
            self._kept[sid] = extract(self._kept.get(sid, []), payload, self.params.max_turns, mode)

    def forget(self, session_id: str) -> None:
        for table in (self._kept, self._text, self._pending):
            table.pop(session_id, None)

    def reset(self, keep: set[str]) -> None:
        self._kept.clear()
        self._text.clear()
        self._pending.clear()

    def size(self, session_id: str | None = None) -> StoreSize:
        """The summary's text as the prompt shows it (per session, or every session's)."""
        sessions = [session_id] if session_id is not None else sorted({*self._kept, *self._text})
        texts = [self._text.get(s) or render_turns(self._kept.get(s, [])) for s in sessions]
        texts = [t for t in texts if t]
        return StoreSize(len(texts), sum(len(t.encode()) for t in texts))
