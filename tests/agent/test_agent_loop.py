"""The agent loop on a real source database: typed outcomes of bad model behaviour, the reference
agent through the gateway (one request-store record per step, a resumed turn replays its steps)."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_helpers import (
    CELL,
    GT_SQL,
    TURN,
    Scripted,
    explored_trajectory,
    gateway,
    registry,
    reply,
    turn_messages,
)

from memsql_assets.lib.agent.limits import AgentLimitError, AgentLimits
from memsql_assets.lib.agent.loop import CallOutcome, TurnOutcome, gateway_complete, run_agent, trace_json
from memsql_assets.lib.agent.tool_specs import (
    SUBMIT_TOOL,
    TOOL_SPECS,
    ArgumentError,
    openai_tools,
    parse_arguments,
)
from memsql_assets.lib.agent.turn_tools import TurnTools
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.reference.reference_agent import explored_calls
from memsql_assets.lib.sql.syntax import sql_tables
from memsql_assets.lib.trajectories.tools import TOOL_NAMES, DbTools

SLOW_SQL = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"


def run(messages, db, complete, **kw):
    return asyncio.run(run_agent(messages, TurnTools(db), complete, **kw))


def test_every_exploration_tool_is_offered_with_a_schema():
    assert set(TOOL_SPECS) == {*TOOL_NAMES, SUBMIT_TOOL}
    for tool in openai_tools():
        assert tool["type"] == "function" and tool["function"]["parameters"]["type"] == "object"


@pytest.mark.parametrize(
    ("tool", "raw", "kind"),
    [
        ("get_ddl", "{table: loan}", "invalid_json"),
        ("get_ddl", "[1]", "invalid_arguments"),
        ("get_ddl", "{}", "invalid_arguments"),
        ("get_ddl", '{"table": "loan", "extra": 1}', "invalid_arguments"),
        ("sample_rows", '{"table": "loan", "n": "3"}', "invalid_arguments"),
        ("sample_rows", '{"table": "loan", "n": 0}', "invalid_arguments"),
        ("sample_rows", '{"table": "loan", "n": true}', "invalid_arguments"),
    ],
)
def test_bad_arguments_are_typed(tool, raw, kind):
    with pytest.raises(ArgumentError) as err:
        parse_arguments(TOOL_SPECS[tool], raw)
    assert err.value.kind == kind
    assert parse_arguments(TOOL_SPECS["list_tables"], "") == {}


@pytest.mark.parametrize(("field", "value"), [("max_steps", 0), ("max_steps", -2), ("turn_time_s", 0.5)])
def test_limits_below_one_are_one_line(field, value):
    with pytest.raises(AgentLimitError) as err:
        AgentLimits(**{field: value})
    assert "\n" not in str(err.value) and str(value) in str(err.value)


def test_bad_calls_are_typed_and_the_turn_goes_on_to_its_submission(bird):
    model = Scripted(
        reply(("frobnicate", "{}")),
        reply(("get_ddl", "{table: loan}"), ("get_ddl", '{"tabel": "loan"}')),
        reply(("execute_sql", '{"sql": "DELETE FROM loan"}')),
        reply(("execute_sql", json.dumps({"sql": SLOW_SQL}))),
        reply(("execute_sql", '{"sql": "SELECT nope FROM loan"}'), ("list_tables", "{}")),
        reply((SUBMIT_TOOL, json.dumps({"sql": GT_SQL}))),
    )
    quick = DbTools(bird.conn, bird.db, bird.stats, sql_timeout_s=0.3)  # SLOW_SQL runs past it
    trace = run(turn_messages(), quick, model)
    outcomes = [[u.outcome for u in s.tool_uses] for s in trace.steps]
    assert outcomes == [
        [CallOutcome.UNKNOWN_TOOL],
        [CallOutcome.INVALID_JSON, CallOutcome.INVALID_ARGUMENTS],
        [CallOutcome.SQL_REFUSED],
        [CallOutcome.SQL_TIMEOUT],
        [CallOutcome.TOOL_ERROR, CallOutcome.OK],
        [CallOutcome.SUBMITTED],
    ]
    assert (trace.outcome, trace.final_sql, trace.tool_calls) == (TurnOutcome.SUBMITTED, GT_SQL, 8)
    assert model.offered == [list(TOOL_SPECS)] * 6, "every step is offered the same tools"
    # the model saw each error as the answer to its call, by call id
    tool_msgs = [m for m in model.seen[-1] if m["role"] == "tool"]
    assert len(tool_msgs) == 7 and tool_msgs[0]["content"].startswith("error (unknown_tool): unknown tool")
    assert tool_msgs[5]["content"].startswith("error (tool_error)") and tool_msgs[6]["content"].startswith(
        "8 tables"
    )
    assert [m["tool_call_id"] for m in tool_msgs[1:3]] == ["c0", "c1"]
    assert trace.steps[4].tool_uses[1].phase == "explore" and trace.steps[0].tool_uses[0].phase is None


def test_budget_exhausted_keeps_every_step(bird):
    trace = run(
        turn_messages(), bird, Scripted(reply(("list_tables", "{}"))), limits=AgentLimits(max_steps=3)
    )
    assert trace.outcome is TurnOutcome.BUDGET_EXHAUSTED and len(trace.steps) == 3 and trace.final_sql is None


def test_the_instructions_name_the_budget(bird):
    model = Scripted(reply(text="SELECT 1"))
    run(turn_messages(), bird, model, limits=AgentLimits(max_steps=4))
    system = model.seen[0][0]
    assert (
        system["content"].startswith("You are an expert SQLite analyst.")
        and "at most 4 steps" in system["content"]
    )


@pytest.mark.parametrize(
    ("text", "outcome", "sql"),
    [
        ("```sql\nSELECT COUNT(*) FROM loan\n```", TurnOutcome.FINAL_TEXT, "SELECT COUNT(*) FROM loan"),
        ("I cannot tell from here.", TurnOutcome.NO_ACTION, None),
    ],
)
def test_a_reply_without_tool_calls_ends_the_turn(bird, text, outcome, sql):
    trace = run(turn_messages(), bird, Scripted(reply(("list_tables", "{}")), reply(text=text)))
    assert (trace.outcome, trace.final_sql, len(trace.steps)) == (outcome, sql, 2)


def test_a_failed_model_call_is_typed_with_the_steps_kept(bird):
    trace = run(turn_messages(), bird, Scripted(reply(("list_tables", "{}")), reply(error="rate_limited")))
    assert (trace.outcome, trace.error_type, len(trace.steps)) == (TurnOutcome.MODEL_ERROR, "rate_limited", 2)
    assert trace.steps[0].tool_uses[0].outcome is CallOutcome.OK


def test_the_turn_time_limit(bird):
    ticks = iter([0.0, 1.0, 2.5, 9.0])
    trace = run(
        turn_messages(),
        bird,
        Scripted(reply(("list_tables", "{}"))),
        limits=AgentLimits(turn_time_s=3),
        clock=lambda: next(ticks),
    )
    assert trace.outcome is TurnOutcome.TIME_LIMIT and len(trace.steps) == 2


def test_the_reference_agents_policy():
    assert sql_tables(GT_SQL) == ["loan", "account", "district"]
    assert sql_tables('WITH t AS (SELECT * FROM "Order Details") SELECT * FROM t JOIN [Orders] o') == [
        "Order Details",
        "Orders",
    ]


def agent_turn(home, tools, extra=""):
    gw = gateway(home, registry(home))
    complete = gateway_complete(gw, "gold-agent", TURN, CELL)
    return run(turn_messages(extra), tools, complete), gw


def test_reference_agent_scores_and_saves_steps_with_a_trajectory(bird, tmp_path):
    markdown = explored_trajectory(bird)
    assert ("get_ddl", "district") in explored_calls([markdown]) and (
        "get_ddl",
        "nope",
    ) not in explored_calls([markdown])
    plain, gw_t = agent_turn(tmp_path / "t", bird)
    with_traj, _ = agent_turn(
        tmp_path / "e", bird, "Reference trajectory from a similar solved question:\n" + markdown
    )
    assert (
        (plain.outcome, plain.final_sql)
        == (with_traj.outcome, with_traj.final_sql)
        == (TurnOutcome.SUBMITTED, GT_SQL)
    )
    assert [u.tool for s in plain.steps for u in s.tool_uses] == [
        "list_tables",
        "get_ddl",
        "get_ddl",
        "get_ddl",
        "validate_result",
        SUBMIT_TOOL,
    ]
    assert [u.tool for s in with_traj.steps for u in s.tool_uses] == ["validate_result", SUBMIT_TOOL]
    assert all(u.outcome in (CallOutcome.OK, CallOutcome.SUBMITTED) for s in plain.steps for u in s.tool_uses)
    assert plain.phase_counts() == {"explore": 4, "validate": 1}
    # one request-store record per step, each with the step's messages and the tools offered
    store = RequestStore.at_home(tmp_path / "t")
    assert store.count() == len(plain.steps) == gw_t.calls == 6
    first = store.get(plain.steps[0].request_key)
    assert first["request"]["params"]["tools"] == openai_tools() and len(first["request"]["messages"]) == 2
    assert first["response"]["tool_calls"][0]["name"] == "list_tables"


def test_a_resumed_turn_replays_its_steps_without_the_model(bird, tmp_path):
    clean, _ = agent_turn(tmp_path, bird)
    store = RequestStore.at_home(tmp_path)
    for step in clean.steps[-3:]:  # the turn was killed before its last three steps were stored
        store.path_for(step.request_key).unlink()
    resumed, gw = agent_turn(tmp_path, bird)
    assert gw.calls == 3 and [s.cache_hit for s in resumed.steps] == [True] * 3 + [False] * 3
    assert trace_json(resumed, False) == trace_json(clean, False)
    again, gw = agent_turn(tmp_path, bird)
    assert gw.calls == 0 and again.model_calls == 0 and trace_json(again, False) == trace_json(clean, False)
    # a replay reports the latencies the store recorded, the measurements of the run that called the model
    assert [s.latency_s for s in again.steps] == [s.latency_s for s in resumed.steps]


def test_the_reference_agent_answers_as_gold_without_tools_and_needs_submit_among_tools(tmp_path):
    gw = gateway(tmp_path, registry(tmp_path))
    single_shot = asyncio.run(gw.acomplete("gold-agent", turn_messages(), TURN, CELL))
    assert single_shot.ok and single_shot.text == TURN["gt_sql"] and not single_shot.tool_calls
    no_submit = [{"type": "function", "function": {"name": "list_tables", "parameters": {"type": "object"}}}]
    got = asyncio.run(gw.acomplete("gold-agent", turn_messages(), TURN, {**CELL, "turn": 2}, tools=no_submit))
    assert got.error_type == "bad_request" and SUBMIT_TOOL in got.error_message
