"""The agent conditions' partitions (T, and E: AgentSM): each turn through the agent loop with the
exploration tools, its steps and trace in the row; the step budget from the settings; `memsql run`
evaluates only the reference agent under them, on its registry entry's fixed sample of sessions."""

from __future__ import annotations

import dataclasses
import json
import shutil
import statistics

import pytest

from memsql_assets.defs.evaluation.partitions import condition_partitions
from memsql_assets.lib.agent.limits import AgentLimitError
from memsql_assets.lib.agent.loop import TurnOutcome
from memsql_assets.lib.agent.tool_specs import LOAD_PHASE_TOOL
from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import comparable_rows, partition_dir
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.trajectories.lookup import load_composites, trajectory_lookup
from memsql_assets.lib.vocabulary import (
    AGENT_BASELINE_CONDITION,
    AGENT_CONDITIONS,
    AGENTSM_CONDITION,
    BENCHMARKS,
    PAPER_BENCHMARK,
    REFERENCE_AGENT,
)
from memsql_assets.orchestration.selection import main_run_cells

SAMPLE = EvalSettings(sessions=9)  # one session of each source x tier
AGENT = REFERENCE_AGENT


@pytest.fixture(scope="module")
def agentsm_home(trajectory_home):
    """A copy of the small benchmark with its own trajectory store and composite tools (E reads them)."""
    return trajectory_home("agentsm_home")


