"""The paper side by side: every value of `paper_comparison` equals the same number computed with
pandas from the result files, claims reach exactly the models they name, the reasoning vs
standard-mode mart pairs the registry's entries, and the seeds agree with models.yaml."""

from __future__ import annotations

import csv

import duckdb
import pandas as pd
import pytest
from conftest import DBT_PROJECT

from memsql_assets.lib.models.registry import DEFAULT_MODELS_FILE, load_registry
from memsql_assets.lib.report.dbt_cli import dbt_vars
from memsql_assets.lib.vocabulary import REFERENCE_AGENT, REFERENCE_MODELS, REPORT_SOURCES

REFERENCE_RUNS = {*REFERENCE_MODELS, REFERENCE_AGENT}  # dbt's var reference_models

PAPER_CONDITIONS = dbt_vars()["paper_conditions"]


def seed(name: str) -> list[dict[str, str]]:
    with (DBT_PROJECT / "seeds" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def mart(home, name: str) -> pd.DataFrame:
    con = duckdb.connect(str(home / "dbt" / "memsql.duckdb"), read_only=True)
    try:
        return con.execute(f"select * from main.{name}").df()
    finally:
        con.close()


@pytest.fixture(scope="module")
def results(paper_home) -> pd.DataFrame:
    files = sorted(paper_home.glob("results/model=*/condition=*/turn_results.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


@pytest.fixture(scope="module")
def comparison(paper_home) -> pd.DataFrame:
    return mart(paper_home, "paper_comparison")


def pct(mask: pd.Series) -> float | None:
    return 100.0 * mask.sum() / len(mask) if len(mask) else None


def ex(results: pd.DataFrame, model: str, condition: str, source: str = "ALL") -> float | None:
    g = results[(results["model"] == model) & (results["condition"] == condition)]
    if source != "ALL":
        g = g[g["source"] == source]
    return pct(g["ex_strict"])


def expected(results: pd.DataFrame, row: dict) -> float | None:
    """The claim's metric computed from the result files (the definitions in paper_claims' docs)."""
    m, cond, src, depth = row["model"], row["condition"], row["source"], row["turn_depth"]
    g = results[(results["model"] == m) & (results["condition"] == cond)]
    metric = row["metric"]
    if metric == "ex_pct":
        return ex(results, m, cond, src)
    if metric == "ex_pct_at_turn":
        return pct(g[g["turn_index"] == depth]["ex_strict"])
    if metric == "ex_memory_critical_pct_at_turn":
        return pct(g[(g["turn_index"] == depth) & g["memory_critical"]]["ex_strict"])
    if metric == "ex_memory_critical_pct_from_turn":
        return pct(g[(g["turn_index"] >= depth) & g["memory_critical"]]["ex_strict"])
    if metric == "mbs_pp":
        a = results[
            (results["model"] == m) & (results["condition"] == "A") & (results["turn_index"] == depth)
        ]
        at = g[g["turn_index"] == depth]
        return None if a.empty or at.empty else pct(at["ex_strict"]) - pct(a["ex_strict"])
    if metric in ("preamble_pct", "syntax_error_pct"):
        return pct(g["error_class"] == metric.removesuffix("_pct"))
    if metric == "ex_gap_pp":
        a, b = ex(results, m, cond, src), ex(results, row["minus_model"], cond, src)
        return None if a is None or b is None else a - b
    if metric == "reasoning_gain_pp":
        a, b = ex(results, m, cond, src), ex(results, f"{m}-standard", cond, src)
        return None if a is None or b is None else a - b
    raise AssertionError(f"no pandas definition for {metric}")  # ablation: needs C/D, not evaluated here


def test_every_value_equals_pandas_and_the_verdict_follows(comparison, results):
    assert not comparison.empty
    checked = 0
    for row in comparison.to_dict("records"):
        row = {k: (None if pd.isna(v) else v) for k, v in row.items()}
        if row["metric"] in ("ep_pp", "sem_pp", "net_pp"):  # C and D are not evaluated here
            assert row["value"] is None and row["verdict"] == "not evaluated", row["claim_id"]
            continue
        want = expected(results, row)
        if want is None:
            assert row["value"] is None and row["verdict"] == "not evaluated", row
            continue
        assert row["value"] == pytest.approx(want), row
        inside = row["low"] <= round(want, int(row["decimals"])) <= row["high"]
        assert row["verdict"] == ("inside" if inside else "outside"), row
        checked += 1
    assert checked >= 15


def test_claims_reach_exactly_the_models_they_name(comparison, results):
    claims = {c["claim_id"]: c for c in seed("paper_claims")}
    names = {r["model"]: r["paper_model"] for r in seed("paper_models") if r["reasoning_mode"] == "reasoning"}
    evaluated = set(results["model"])
    got = comparison.groupby("claim_id")["model"].agg(set).to_dict()
    for claim_id, claim in claims.items():
        if claim["models"] == "any":
            want = evaluated - REFERENCE_RUNS  # the paper's claims are about LLMs only
        else:
            want = {k for k, name in names.items() if k in evaluated and claim["models"] in ("paper", name)}
        assert got.get(claim_id, set()) == want, claim_id
    # The standard-mode entry is no paper configuration: only 'any' claims check it.
    standard = comparison[comparison["model"] == "claude-sonnet-4.6-standard"]
    assert set(standard["claim_models"]) == {"any"}
    assert not set(comparison["model"]) & REFERENCE_RUNS
    assert set(dbt_vars()["reference_models"]) == REFERENCE_RUNS
    assert set(results["model"]) & set(REFERENCE_MODELS)  # though reference models were evaluated


def test_each_and_memory_conditions_and_each_source_expand(comparison):
    sonnet = comparison[comparison["model"] == "claude-sonnet-4.6"]
    assert sorted(sonnet[sonnet["claim_id"] == "no_preamble_sonnet46"]["condition"]) == sorted(
        PAPER_CONDITIONS
    )
    gaps = comparison[comparison["claim_id"] == "edgar_gap_range"]
    assert sorted(gaps["condition"]) == sorted(c for c in PAPER_CONDITIONS if c != "A")
    assert set(gaps["minus_model"]) == {"claude-sonnet-4.6"}
    assert sorted(sonnet[sonnet["claim_id"] == "ablation_sem_range"]["source"]) == sorted(REPORT_SOURCES)


def test_reasoning_vs_standard_pairs_the_registry_entries(paper_home, results):
    df = mart(paper_home, "agg_reasoning_vs_standard").set_index(["paper_model", "condition", "source"])
    row = df.loc[("Claude Sonnet 4.6", "B", "ALL")]
    assert (row["reasoning_model"], row["standard_model"]) == (
        "claude-sonnet-4.6",
        "claude-sonnet-4.6-standard",
    )
    assert row["ex_reasoning_pct"] == pytest.approx(ex(results, "claude-sonnet-4.6", "B"))
    assert row["ex_standard_pct"] == pytest.approx(ex(results, "claude-sonnet-4.6-standard", "B"))
    assert row["reasoning_gain_pp"] == pytest.approx(row["ex_reasoning_pct"] - row["ex_standard_pct"])
    assert row["reasoning_gain_pp"] > 0  # the stand-ins: recall-probe at B over recall-probe at A
    alone = df.loc[("Claude Sonnet 4.6", "A", "ALL")]  # no standard-mode result at A: no gain
    assert pd.isna(alone["ex_standard_pct"]) and pd.isna(alone["reasoning_gain_pp"])
    # Sonnet 4.5 has only its reasoning entry evaluated: a row without a standard side.
    assert set(df.index.get_level_values("paper_model")) == {"Claude Sonnet 4.6", "Claude Sonnet 4.5"}


def test_seeds_agree_with_the_registry():
    registry = load_registry(DEFAULT_MODELS_FILE)
    rows = seed("paper_models")
    for r in rows:
        entry = registry.get(r["model"])  # every key of the seed is a registry entry
        if r["reasoning_mode"] == "standard":
            assert entry.reasoning.type == "none" and not entry.enabled, r["model"]
            twin = next(
                x for x in rows if x["paper_model"] == r["paper_model"] and x["reasoning_mode"] == "reasoning"
            )
            assert registry.get(twin["model"]).litellm_model == entry.litellm_model
            assert "thinking" not in entry.call_params() and "reasoning_effort" not in entry.call_params()
        else:
            assert entry.enabled and entry.reasoning.type != "none", r["model"]
    standard = {r["paper_model"] for r in rows if r["reasoning_mode"] == "standard"}
    assert standard == {"Claude Sonnet 4.5", "Claude Sonnet 4.6", "Claude Opus 4.6"}
    claims = seed("paper_claims")
    named = {c["models"] for c in claims} | {c["minus_model"] for c in claims if c["minus_model"]}
    assert named - {"any", "paper"} <= {r["paper_model"] for r in rows}
    assert all(c["sentence"].strip() and float(c["low"]) <= float(c["high"]) for c in claims)
