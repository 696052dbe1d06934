"""trajectory_coverage materialized through Dagster (real Chroma, real benchmark subset), and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dagster as dg
import pytest

from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.defs.trajectories.assets import synthetic_questions, trajectory_coverage, trajectory_store
from memsql_assets.defs.trajectories.resources import TrajectorySettings
from memsql_assets.lib.trajectories.coverage import sql_tables


def _cli(home, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memsql_assets.cli", "trajectory", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, MEMSQL_HOME=str(home)),
        timeout=300,
    )


@pytest.mark.slow
def test_coverage_asset_and_cli(small_home, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(small_home))
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [synthetic_questions, trajectory_store, trajectory_coverage],
            instance=instance,
            resources={"memsql": MemsqlSettings(), "trajectories": TrajectorySettings()},
        )
        assert result.success
        meta = {
            m.asset_key.to_user_string(): m.materialization.metadata
            for m in result.get_asset_materialization_events()
        }["trajectory_coverage"]
    assert meta["coverage"].value >= 0.8 and meta["meets_target"].value is True
    assert set(meta["mean_jaccard"].value) == {"bird_financial", "northwind", "sec_edgar"}
    assert "| northwind |" in meta["by_source"].value
    assert meta["store"].value["trajectories"] == 60
    saved = json.loads((small_home / "trajectories" / "coverage.json").read_text())
    assert saved["coverage"] == meta["coverage"].value

    proc = _cli(small_home, "coverage", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    printed = json.loads(proc.stdout)
    assert printed["coverage"] == saved["coverage"] and printed["by_source"] == saved["by_source"]
    assert all(v >= 0.7 for v in printed["by_source"].values())
    human = _cli(small_home, "coverage")
    assert human.returncode == 0 and human.stdout.startswith("coverage ") and "mean Jaccard" in human.stdout

    hit = _cli(small_home, "search", "northwind", "total sales by customer in 1997", "-k", "1")
    assert hit.returncode == 0, hit.stderr[-2000:]
    final_sql = hit.stdout.split("## Final SQL", 1)[1].split("```sql", 1)[1].split("```", 1)[0]
    assert {"orders", "order details"} <= sql_tables(final_sql), final_sql
