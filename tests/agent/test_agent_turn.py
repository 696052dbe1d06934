"""A turn through Agent.assemble and the agent loop: the condition's prompt is the agent's first
message (E's trajectory: its explore segment; the others load per phase), and the trace sums into the
reply a turn row is built from."""

from __future__ import annotations

import asyncio

from agent_helpers import GT_SQL, TURN, explored_trajectory, gateway, registry

from memsql_assets.lib.agent.agent import Agent
from memsql_assets.lib.agent.agent_turn import agent_turn, turn_reply
from memsql_assets.lib.agent.limits import AgentLimits
from memsql_assets.lib.agent.loop import (
    NO_SCHEMA_NOTE,
    AgentTrace,
    TurnOutcome,
    first_messages,
    gateway_complete,
)
from memsql_assets.lib.agent.turn_tools import TurnTools
from memsql_assets.lib.conditions import get_condition
from memsql_assets.lib.memory.plugins import build_memory
from memsql_assets.lib.models.request_store import evaluation_cell
from memsql_assets.lib.vocabulary import AGENT_BASELINE_CONDITION, AGENTSM_CONDITION

TURN_ROW = {
    "session_id": "BIRD-1-001",
    "turn_index": 1,
    "source": "BIRD",
    "question": "How many loans belong to accounts of districts whose A3 is Prague?",
    "referenced_context_keys": [],
    "output_requirements": "Return one row with one column n.",
}


class EmptyWorking:
    """Narrow fake: the session's first turn, so working memory holds nothing yet."""

    def recall(self, session_id, window):
        return []


def condition_turn(home, tools, condition, markdown):
    schemas = {"BIRD": "loan(...), account(...), district(...)"}
    memory = build_memory(get_condition(condition))
    memory.working = EmptyWorking()
    memory.lookup = lambda _source, _question, _vector: markdown
    agent = Agent(get_condition(condition), schemas, memory)
    gw = gateway(home, registry(home))
    cell = evaluation_cell("gold-agent", condition, "BIRD-1-001#1")
    complete = gateway_complete(gw, "gold-agent", TURN, cell)
    return asyncio.run(agent_turn(agent, TURN_ROW, TurnTools(tools), complete, AgentLimits()))


def test_the_trajectory_of_condition_e_saves_the_reference_agents_steps(bird, tmp_path):
    markdown = explored_trajectory(bird)
    prompt_t, trace_t = condition_turn(tmp_path, bird, AGENT_BASELINE_CONDITION, markdown)
    prompt_e, trace_e = condition_turn(tmp_path, bird, AGENTSM_CONDITION, markdown)
    first = prompt_e.messages[-1]["content"]
    assert "Reference trajectory" in first and "## Explore" in first
    assert "## Execute" not in first and "## Final SQL" not in first  # loaded per phase, not up front
    assert set(prompt_e.trajectory) == {"explore", "execute"} and not prompt_t.trajectory
    assert "Reference trajectory" not in prompt_t.messages[-1]["content"]
    assert "Schema:" not in first and "Schema:" not in prompt_t.messages[-1]["content"]
    # T: list_tables, get_ddl of loan, account and district, validate_result, submit_sql
    assert (len(trace_t.steps), len(trace_e.steps)) == (6, 2)
    # its one call, validate_result, enters the validate phase, which this trajectory has no segment of
    assert [s.loaded for s in trace_e.steps] == [(), ()]
    for trace in (trace_t, trace_e):
        reply = turn_reply(trace)
        assert reply.ok and reply.text == GT_SQL and reply.request_key == trace.steps[-1].request_key
        assert reply.prompt_tokens == sum(s.prompt_tokens for s in trace.steps) > 0
        assert (reply.attempts, reply.cache_hit) == (len(trace.steps), False)
    # the same turns again: every step from the request store
    _, replayed = condition_turn(tmp_path, bird, AGENTSM_CONDITION, markdown)
    assert turn_reply(replayed).cache_hit and turn_reply(replayed).attempts == 0


def test_a_turn_without_sql_has_an_empty_answer_and_a_failed_call_its_error_type():
    assert turn_reply(AgentTrace((), TurnOutcome.BUDGET_EXHAUSTED, None)).text == ""
    failed = turn_reply(AgentTrace((), TurnOutcome.MODEL_ERROR, None, "rate_limited", "slow down"))
    assert (failed.ok, failed.error_type, failed.cache_hit) == (False, "rate_limited", False)


def test_with_the_schema_in_the_prompt_the_reference_agent_submits_at_once(bird, tmp_path):
    markdown = explored_trajectory(bird)
    for condition in ("T_schema", "E_schema"):
        prompt, trace = condition_turn(tmp_path, bird, condition, markdown)
        assert "\n\nSchema:\nloan(...)" in prompt.messages[-1]["content"]
        assert [[u.tool for u in s.tool_uses] for s in trace.steps] == [["submit_sql"]], condition
        assert trace.final_sql == GT_SQL


def test_the_agent_is_told_when_the_schema_is_not_in_its_first_message():
    without = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Question: q"}]
    with_schema = [without[0], {"role": "user", "content": "Source guidance:\n- g\n\nSchema:\nt(x)\n\nQuestion: q"}]
    assert first_messages(without, AgentLimits())[0]["content"].endswith(NO_SCHEMA_NOTE)
    assert NO_SCHEMA_NOTE not in first_messages(with_schema, AgentLimits())[0]["content"]
