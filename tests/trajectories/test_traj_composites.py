"""Composite mining on a hand-made trace set, and the explorer using composites."""

from __future__ import annotations

import pytest
from traj_fixtures import mining_traces

from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.trajectories.composites import (
    compare_stats,
    composite_name,
    mine_composites,
    support_threshold,
    trajectory_stats,
)
from memsql_assets.lib.trajectories.explorer import DeterministicExplorer
from memsql_assets.lib.trajectories.questions import generate_questions
from memsql_assets.lib.trajectories.tools import DbTools


def as_set(comps):
    return {(c.phase, c.steps, c.count) for c in comps}


def test_threshold_fraction_and_count():
    assert support_threshold(0.5, 4) == 2
    assert support_threshold(0.26, 4) == 2
    assert support_threshold(1.0, 4) == 4
    assert support_threshold(3, 4) == 3
    for bad in (0, 0.0, 1.5, -2, True):
        with pytest.raises(ValueError):
            support_threshold(bad, 4)


def test_mining_hand_made_traces():
    traces = mining_traces()
    got = as_set(mine_composites(traces, theta=0.75, max_len=3))
    assert got == {
        ("explore", ("get_ddl", "sample_rows"), 4),
        ("explore", ("list_tables", "get_ddl"), 4),
        ("explore", ("list_tables", "get_ddl", "sample_rows"), 3),
    }
    # support counts traces, not occurrences (trace 2 has ddl+sample twice)
    by = {c.steps: c for c in mine_composites(traces, theta=3, max_len=3)}
    assert by[("get_ddl", "sample_rows")].count == 4 and by[("get_ddl", "sample_rows")].support == 1.0
    assert by[("list_tables", "get_ddl")].count == 4
    assert by[("list_tables", "get_ddl", "sample_rows")].count == 3  # trace 4's run is cut by the error
    assert ("sample_rows", "get_ddl") not in by  # only in trace 2 (count 1 < 3)
    assert all(c.phase == "explore" for c in by.values())
    # execution never merges with exploration or validation (cross-phase neighbours)
    assert not any("execute_sql" in c.steps for c in mine_composites(traces, theta=1, max_len=4))


def test_max_len_and_names():
    comps = mine_composites(mining_traces(), theta=1, max_len=2)
    assert max(len(c.steps) for c in comps) == 2
    names = {c.name for c in comps}
    assert "explore_ddl_sample" in names and composite_name("explore", ["list_tables", "get_ddl"]) in names
    with pytest.raises(ValueError):
        mine_composites(mining_traces(), theta=1, max_len=1)


def test_order_is_deterministic():
    a = mine_composites(mining_traces(), theta=1, max_len=4)
    b = mine_composites(list(reversed(mining_traces())), theta=1, max_len=4)
    assert [c.name for c in a] == [c.name for c in b]
    assert [c.count for c in a] == sorted((c.count for c in a), reverse=True)


def test_explorer_with_composites_saves_steps(embedded_dbs):
    db = "bird_financial"
    qs = generate_questions(db, embedded_dbs[db], 12, seed=1)
    conn = open_readonly(embedded_dbs[db])
    try:
        tools = DbTools(conn, db)
        plain = [DeterministicExplorer(seed=1).explore(q, tools) for q in qs]
        comps = mine_composites(plain, theta=0.5, max_len=3)
        merged = [DeterministicExplorer(seed=1, composites=comps).explore(q, tools) for q in qs]
    finally:
        conn.close()
    assert comps and all(c.support >= 0.5 for c in comps)
    for p, m in zip(plain, merged, strict=True):
        # the same primitive calls, grouped into fewer steps
        assert [(c.tool, c.args) for s in p.steps for c in s.primitive_calls()] == [
            (c.tool, c.args) for s in m.steps for c in s.primitive_calls()
        ]
        assert len(m.steps) <= len(p.steps)
        assert m.final_sql_ok
    without, with_ = trajectory_stats(plain), trajectory_stats(merged)
    assert without.tool_calls_per_step == 1.0 and with_.tool_calls_per_step > 1.0
    report = compare_stats(without, with_)
    assert report["mean_steps_saved"] > 0
    assert report["without_composites"]["exploration_execution"].count(":") == 1
