"""The agent loop: a model explores a source database with tools, then submits one final SQL.

The turn's first messages (system prompt and the condition's memory blocks, agent.build_messages)
are given with the turn's tools (turn_tools.TurnTools: tool_specs.py's, composite tools, the
trajectory's phase segments); each model reply is one step. A step's tool calls run on the
sandboxed read-only connection of a trajectories/tools.DbTools, and their observations go back to
the model as tool messages. The turn ends at `submit_sql`, at a text reply (its SQL is the
answer), or at a limit. Every step is one model request made through `complete` (bound to the model
gateway by gateway_complete): keyed by that step's messages, so each is its own request-store
record and a resumed turn replays its steps without calling the model.

Nothing raises for bad model behaviour: each case is a typed outcome, with the steps so far kept.
Per call (CallOutcome): an unknown tool, arguments that are not JSON or fail the schema, a tool SQL
that would write (refused by the sandbox) or runs past the tool's time limit, any other tool error;
the model sees the error and may go on. Per turn (TurnOutcome): submitted, the step budget spent
without a submission, the turn's time limit, a reply with neither a tool call nor SQL, a failed
model call.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from memsql_assets.lib.agent.limits import AgentLimits
from memsql_assets.lib.agent.prompts import schema_in_prompt
from memsql_assets.lib.agent.tool_specs import SUBMIT_TOOL
from memsql_assets.lib.agent.turn_tools import CallOutcome, ToolUse, TurnTools
from memsql_assets.lib.evaluation.extract import extract_sql
from memsql_assets.lib.models.gateway import ModelGateway, ModelReply
from memsql_assets.lib.sql.syntax import sql_tables
from memsql_assets.lib.trajectories.phases import PHASES
from memsql_assets.lib.trajectories.trace import clip

# Step fields that measure this run (how long, whether the model was called), not the turn.
STEP_MEASUREMENTS = ("latency_s", "cache_hit", "attempts")
AGENT_INSTRUCTIONS = (
    "You can explore the database with the tools before you answer: list tables, read DDL, sample rows, "
    "look at values, find join paths, execute and validate queries (read-only). When you are sure, call "
    f"{SUBMIT_TOOL} with the one final SQLite query. Each reply is one step; you have at most {{steps}} steps."
)
# Added where the first message has no schema (the condition's schema_in_prompt is false).
NO_SCHEMA_NOTE = "The schema is not in this message: find the tables and columns you need with the tools."

# (messages, tools) -> the model's reply to this step
Complete = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Awaitable[ModelReply]]


class TurnOutcome(StrEnum):
    SUBMITTED = "submitted"  # by submit_sql
    FINAL_TEXT = "final_text"  # a text reply with SQL in it
    BUDGET_EXHAUSTED = "budget_exhausted"
    TIME_LIMIT = "time_limit"
    NO_ACTION = "no_action"  # a reply with neither a tool call nor SQL
    MODEL_ERROR = "model_error"


@dataclass(frozen=True)
class AgentStep:
    index: int  # 1-based
    text: str  # the reply's text, clipped
    tool_uses: tuple[ToolUse, ...]
    loaded: tuple[str, ...]  # trajectory phases whose segment its calls entered (sent with their results)
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int
    cost_usd: float
    latency_s: float  # the model call's (as stored, on a replay)
    request_key: str
    cache_hit: bool
    attempts: int  # calls made for this step now (0 on a replay)

    def as_json(self, measurements: bool = True) -> dict[str, Any]:
        left_out = ("tool_uses",) if measurements else ("tool_uses", *STEP_MEASUREMENTS)
        d = {k: v for k, v in self.__dict__.items() if k not in left_out}
        d["tool_uses"] = [u.as_json() for u in self.tool_uses]
        return d


@dataclass(frozen=True)
class AgentTrace:
    steps: tuple[AgentStep, ...]
    outcome: TurnOutcome
    final_sql: str | None
    error_type: str | None = None
    error_message: str | None = None

    @property
    def model_calls(self) -> int:
        return sum(1 for s in self.steps if not s.cache_hit)

    @property
    def tool_calls(self) -> int:
        """Calls of tools, a composite's calls each counted."""
        return sum(u.n_calls for u in self.uses())

    def uses(self) -> list[ToolUse]:
        return [u for s in self.steps for u in s.tool_uses]

    def phase_counts(self) -> dict[str, int]:
        """Tool calls per phase (a composite's calls count under its phase)."""
        counts: dict[str, int] = {}
        for use in (u for u in self.uses() if u.phase):
            counts[use.phase] = counts.get(use.phase, 0) + use.n_calls
        return counts

    def tables_touched(self) -> set[str]:
        """Tables (lowercased) the agent's calls named as arguments or read in their SQL."""
        out: set[str] = set()
        for use in self.uses():
            args = use.arguments or {}
            items = [args, *(a for a in args.get("calls") or () if isinstance(a, dict))]
            for item in items:
                out |= {str(item[k]).lower() for k in ("table", "source", "target") if k in item}
                out |= {t.lower() for t in sql_tables(str(item.get("sql", "")))}
        return out

    def measures(self, trajectory_tables: Collection[str] = ()) -> dict[str, Any]:
        """AgentSM's per-turn measures: steps, tool calls per step, phase shares of the agent's own
        calls, composite uses, and (with a retrieved trajectory's tables) whether it used them."""
        phases = self.phase_counts()
        classified = sum(phases.values())
        calls = self.tool_calls
        wanted = {t.lower() for t in trajectory_tables}
        return {
            "steps": len(self.steps),
            "tool_calls": calls,
            "tool_calls_per_step": round(calls / len(self.steps), 4) if self.steps else 0.0,
            **{f"{p}_share": round(phases.get(p, 0) / classified, 4) if classified else 0.0 for p in PHASES},
            "composite_uses": sum(1 for u in self.uses() if u.calls),
            "trajectory_tables_used": bool(wanted & self.tables_touched()) if wanted else None,
        }

    def as_json(self, measurements: bool = True) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "final_sql": self.final_sql,
            "error_type": self.error_type,
            "error_message": self.error_message,
            "steps": [s.as_json(measurements) for s in self.steps],
        }