def offered_tools(home) -> dict[str, set[str]]:
    """Per condition, every tool name the reference agent's stored requests offered."""
    offered: dict[str, set[str]] = {}
    for path in (home / "requests").glob("??/*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record["model_key"] == AGENT:
            names = {t["function"]["name"] for t in record["request"]["params"].get("tools", [])}
            offered.setdefault(record["cell"]["condition"], set()).update(names)
    return offered


def test_agentsm_saves_the_reference_agents_steps_and_both_score_100(agentsm_home):
    t, e = (
        evaluate_partition(agentsm_home, AGENT, c, SAMPLE, trajectory_factory=trajectory_lookup)
        for c in (AGENT_BASELINE_CONDITION, AGENTSM_CONDITION)
    )
    assert t.summary["ex_strict"] == e.summary["ex_strict"] == 100.0, e.summary["error_classes"]
    steps = {c.summary["condition"]: [r["steps"] for r in c.rows] for c in (t, e)}
    assert statistics.median(steps[AGENTSM_CONDITION]) < statistics.median(steps[AGENT_BASELINE_CONDITION])
    assert {r["trajectory_tables_used"] for r in e.rows} <= {True, False} and any(
        r["trajectory_tables_used"] for r in e.rows
    )
    first_steps = [json.loads(r["agent_trace"])["steps"][0] for r in e.rows]
    assert all(s["tool_uses"] for s in first_steps)
    offered = offered_tools(agentsm_home)
    composites = {c.name for c in load_composites(agentsm_home)}
    assert composites and composites | {LOAD_PHASE_TOOL} <= offered[AGENTSM_CONDITION]
    assert not (composites | {LOAD_PHASE_TOOL}) & offered[AGENT_BASELINE_CONDITION]
    again = evaluate_partition(agentsm_home, AGENT, AGENTSM_CONDITION, SAMPLE, trajectory_factory=trajectory_lookup)
    assert again.summary["model_calls_this_run"] == 0
    assert comparable_rows(again.rows) == comparable_rows(e.rows)


def test_a_model_whose_entry_fixes_a_sample_evaluates_it_as_its_partition(agentsm_home):
    registry = load_registry()
    entry = registry.get(AGENT).model_copy(update={"sessions": 12})
    fixed = dataclasses.replace(registry, entries={**registry.entries, AGENT: entry})
    out = evaluate_partition(agentsm_home, AGENT, AGENT_BASELINE_CONDITION, registry=fixed)
    s = out.summary
    assert s["complete"] and s["partition_sample"] == 12 and len(s["sample_sessions"]) == 12
    assert {r["session_id"] for r in out.rows} == set(s["sample_sessions"])
    assert out.result_path.parent == partition_dir(agentsm_home, AGENT, AGENT_BASELINE_CONDITION)
    assert entry.fingerprint() != registry.get(AGENT).fingerprint()  # a changed sample makes it stale


def test_the_reference_agent_scores_100_under_t_and_a_rerun_asks_no_model(small_home):
    first = evaluate_partition(small_home, AGENT, "T", SAMPLE)
    assert first.summary["ex_strict"] == 100.0, first.summary["error_classes"]
    assert len({r["session_id"] for r in first.rows}) == 9
    for row in first.rows:
        trace = json.loads(row["agent_trace"])
        assert row["steps"] == len(trace["steps"]) > 0 and trace["outcome"] == TurnOutcome.SUBMITTED
        assert row["tool_calls"] >= row["steps"] - 1  # every step but the submission calls a tool
        assert row["explore_share"] > 0 and row["validate_share"] > 0
        assert row["trajectory_tables_used"] is None  # T retrieves no trajectory
        assert row["extracted_sql"] == trace["final_sql"]
    assert first.summary["model_calls_this_run"] == sum(r["steps"] for r in first.rows)
    again = evaluate_partition(small_home, AGENT, "T", SAMPLE)
    assert again.summary["model_calls_this_run"] == 0 and again.summary["calls"] == 0
    assert comparable_rows(again.rows) == comparable_rows(first.rows)


def test_the_step_budget_comes_from_the_settings(small_home):
    # The reference agent's plan takes at least four steps: with two, no turn submits.
    out = evaluate_partition(small_home, AGENT, "T", EvalSettings(sessions=9, agent_max_steps=2))
    assert out.rows and all(r["steps"] == 2 and not r["ex_strict"] for r in out.rows)
    assert {json.loads(r["agent_trace"])["outcome"] for r in out.rows} == {TurnOutcome.BUDGET_EXHAUSTED}
    assert {r["error_class"] for r in out.rows} == {"empty"}


@pytest.mark.parametrize(
    ("setting", "words"),
    [({"agent_max_steps": 0}, "step budget"), ({"agent_time_limit_s": 0.5}, "time limit")],
)
def test_an_agent_limit_below_one_is_one_line_before_anything_is_written(small_home, setting, words):
    with pytest.raises(AgentLimitError, match=words) as err:
        evaluate_partition(small_home, AGENT, "T", EvalSettings(**setting))
    assert "\n" not in str(err.value)
    assert not partition_dir(small_home, AGENT, "T").exists()


def test_a_condition_without_tools_fills_the_agent_columns_with_zero_and_null(small_home):
    rows = evaluate_partition(small_home, "gold", "B_wm5", EvalSettings(sessions=9)).rows
    assert rows and all(r["ex_strict"] for r in rows)
    assert {(r["steps"], r["tool_calls"], r["composite_uses"]) for r in rows} == {(0, 0, 0)}
    assert {(r["explore_share"], r["execute_share"], r["validate_share"]) for r in rows} == {(0.0, 0.0, 0.0)}
    assert {(r["trajectory_tables_used"], r["agent_trace"]) for r in rows} == {(None, None)}


def test_memsql_run_evaluates_only_the_reference_agent_under_the_tools_conditions():
    tools = {name for name, c in CONDITIONS.items() if c.tools}
    in_run = {name for name in tools if CONDITIONS[name].main_run}
    assert in_run == set(AGENT_CONDITIONS) and tools - in_run == {"T_schema", "E_schema"}  # `memsql eval`'s
    for benchmark in BENCHMARKS:
        cells = main_run_cells(benchmark, list(CONDITIONS))
        agent_cells = {(m, c) for m, c in cells if c in tools or m == AGENT}
        assert agent_cells == ({(AGENT, c) for c in in_run} if benchmark == PAPER_BENCHMARK else set())
    assert tools <= set(condition_partitions.get_partition_keys())


def test_the_plan_counts_a_t_cell_as_up_to_a_step_budget_of_calls(small_home, tmp_path):
    from memsql_assets.lib.harness.plan import call_cost_bound, plan_partition, plan_run
    from memsql_assets.lib.models.registry import Prices, load_registry

    home = tmp_path / "home"  # no request store yet
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("requests", "results", "redis", "dbt"))
    entry = load_registry().get(AGENT)
    before = plan_partition(home, entry, "T", sessions=9)
    assert before.calls == before.cells > 0
    evaluate_partition(home, AGENT, "T", SAMPLE)
    assert plan_partition(home, entry, "T", sessions=9).calls == 0  # its steps' records replay
    priced = entry.model_copy(
        update={"price_per_mtok": Prices(input=1.0, output=1.0), "provider_params": {"max_tokens": 100}}
    )
    turns = [{"session_id": "S", "turn_index": 1, "source": "NW", "tier": 1}]
    one, seven = (plan_run(priced, "T", turns, 1, (), max_steps=n).cost_bound_usd for n in (1, 7))
    per_call = call_cost_bound(priced)
    assert per_call > 0 and one == pytest.approx(per_call, abs=0.01)  # rounded up to cents
    assert seven == pytest.approx(7 * per_call, abs=0.01)
    assert plan_run(priced, "B_wm5", turns, 1, (), max_steps=7).cost_bound_usd == one
