"""Epochs in the marts: a partition with two epochs is one partition whose
EX is the mean over its epochs, with n counting turns x epochs and the Wilson interval over its
sessions that `memsql eval --json` prints; a result file written before epochs (schema 2) is read as epoch 1.

The two epochs are real harness results that differ (gold's and recall-probe's answers under A,
relabelled as one model's epochs 1 and 2), so the paired bootstrap's epoch stage has something to do."""

from __future__ import annotations

import pytest
from conftest import EPOCHS, OLD
from test_metrics_dbt import mart

from memsql_assets.lib.evaluation.interval import ex_interval
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, read_results
from memsql_assets.lib.harness.summary import summarize


@pytest.fixture(scope="module")
def epochs_home(variants_home):
    """metrics_home plus EPOCHS and OLD (conftest's _with_variants), after `dbt build`."""
    return variants_home


def test_two_epochs_are_one_partition_with_their_mean_and_a_session_interval(epochs_home):
    db = epochs_home / "dbt" / "memsql.duckdb"
    rows = read_results(partition_dir(epochs_home, *EPOCHS) / RESULT_FILE)
    turns = len(rows) // 2
    parts = mart(db, "agg_condition_summary").set_index(["model", "condition"])
    row = parts.loc[EPOCHS]
    assert row["n_epochs"] == 2 and row["n_turns"] == 2 * turns and bool(row["is_complete"])
    by_epoch = [100 * sum(r["ex_strict"] for r in rows if r["epoch"] == e) / turns for e in (1, 2)]
    assert by_epoch[0] == 100 and by_epoch[1] < 100, "the epochs differ"
    assert row["ex_pct"] == pytest.approx(sum(by_epoch) / 2), "EX is the mean over epochs"
    s = summarize(rows, *EPOCHS, 0.0)
    assert s.epochs == 2 and s.n_turns == 2 * turns and s.turns == turns
    assert [row["ex_ci_lo_pct"], row["ex_ci_hi_pct"]] == pytest.approx(s.ex_strict_ci95, abs=1e-3)
    assert row["ex_ci_lo_pct"] <= row["ex_pct"] <= row["ex_ci_hi_pct"]
    for col in ("ex_memory_critical", "ex_turn1"):
        assert row[f"{col}_ci_lo_pct"] <= row[f"{col}_pct"] <= row[f"{col}_ci_hi_pct"], col
    # Epochs pool into p, but the interval's n stays the sessions: a second epoch adds no session.
    single = parts.loc[("recall-probe", "A")]
    assert row["n_sessions"] == single["n_sessions"]
    bounds = ex_interval(int(row["n_correct"]), int(row["n_turns"]), int(single["n_sessions"]))
    assert [row["ex_ci_lo_pct"], row["ex_ci_hi_pct"]] == pytest.approx(bounds, abs=1e-9)
    fct = mart(db, "fct_turn_evaluations")
    mine = fct[(fct["model"] == EPOCHS[0])]
    assert sorted(mine["epoch"].unique()) == [1, 2] and mine["turn_evaluation_id"].is_unique


def test_paired_figures_resample_each_sides_epochs(epochs_home):
    gaps = mart(epochs_home / "dbt" / "memsql.duckdb", "agg_model_pair_gaps")
    pair = gaps[(gaps["model_a"] == "gold") & (gaps["model_b"] == EPOCHS[0]) & (gaps["source"] == "ALL")].iloc[0]
    assert pair["n_turns_b"] == 2 * pair["n_turns_a"]
    assert pair["gap_ci_lo_pp"] <= pair["gap_pp"] <= pair["gap_ci_hi_pp"] and pair["gap_se_pp"] > 0


def test_a_result_file_written_before_epochs_is_read_as_epoch_1(epochs_home):
    db = epochs_home / "dbt" / "memsql.duckdb"
    parts = mart(db, "agg_condition_summary").set_index(["model", "condition"])
    old, probe = parts.loc[OLD], parts.loc[("recall-probe", "A")]
    assert old["n_epochs"] == 1 and old["n_turns"] == probe["n_turns"] and old["ex_pct"] == probe["ex_pct"]
    assert [old["ex_ci_lo_pct"], old["ex_ci_hi_pct"]] == [probe["ex_ci_lo_pct"], probe["ex_ci_hi_pct"]]
    rows = read_results(partition_dir(epochs_home, *OLD) / RESULT_FILE)
    assert {r["epoch"] for r in rows} == {1} and {r["schema_version"] for r in rows} == {2}
    assert {r["reasoning_tokens"] for r in rows} == {None}, "not recorded then"
    fct = mart(db, "fct_turn_evaluations")
    assert fct[fct["model"] == OLD[0]]["reasoning_tokens"].isna().all()
