"""One evaluated turn through the agent loop, and its reply in the shape a turn row is built from.

`agent_turn` assembles the turn's prompt as every condition does (Agent.assemble: the condition's
memory blocks, and under E the retrieved trajectory's explore segment, in the first message) and runs
the agent loop on it, with the trajectory's other segments to load per phase; persisting the turn's payload stays with the caller, as for a single-shot turn.
`turn_reply` sums the trace's steps into one ModelReply: its text is the final SQL, its tokens,
cost, latency and attempts the sums of the steps', its request key the last step's; a failed model
call keeps its error type. A turn that ended without SQL (budget, time limit, no action) has empty
text, which scores as an empty answer; the trace's outcome says why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from memsql_assets.lib.agent.agent import Agent, TurnPrompt
from memsql_assets.lib.agent.limits import AgentLimits
from memsql_assets.lib.agent.loop import AgentTrace, Complete, run_agent
from memsql_assets.lib.agent.turn_tools import LOADED_PHASES, TurnTools
from memsql_assets.lib.models.gateway import ModelReply


async def agent_turn(
    agent: Agent, turn: Mapping[str, Any], tools: TurnTools, complete: Complete, limits: AgentLimits
) -> tuple[TurnPrompt, AgentTrace]:
    """The turn's prompt and the agent's trace. With a retrieved trajectory (E), its execute and
    validate segments become the turn's to load (on demand, or when the agent's calls enter them)."""
    prompt = await agent.assemble(turn)
    if prompt.trajectory:
        loadable = {p: doc for p, doc in prompt.trajectory.items() if p in LOADED_PHASES}
        tools = dataclasses.replace(tools, trajectory=loadable, loaded=set())
    return prompt, await run_agent(prompt.messages, tools, complete, limits)


def turn_reply(trace: AgentTrace) -> ModelReply:
    steps = trace.steps
    return ModelReply(
        text=trace.final_sql or "",
        reasoning="",
        prompt_tokens=sum(s.prompt_tokens for s in steps),
        completion_tokens=sum(s.completion_tokens for s in steps),
        latency_s=round(sum(s.latency_s for s in steps), 4),
        cost_usd=sum(s.cost_usd for s in steps),
        cache_hit=bool(steps) and all(s.cache_hit for s in steps),
        attempts=sum(s.attempts for s in steps),
        error_type=trace.error_type,
        error_message=trace.error_message,
        request_key=steps[-1].request_key if steps else "",
        reasoning_tokens=sum(s.reasoning_tokens for s in steps),
    )