def gateway_complete(
    gateway: ModelGateway, model_key: str, turn_context: Mapping[str, Any], cell: Mapping[str, Any] | None
) -> Complete:
    """`complete` for run_agent through the model gateway: one request (and store record) per step."""

    async def complete(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        return await gateway.acomplete(model_key, messages, turn_context, cell, tools=tools)

    return complete


def first_messages(messages: list[dict[str, Any]], limits: AgentLimits) -> list[dict[str, Any]]:
    """The turn's messages with the agent instructions added to the system prompt (and, without the
    schema in them, that the tools must find it)."""
    note = AGENT_INSTRUCTIONS.format(steps=limits.max_steps)
    if not schema_in_prompt([str(m.get("content") or "") for m in messages]):
        note = f"{note} {NO_SCHEMA_NOTE}"
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0]['content']}\n\n{note}"
    else:
        out.insert(0, {"role": "system", "content": note})
    return out


def _assistant_message(reply: ModelReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    message["tool_calls"] = [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for c in reply.tool_calls
    ]
    return message


def _step(
    index: int, reply: ModelReply, uses: tuple[ToolUse, ...], loaded: tuple[str, ...] = ()
) -> AgentStep:
    return AgentStep(
        index,
        clip(reply.text),
        uses,
        loaded,
        reply.prompt_tokens,
        reply.completion_tokens,
        reply.reasoning_tokens,
        reply.cost_usd,
        round(reply.latency_s, 4),
        reply.request_key,
        reply.cache_hit,
        reply.attempts,
    )


async def _one_step(
    complete: Complete, messages: list[dict[str, Any]], tools: list[dict[str, Any]], remaining_s: float
) -> ModelReply | None:
    """The model's reply to this step, or None when the turn's time ran out first."""
    try:
        async with asyncio.timeout(remaining_s):
            return await complete(messages, tools)
    except TimeoutError:
        return None


async def run_agent(
    messages: list[dict[str, Any]],
    tools: TurnTools,
    complete: Complete,
    limits: AgentLimits = AgentLimits(),
    clock: Callable[[], float] = time.monotonic,
) -> AgentTrace:
    """Run one turn of the agent from the turn's `messages` (build_messages) to a typed outcome."""
    offered = tools.openai()
    convo = first_messages(messages, limits)
    deadline = clock() + limits.turn_time_s
    steps: list[AgentStep] = []

    def end(outcome: TurnOutcome, sql: str | None = None, reply: ModelReply | None = None) -> AgentTrace:
        err = (reply.error_type, reply.error_message) if reply is not None else (None, None)
        return AgentTrace(tuple(steps), outcome, sql, *err)

    for index in range(1, limits.max_steps + 1):
        remaining = deadline - clock()
        reply = await _one_step(complete, convo, offered, remaining) if remaining > 0 else None
        if reply is None:
            return end(TurnOutcome.TIME_LIMIT)
        if not reply.ok:
            steps.append(_step(index, reply, ()))
            return end(TurnOutcome.MODEL_ERROR, reply=reply)
        if not reply.tool_calls:
            steps.append(_step(index, reply, ()))
            sql = extract_sql(reply.text).sql
            return end(TurnOutcome.FINAL_TEXT, sql) if sql else end(TurnOutcome.NO_ACTION)
        done = [await asyncio.to_thread(tools.run, c) for c in reply.tool_calls]
        uses = tuple(u for u, _ in done)
        submitted = next((u for u in uses if u.outcome is CallOutcome.SUBMITTED), None)
        segments = tools.entered(uses) if submitted is None else []
        steps.append(_step(index, reply, uses, tuple(m["phase"] for m in segments)))
        if submitted is not None and submitted.arguments is not None:
            return end(TurnOutcome.SUBMITTED, str(submitted.arguments["sql"]))
        results = [{"role": "tool", "tool_call_id": u.call_id, "content": text} for u, text in done]
        convo = [
            *convo,
            _assistant_message(reply),
            *results,
            *({"role": "user", "content": m["content"]} for m in segments),
        ]
    return end(TurnOutcome.BUDGET_EXHAUSTED)


def trace_json(trace: AgentTrace, measurements: bool = True) -> str:
    """The trace as one canonical JSON line. `measurements=False` leaves out what differs between a
    clean run and its replay (STEP_MEASUREMENTS), as results.MEASUREMENT_COLUMNS do for rows."""
    return json.dumps(trace.as_json(measurements), sort_keys=True, ensure_ascii=False)
