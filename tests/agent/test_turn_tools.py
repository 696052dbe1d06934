"""Composite tools and the trajectory's phase segments in the agent loop, and the per-turn measures."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_helpers import GT_SQL, Scripted, explored_trajectory, reply

from memsql_assets.lib.agent.loop import TurnOutcome, run_agent
from memsql_assets.lib.agent.tool_specs import LOAD_PHASE_TOOL, SUBMIT_TOOL
from memsql_assets.lib.agent.turn_tools import CallOutcome, TurnTools, markdown_segments
from memsql_assets.lib.trajectories.composites import CompositeTool

DDL_SAMPLE = CompositeTool("explore_ddl_sample", "explore", ("get_ddl", "sample_rows"), 0.5, 4)
SEGMENTS = {
    "explore": "# Explore steps\n...",
    "execute": "# Execute steps\n- run the join",
    "validate": "# Validate\n- count",
}


def call(name: str, args: object, call_id: str = "c1") -> dict[str, str]:
    return {"id": call_id, "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}


def test_a_composite_runs_its_tools_with_their_own_arguments_in_one_call(bird):
    box = TurnTools(bird, composites=[DDL_SAMPLE])
    assert DDL_SAMPLE.name in [t["function"]["name"] for t in box.openai()]
    use, text = box.run(call(DDL_SAMPLE.name, {"calls": [{"table": "loan"}, {"table": "district", "n": 2}]}))
    assert (use.outcome, use.phase, use.calls, use.n_calls) == (
        CallOutcome.OK,
        "explore",
        DDL_SAMPLE.steps,
        2,
    )
    assert text.startswith("get_ddl: loan(loan_id") and " | sample_rows: 2 rows [district_id" in text
    failing, text = box.run(call(DDL_SAMPLE.name, {"calls": [{"table": "nope"}, {"table": "loan"}]}))
    assert failing.outcome is CallOutcome.TOOL_ERROR and failing.error == "get_ddl: no such table: nope"
    assert "sample_rows: 3 rows" in text, "the other calls of the composite still ran"


@pytest.mark.parametrize(
    "args",
    [
        {"calls": [{"table": "loan"}]},
        {"calls": [{"table": "loan"}, {"tabel": "loan"}]},
        {"calls": "loan"},
        {},
    ],
)
def test_composite_arguments_are_checked_per_step(bird, args):
    use, text = TurnTools(bird, composites=[DDL_SAMPLE]).run(call(DDL_SAMPLE.name, args))
    assert use.outcome is CallOutcome.INVALID_ARGUMENTS and text.startswith("error (invalid_arguments)")


def test_phase_segments_load_on_demand_and_once(bird):
    box = TurnTools(bird, trajectory=SEGMENTS)
    spec = next(t for t in box.openai() if t["function"]["name"] == LOAD_PHASE_TOOL)
    assert spec["function"]["parameters"]["properties"]["phase"]["enum"] == ["execute", "validate"]
    use, text = box.run(call(LOAD_PHASE_TOOL, {"phase": "execute"}))
    assert use.outcome is CallOutcome.OK and text == SEGMENTS["execute"] and use.phase is None
    bad, _ = box.run(call(LOAD_PHASE_TOOL, {"phase": "explore"}))
    assert bad.outcome is CallOutcome.INVALID_ARGUMENTS
    assert LOAD_PHASE_TOOL not in [t["function"]["name"] for t in TurnTools(bird).openai()]


def test_a_segment_arrives_when_the_agents_calls_enter_its_phase(bird):
    model = Scripted(
        reply(("list_tables", {})),
        reply(("execute_sql", {"sql": GT_SQL})),
        reply(("execute_sql", {"sql": "SELECT COUNT(*) FROM loan"}), ("validate_result", {"sql": GT_SQL})),
        reply((SUBMIT_TOOL, {"sql": GT_SQL})),
    )
    trace = asyncio.run(
        run_agent([{"role": "user", "content": "q"}], TurnTools(bird, trajectory=SEGMENTS), model)
    )
    assert trace.outcome is TurnOutcome.SUBMITTED
    assert [s.loaded for s in trace.steps] == [(), ("execute",), ("validate",), ()]
    loads = [
        m["content"] for m in model.seen[-1] if m["role"] == "user" and "Reference trajectory" in m["content"]
    ]
    assert loads == [
        "Reference trajectory, its execute steps:\n" + SEGMENTS["execute"],
        "Reference trajectory, its validate steps:\n" + SEGMENTS["validate"],
    ]
    # the segment follows the tool results of the step that entered the phase
    roles = [m["role"] for m in model.seen[2]]
    assert roles[-3:] == ["assistant", "tool", "user"]


def test_a_trajectorys_markdown_by_phase(bird):
    segments = markdown_segments(explored_trajectory(bird))
    assert sorted(segments) == ["execute", "explore"]
    assert (
        segments["explore"].startswith("# Trajectory: q")
        and '`get_ddl` `{"table": "district"}`' in segments["explore"]
    )
    assert "execute_sql" not in segments["explore"] and "get_ddl" not in segments["execute"]
    assert segments["execute"].startswith("## Execute") and segments["execute"].rstrip().endswith("```")
    assert GT_SQL in segments["execute"]


def test_the_per_turn_measures(bird):
    model = Scripted(
        reply(("list_tables", {}), (DDL_SAMPLE.name, {"calls": [{"table": "loan"}, {"table": "loan"}]})),
        reply(("execute_sql", {"sql": GT_SQL})),
        reply(("validate_result", {"sql": GT_SQL})),
        reply((SUBMIT_TOOL, {"sql": GT_SQL})),
    )
    trace = asyncio.run(
        run_agent([{"role": "user", "content": "q"}], TurnTools(bird, composites=[DDL_SAMPLE]), model)
    )
    assert DDL_SAMPLE.name in model.offered[0]
    assert trace.measures(["District", "card"]) == {
        "steps": 4,
        "tool_calls": 6,  # the composite's two calls count, submit_sql counts as a call without a phase
        "tool_calls_per_step": 1.5,
        "explore_share": 0.6,
        "execute_share": 0.2,
        "validate_share": 0.2,
        "composite_uses": 1,
        "trajectory_tables_used": True,
    }
    assert trace.measures(["card"])["trajectory_tables_used"] is False
    assert trace.measures()["trajectory_tables_used"] is None
