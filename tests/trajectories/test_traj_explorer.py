"""Tools against a real database, the deterministic policy, and the LLM explorer with a fake model."""

from __future__ import annotations

import json

import pytest

from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.trajectories.composites import CompositeTool
from memsql_assets.lib.trajectories.explorer import (
    DeterministicExplorer,
    LlmExplorer,
    make_explorer,
    mentioned_tables,
    parse_action,
)
from memsql_assets.lib.trajectories.phases import classify
from memsql_assets.lib.trajectories.questions import generate_questions
from memsql_assets.lib.trajectories.synthetic_question import SyntheticQuestion
from memsql_assets.lib.trajectories.tools import DbTools


@pytest.fixture()
def bird(embedded_dbs):
    conn = open_readonly(embedded_dbs["bird_financial"])
    yield DbTools(conn, "bird_financial")
    conn.close()


def test_tools_real_results(bird):
    assert bird.call("list_tables", {}).observation.startswith("8 tables: account(")
    ddl = bird.call("get_ddl", {"table": "loan"})
    assert "account_id INTEGER →account.account_id" in ddl.observation
    path = bird.call("find_join_path", {"source": "loan", "target": "district"})
    assert (
        path.observation
        == "loan.account_id = account.account_id → account.district_id = district.district_id"
    )
    assert "'OWNER'" in bird.call("distinct_values", {"table": "disp", "column": "type"}).observation
    assert "rows=682" in bird.call("column_stats", {"table": "loan", "column": "amount"}).observation
    assert bird.call("execute_sql", {"sql": "SELECT COUNT(*) FROM loan"}).observation.startswith("1 rows")
    assert bird.call("validate_result", {"sql": "SELECT 1 WHERE 0"}).error == "result is empty"
    for call in (
        bird.call("get_ddl", {"table": "nope"}),
        bird.call("distinct_values", {"table": "loan", "column": "nope"}),
        bird.call("execute_sql", {"sql": "SELEC 1"}),
        bird.call("frobnicate", {}),
        bird.call("get_ddl", {"tabel": "loan"}),
    ):
        assert call.error and not call.observation
    # read-only: nothing a tool runs can change the database
    assert bird.call("execute_sql", {"sql": "DELETE FROM loan"}).error
    long = bird.call("sample_rows", {"table": "trans", "n": 50})
    assert len(long.observation) <= 200


def test_mentioned_tables_whole_words(bird):
    assert mentioned_tables("How many order records per account frequency?", bird.stats) == [
        "order",
        "account",
    ]
    assert mentioned_tables("total account_to of transactions", bird.stats) == []


def test_deterministic_policy_re_explores_after_error(embedded_dbs, bird):
    qs = generate_questions("bird_financial", embedded_dbs["bird_financial"], 40, seed=0)
    traces = [DeterministicExplorer(seed=0).explore(q, bird) for q in qs]
    assert traces == [DeterministicExplorer(seed=0).explore(q, bird) for q in qs]  # deterministic
    assert all(t.final_sql_ok for t in traces)
    with_error = [t for t in traces if any(s.error for s in t.steps)]
    assert with_error, "some join questions draft the join-less query first"
    for t in with_error:
        phases = [classify(s) for s in t.steps]
        i = next(k for k, s in enumerate(t.steps) if s.error)
        assert phases[i] == "execute" and "no such column" in (t.steps[i].error or "")
        assert phases[i + 1] == "explore"  # exploration re-entered after the error
        assert phases[-1] == "validate" or phases[-2] == "validate"
    for t in traces:
        assert t.steps[0].tool == "list_tables"
        assert all(len(s.observation) <= 200 for s in t.steps)


def test_join_discovery_is_explored(embedded_dbs, bird):
    """Before the answer runs, a join question looks up the foreign key of every hop and samples the
    joined tables; the phase rules file both under explore."""
    qs = generate_questions("bird_financial", embedded_dbs["bird_financial"], 20, seed=0)
    explorer = DeterministicExplorer(seed=0, naive_rate=0.0)
    for q in qs:
        t = explorer.explore(q, bird)
        calls = [c for s in t.steps for c in s.primitive_calls()]
        answer = next(i for i, c in enumerate(calls) if c.tool == "execute_sql" and c.args["sql"] == q.sql)
        before = calls[:answer]
        hops = [(c.args["source"], c.args["target"]) for c in before if c.tool == "find_join_path"]
        assert hops == list(zip(q.tables, q.tables[1:], strict=False)), q.id
        assert all(c.error is None and " = " in c.observation for c in before if c.tool == "find_join_path")
        (sample,) = [c for c in before if c.tool == "execute_sql"]
        assert " JOIN " in sample.args["sql"] and sample.args["sql"].endswith("LIMIT 3")
        assert sample.error is None and sample.observation.startswith("3 rows")
        assert {classify(c) for c in before} == {"explore"}
        assert {c.args["table"] for c in before if c.tool == "get_ddl"} == set(q.tables)


def test_llm_explorer_with_fake_model(bird):
    q = SyntheticQuestion(
        "bird_financial-000000000001",
        "bird_financial",
        "How many loan records have status 'A'?",
        "SELECT COUNT(*) FROM loan WHERE status = 'A'",
        "count_with_value",
        ("loan",),
    )
    script = iter(
        [
            'I will look at the tables first. {"tool": "list_tables", "args": {}}',
            '```json\n{"tool": "explore_ddl_sample", "args": {"calls": [{"table": "loan"}, {"table": "loan", "n": 2}]}}\n```',
            '{"tool": "execute_sql", "args": {"sql": "SELECT COUNT(*) FROM loans"}}',
            "hmm, let me think",
            '{"tool": "execute_sql", "args": {"sql": "SELECT COUNT(*) FROM loan WHERE status = \'A\'"}}',
            '{"final_sql": "SELECT COUNT(*) FROM loan WHERE status = \'A\'"}',
        ]
    )
    seen: list[list[dict]] = []

    def propose(messages):
        seen.append(messages)
        return next(script)

    comp = CompositeTool("explore_ddl_sample", "explore", ("get_ddl", "sample_rows"), 1.0, 3)
    explorer = make_explorer("llm", propose=propose, composites=[comp])
    assert isinstance(explorer, LlmExplorer)
    trace = explorer.explore(q, bird)
    assert [s.tool for s in trace.steps] == [
        "list_tables",
        "explore_ddl_sample",
        "execute_sql",
        "invalid_action",
        "execute_sql",
    ]
    assert trace.steps[1].n_calls == 2 and classify(trace.steps[1]) == "explore"
    assert "no such table: loans" in (trace.steps[2].error or "")
    assert trace.final_sql_ok and trace.explorer == "llm"
    assert "explore_ddl_sample = get_ddl + sample_rows" in seen[0][0]["content"]
    assert seen[-1][-1]["content"].startswith("Observation: 1 rows")
    json.dumps(trace.as_json())


def test_llm_explorer_gives_up_after_max_steps(bird):
    q = SyntheticQuestion("x-000000000001", "bird_financial", "q", "SELECT 1", "t", ("loan",))
    trace = LlmExplorer(propose=lambda m: '{"tool": "list_tables", "args": {}}', max_steps=3).explore(q, bird)
    assert len(trace.steps) == 3 and trace.final_sql is None and not trace.final_sql_ok


def test_parse_action_and_switch():
    assert parse_action('x {"a": {"b": 1}} y {"c": 2}') == {"a": {"b": 1}}
    assert parse_action("no json {here") is None
    with pytest.raises(ValueError, match="propose"):
        make_explorer("llm")
    with pytest.raises(ValueError, match="unknown explorer"):
        make_explorer("random")
