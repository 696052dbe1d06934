"""The θ × N sensitivity through the agent: per (θ, N) a store of its own, and the reference agent's
EX and median steps under E against T on a sample of sessions (lib/harness/trajectory_sensitivity.py, the
one definition behind `memsql trajectory sensitivity` and bench/trajectory_sensitivity.py)."""

from __future__ import annotations

import shutil

from memsql_assets import cli
from memsql_assets.lib.harness import trajectory_sensitivity
from memsql_assets.lib.harness.trajectory_sensitivity import Sweep, sweep, table_lines
from memsql_assets.lib.paths import trajectories_dir


def test_each_theta_and_budget_gets_a_store_and_the_agents_ex_and_steps(small_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "requests", "redis", "dbt", "trajectories"))
    result = sweep(home, tmp_path / "stores", Sweep(thetas=(0.25, 0.5), budgets=(12,), sessions=9))
    assert result["baseline"]["ex_pct"] == 100.0 and result["baseline"]["turns"] > 0
    assert [(r["theta"], r["N"]) for r in result["rows"]] == [(0.25, 12), (0.5, 12)]
    for row in result["rows"]:
        assert row["agent_ex_pct"] == 100.0 and row["trajectories"] > 0
        assert row["agent_median_steps"] < result["baseline"]["median_steps"]
        assert row["agent_steps_saved"] == result["baseline"]["median_steps"] - row["agent_median_steps"]
    assert len(table_lines(result)) == 4 + len(result["rows"])
    assert not trajectories_dir(home).exists(), "the sweep builds its stores in their own homes"


def test_the_cli_reaches_the_sweep(tmp_path, monkeypatch, capsys):
    """`memsql trajectory sensitivity` hands its typed options to the sweep (a count and a fraction)."""
    home = tmp_path / "home"
    (home / "benchmark").mkdir(parents=True)
    monkeypatch.setenv("MEMSQL_HOME", str(home))
    asked = []

    def recorded(home, work, spec, say):
        asked.append(spec)
        return {"baseline": {}, "rows": []}

    monkeypatch.setattr(trajectory_sensitivity, "sweep", recorded)
    monkeypatch.setattr(trajectory_sensitivity, "table_lines", lambda result: ["the sweep's table"])
    assert cli.main(["trajectory", "sensitivity", "--thetas", "3,0.5", "--budgets", "30"]) == 0
    assert capsys.readouterr().out == "the sweep's table\n"
    [spec] = asked
    assert (spec.thetas, spec.budgets) == ((3, 0.5), (30,)) and isinstance(spec.thetas[0], int)
    assert cli.main(["trajectory", "sensitivity", "--thetas", "three"]) == 2
    assert "expected comma-separated numbers" in capsys.readouterr().err
