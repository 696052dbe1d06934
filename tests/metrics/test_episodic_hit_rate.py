"""agg_episodic_hit_rate: the wave size each C/D partition ran with, and what it found in memory.

Two real C partitions of recall-probe on the small benchmark (30 sessions): W = 1 (the paper's
order: every earlier session is visible) and W = 30 (one wave: no session sees another). The mart
must report each W and agree with the rows; one wave retrieves no other session at all."""

from __future__ import annotations

import json

import duckdb
import pandas as pd
import pytest

from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir
from tests.metrics.conftest import ONE_WAVE


@pytest.fixture(scope="module")
def hit_rates(variants_home):
    """recall-probe C at W = 1 and ONE_WAVE at W = sessions (conftest's _with_variants), beside
    metrics_home's partitions, after `dbt build`."""
    home = variants_home
    sessions = json.loads((partition_dir(home, "recall-probe", "C") / "summary.json").read_text())["sessions"]
    sequential = pd.read_parquet(partition_dir(home, "recall-probe", "C") / RESULT_FILE)
    con = duckdb.connect(str(home / "dbt" / "memsql.duckdb"), read_only=True)
    mart = con.execute("select * from agg_episodic_hit_rate").df().set_index(["model", "condition"])
    con.close()
    return mart, sequential, sessions


def test_each_partition_reports_its_wave_size(hit_rates):
    mart, _, sessions = hit_rates
    assert mart.loc[("recall-probe", "C"), "wave_size"] == 1
    assert mart.loc[ONE_WAVE, "wave_size"] == sessions
    assert ("recall-probe", "D") in mart.index  # D runs in waves too; A, B, B_wm5, E never appear
    assert set(mart.index.get_level_values("condition")) <= {"C", "D"}


def test_hit_rate_agrees_with_the_rows(hit_rates):
    mart, rows, _ = hit_rates
    critical = rows[rows["memory_critical"]]
    expected = 100.0 * (critical["missing_keys"] == "[]").sum() / len(critical)
    assert mart.loc[("recall-probe", "C"), "hit_rate_pct"] == pytest.approx(expected)
    assert mart.loc[("recall-probe", "C"), "n_memory_critical"] == len(critical)


def test_one_wave_sees_no_other_session_and_sequential_does(hit_rates):
    mart, _, _ = hit_rates
    assert mart.loc[ONE_WAVE, "n_retrieved_other_session"] == 0
    assert mart.loc[("recall-probe", "C"), "n_retrieved_other_session"] > 0
