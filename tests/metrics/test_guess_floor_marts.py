"""The guess floor and the reference models' own expectations in the marts, equal to pandas."""

from __future__ import annotations

import pandas as pd
import pytest
from test_metrics_dbt import mart, pct, read_results

from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.vocabulary import GUESS_FLOOR_MAX_PCT, GUESS_PROBE, MUST_SCORE_100, PAPER_BENCHMARK


@pytest.fixture(scope="module")
def results(metrics_home) -> pd.DataFrame:
    return read_results(metrics_home)


def _floor(results: pd.DataFrame) -> float:
    g = results[(results["model"] == GUESS_PROBE) & (results["condition"] == "A")]
    return pct(g.loc[g["memory_critical"], "ex_strict"])


def test_every_summary_row_carries_the_guess_floor(duckdb_path, results):
    summary = mart(duckdb_path, "agg_condition_summary")
    floor = _floor(results)
    assert summary["guess_floor_pct"].tolist() == pytest.approx([floor] * len(summary))
    want = summary["ex_memory_critical_pct"] - floor
    assert summary["above_floor_pp"].tolist() == pytest.approx(want.tolist())


def test_reference_expectations_hold_and_follow_their_bounds(duckdb_path, results):
    rows = mart(duckdb_path, "reference_expectations").set_index(["model", "condition", "metric"])
    for (model, condition), g in results.groupby(["model", "condition"]):
        if model in MUST_SCORE_100:
            row = rows.loc[(model, condition, "ex_pct")]
            assert row["value"] == pytest.approx(pct(g["ex_strict"]))
            assert (row["low"], row["high"], row["verdict"]) == (100.0, 100.0, "inside")
    floor = rows.loc[(GUESS_PROBE, "A", "ex_memory_critical_pct")]
    assert floor["value"] == pytest.approx(_floor(results))
    assert (floor["low"], floor["high"]) == (0.0, GUESS_FLOOR_MAX_PCT)
    assert floor["verdict"] == ("inside" if round(floor["value"], 1) <= GUESS_FLOOR_MAX_PCT else "outside")
    assert "recall-probe" not in {m for m, _, _ in rows.index}  # a measurement, not an expectation


def test_guess_rate_mart_matches_the_benchmark_file(duckdb_path, metrics_home):
    turns = pd.DataFrame(read_turns(benchmark_dir(metrics_home)))
    critical = turns[turns["memory_critical"]]
    got = mart(duckdb_path, "agg_guess_rate")
    got = got[got["benchmark"] == PAPER_BENCHMARK]
    overall = got[(got["source"] == "ALL") & got["turn_depth"].isna()].iloc[0]
    assert overall["n_memory_critical"] == len(critical)
    assert overall["mean_guess_rate_pct"] == pytest.approx(100 * critical["guess_rate"].mean())
    for (source, depth), g in critical.groupby(["source", "turn_index"]):
        row = got[(got["source"] == source) & (got["turn_depth"] == depth)].iloc[0]
        assert row["n_memory_critical"] == len(g)
        assert row["n_guessable"] == int((g["guess_rate"] > 0).sum())
        assert row["max_guess_rate_pct"] == pytest.approx(100 * g["guess_rate"].max())
    assert not (got["turn_depth"] == 1).any()


def test_the_report_shows_the_floor_beside_a_and_the_reference_expectations(duckdb_path, tmp_path):
    from test_metrics_report import keyed, parse, same

    from memsql_assets.lib.report import build_report

    page = parse(build_report(duckdb_path, tmp_path / "report").html)
    summary = mart(duckdb_path, "agg_condition_summary")
    summary = summary[summary["benchmark"] == PAPER_BENCHMARK]
    rows = keyed(page.tables["summary"], 2)
    for rec in summary.to_dict("records"):
        cell = rows[(rec["model"], rec["condition"])]["guess floor %"]
        assert same(cell, rec["guess_floor_pct"]) if rec["condition"] == "A" else cell == "–"
    expected = mart(duckdb_path, "reference_expectations")
    shown = keyed(page.tables["reference"], 4)
    assert len(shown) == len(expected) > 0
    for rec in expected.to_dict("records"):
        cells = shown[(rec["benchmark"], rec["model"], rec["condition"], rec["metric"])]
        assert same(cells["this run %"], rec["value"]) and cells["verdict"] == rec["verdict"]
    assert "guess_rate" in page.tables
