"""`dbt build` on result partitions made by the real harness: it passes, and every mart's numbers
equal the same numbers computed directly from the Parquet files with pandas."""

from __future__ import annotations

import json
import shutil

import duckdb
import pandas as pd
import pytest
import yaml
from conftest import PARTITIONS, fresh_home, run_dbt

from memsql_assets.lib.paths import REPO_ROOT
from memsql_assets.lib.vocabulary import (
    AGENT_CONDITIONS,
    AGENT_SCHEMA_CONDITIONS,
    ERROR_CLASSES,
    REPORT_SOURCES,
)


def read_results(home) -> pd.DataFrame:
    files = sorted(home.glob("results/model=*/condition=*/turn_results.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def mart(duckdb_path, name: str) -> pd.DataFrame:
    con = duckdb.connect(str(duckdb_path), read_only=True)
    try:
        return con.execute(f"select * from main.{name}").df()
    finally:
        con.close()


def pct(mask: pd.Series) -> float:
    return 100.0 * mask.sum() / len(mask)


@pytest.fixture(scope="module")
def results(metrics_home) -> pd.DataFrame:
    return read_results(metrics_home)


def test_build_passes_with_every_test_and_unit_test(built):
    statuses = {r["unique_id"]: r["status"] for r in built.results()}
    bad = {k: v for k, v in statuses.items() if v not in ("success", "pass")}
    assert not bad, bad  # warnings too: nothing here is stale, incomplete or has MBS(1) != 0
    unit = [k for k in statuses if k.startswith("unit_test.")]
    declared = [  # every unit test the project's model files declare ran
        t["name"]
        for path in (REPO_ROOT / "dbt_project" / "models").rglob("*.yml")
        for t in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("unit_tests", [])
    ]
    assert len(unit) == len(declared) >= 4
    assert sum(k.startswith("test.") for k in statuses) > 100


def test_turn_evaluations_is_one_row_per_partition_turn(duckdb_path, results):
    fct = mart(duckdb_path, "fct_turn_evaluations")
    assert (
        len(fct)
        == len(results)
        == len(PARTITIONS) * results["session_id"].str.cat(results["turn_index"].astype(str)).nunique()
    )
    assert set(map(tuple, fct[["model", "condition"]].drop_duplicates().values)) == set(PARTITIONS)
    assert fct["turn_evaluation_id"].is_unique
    merged = fct.merge(results, on=["model", "condition", "session_id", "turn_index"], suffixes=("", "_raw"))
    assert len(merged) == len(results)
    for col in (
        "ex_strict",
        "ex_bag",
        "ex_set",
        "error_class",
        "contaminated",
        "fallback_match",
        "supplying_sessions",
        "source",
        "tier",
        "memory_critical",
    ):
        assert (merged[col] == merged[f"{col}_raw"]).all(), col


def test_ex_summary_matches_pandas(duckdb_path, results):
    summary = mart(duckdb_path, "agg_condition_summary").set_index(["model", "condition"])
    assert len(summary) == len(PARTITIONS)
    for (model, cond), g in results.groupby(["model", "condition"]):
        row = summary.loc[(model, cond)]
        assert row["n_turns"] == len(g)
        assert row["ex_pct"] == pytest.approx(pct(g["ex_strict"]))
        assert row["ex_memory_critical_pct"] == pytest.approx(pct(g.loc[g["memory_critical"], "ex_strict"]))
        assert row["ex_turn1_pct"] == pytest.approx(pct(g.loc[g["turn_index"] == 1, "ex_strict"]))
        assert row["contamination_rate_pct"] == pytest.approx(pct(g["contaminated"]))
        assert bool(row["is_complete"])
    assert summary.loc[("gold", "A"), "ex_pct"] == 100.0
    probe = summary.loc["recall-probe", "ex_pct"]
    assert probe["A"] < probe["B"] < probe["B_wm5"]


def test_ex_by_source_tier_and_depth_match_pandas(duckdb_path, results):
    by_st = mart(duckdb_path, "agg_ex_by_source_tier").set_index(["model", "condition", "source", "tier"])
    for key, g in results.groupby(["model", "condition", "source", "tier"]):
        assert by_st.loc[key, "ex_pct"] == pytest.approx(pct(g["ex_strict"])), key
        assert by_st.loc[key, "n_turns"] == len(g)
    assert len(by_st) == results.groupby(["model", "condition", "source", "tier"]).ngroups

    by_src = mart(duckdb_path, "agg_ex_by_source").set_index(["model", "condition", "source"])
    for (model, cond), g in results.groupby(["model", "condition"]):
        assert by_src.loc[(model, cond, "ALL"), "ex_pct"] == pytest.approx(pct(g["ex_strict"]))
        for src, gs in g.groupby("source"):
            assert by_src.loc[(model, cond, src), "ex_pct"] == pytest.approx(pct(gs["ex_strict"]))

    depth = mart(duckdb_path, "agg_ex_by_turn_depth").set_index(["model", "condition", "turn_depth"])
    for (model, cond, t), g in results.groupby(["model", "condition", "turn_index"]):
        row = depth.loc[(model, cond, t)]
        assert row["ex_pct"] == pytest.approx(pct(g["ex_strict"]))
        crit = g.loc[g["memory_critical"], "ex_strict"]
        if len(crit):
            assert row["ex_memory_critical_pct"] == pytest.approx(pct(crit))
        else:
            assert pd.isna(row["ex_memory_critical_pct"])


def test_mbs_matches_pandas(duckdb_path, results):
    mbs = mart(duckdb_path, "agg_mbs").set_index(["model", "condition", "turn_depth"])
    ex = results.groupby(["model", "condition", "turn_index"])["ex_strict"].mean() * 100
    assert "A" not in set(mbs.index.get_level_values("condition"))
    for (model, cond, t), value in ex.items():
        if cond == "A":
            continue
        row = mbs.loc[(model, cond, t)]
        if (model, "A", t) not in ex:  # gold-agent runs T only: no stateless side
            assert pd.isna(row["mbs_pp"])
            continue
        assert row["mbs_pp"] == pytest.approx(value - ex[(model, "A", t)])
    # The hook: recall-probe under B gains at shallow depths, never loses.
    probe_b = mbs.loc[("recall-probe", "B")]["mbs_pp"]
    assert probe_b.loc[1] == pytest.approx(0.0) and probe_b.max() > 50 and probe_b.min() >= 0


def test_ablation_matches_pandas_and_missing_sides_are_null(duckdb_path, results):
    abl = mart(duckdb_path, "agg_ablation").set_index(["model", "source"])
    probe = results[results["model"] == "recall-probe"]
    for src in (*REPORT_SOURCES, "ALL"):
        g = probe if src == "ALL" else probe[probe["source"] == src]
        ex = g.groupby("condition")["ex_strict"].mean() * 100
        row = abl.loc[("recall-probe", src)]
        assert row["win_pp"] == pytest.approx(ex["B_wm5"] - ex["B"])
        for term in ("ep_pp", "sem_pp", "net_pp", "traj_pp"):  # C, D, E not evaluated
            assert pd.isna(row[term])
    assert "gold" not in set(abl.index.get_level_values("model"))  # gold has only A here


def test_errors_contamination_cost_comparators_match_pandas(duckdb_path, results):
    tax = mart(duckdb_path, "agg_error_taxonomy").set_index(["model", "condition", "error_class"])
    assert len(tax) == len(PARTITIONS) * len(ERROR_CLASSES)
    cont = mart(duckdb_path, "agg_contamination").set_index(["model", "condition"])
    cost = mart(duckdb_path, "agg_cost").set_index(["model", "condition"])
    comp = mart(duckdb_path, "agg_comparator_sensitivity").set_index(["model", "condition"])
    for (model, cond), g in results.groupby(["model", "condition"]):
        for cls in ERROR_CLASSES:
            assert tax.loc[(model, cond, cls), "share_pct"] == pytest.approx(pct(g["error_class"] == cls))
        row = cont.loc[(model, cond)]
        assert row["n_contaminated"] == g["contaminated"].sum()
        assert row["n_fallback_match"] == g["fallback_match"].sum()
        by_other = g.apply(lambda r: any(s != r.session_id for s in json.loads(r.supplying_sessions)), axis=1)
        assert row["n_failed_supplied_by_other_session"] == (by_other & ~g["ex_strict"]).sum()
        reached = g.apply(
            lambda r: any(s != r.session_id for s in [*json.loads(r.retrieved_sessions), *json.loads(r.supplying_sessions)]),
            axis=1,
        )
        assert row["n_failed_retrieved_other_session"] == (reached & ~g["ex_strict"]).sum()
        c = cost.loc[(model, cond)]
        assert c["total_tokens"] == (g["prompt_tokens"].fillna(0) + g["completion_tokens"].fillna(0)).sum()
        assert c["mean_latency_s"] == pytest.approx(g["latency_s"].mean())
        assert c["p95_latency_s"] == pytest.approx(g["latency_s"].quantile(0.95))
        assert c["total_cost_usd"] == pytest.approx(g["cost_usd"].fillna(0).sum())
        assert c["n_model_calls"] == g["attempts"].sum()
        k = comp.loc[(model, cond)]
        assert k["ex_strict_pct"] == pytest.approx(pct(g["ex_strict"]))
        assert k["ex_bag_pct"] == pytest.approx(pct(g["ex_bag"]))
        assert k["ex_set_pct"] == pytest.approx(pct(g["ex_set"]))
        assert k["n_strict_set_disagree"] == (g["ex_strict"] != g["ex_set"]).sum()


def test_agent_steps_match_pandas_over_the_agent_turns_only(duckdb_path, results):
    agent = mart(duckdb_path, "agg_agent_steps").set_index(["model", "condition", "source"])
    turns = results[results["steps"] > 0]
    tools = {*AGENT_CONDITIONS, *AGENT_SCHEMA_CONDITIONS}
    assert set(turns["condition"]) == tools and len(turns) < len(results)
    assert set(agent.index.droplevel("source")) == {("gold-agent", c) for c in tools}
    for (model, cond), g in turns.groupby(["model", "condition"]):
        for source, s in [*g.groupby("source"), ("ALL", g)]:
            row = agent.loc[(model, cond, source)]
            assert row["n_turns"] == len(s) and row["ex_pct"] == pytest.approx(pct(s["ex_strict"]))
            assert row["median_steps"] == pytest.approx(s["steps"].median())
            assert row["mean_tool_calls_per_step"] == pytest.approx(s["tool_calls"].sum() / s["steps"].sum())
            tokens = s["prompt_tokens"].fillna(0) + s["completion_tokens"].fillna(0)
            for measure, values in (("mean_steps", s["steps"]), ("mean_tool_calls", s["tool_calls"]), ("mean_tokens", tokens)):
                half = 1.96 * values.std() / s["session_id"].nunique() ** 0.5
                assert row[measure] == pytest.approx(values.mean())
                assert row[f"{measure}_ci_hi"] == pytest.approx(values.mean() + half)
                assert row[f"{measure}_ci_lo"] <= row[measure] <= row[f"{measure}_ci_hi"]
            for phase in ("explore", "execute", "validate"):
                assert row[f"{phase}_share"] == pytest.approx(s[f"{phase}_share"].mean())
            assert row["composite_uses"] == s["composite_uses"].sum()
            used = s["trajectory_tables_used"].dropna().astype(float)
            assert row["n_with_trajectory"] == len(used)
            assert (pd.isna(row["trajectory_tables_used_rate"]) and used.empty) or row[
                "trajectory_tables_used_rate"
            ] == pytest.approx(used.mean())
    assert agent["ex_pct"].eq(100.0).all()  # the reference agent submits the ground truth


def test_steps_saved_pair_the_agent_baseline_with_agentsm(duckdb_path, results):
    saved = mart(duckdb_path, "agg_agent_steps_saved").set_index(["model", "schema_in_prompt", "source"])
    t, e = AGENT_CONDITIONS
    t_schema, e_schema = AGENT_SCHEMA_CONDITIONS
    agent = results[results["steps"] > 0]
    assert set(saved.index.get_level_values("model")) == {"gold-agent"}
    assert set(saved["steps_saved_by"]) == {"reference agent (scripted)"}
    for source in (*sorted(agent["source"].unique()), "ALL"):
        rows = agent if source == "ALL" else agent[agent["source"] == source]
        median = rows.groupby("condition")["steps"].median()
        row = saved.loc[("gold-agent", False, source)]
        assert (row["condition_t"], row["condition_e"]) == (t, e)
        assert (row["median_steps_t"], row["median_steps_e"]) == (median[t], median[e])
        assert row["steps_saved"] == median[t] - median[e] > 0  # the trajectory covers the exploration
        assert median[t] >= 3 and row["explore_share_t"] > row["explore_share_e"]
        assert row["ex_t_pct"] == row["ex_e_pct"] == 100.0 and row["ex_e_ci_lo_pct"] < 100.0
        assert row["traj_pp"] == 0.0
        # with the schema in its prompt the reference agent submits at once: nothing to save
        shown = saved.loc[("gold-agent", True, source)]
        assert (shown["condition_t"], shown["condition_e"]) == (t_schema, e_schema)
        assert (shown["median_steps_t"], shown["median_steps_e"], shown["steps_saved"]) == (1.0, 1.0, 0.0)
        assert shown["mean_tool_calls_t"] == 1.0 and pd.isna(shown["traj_pp"])


def test_model_pairs_flag_gaps_whose_interval_excludes_zero(duckdb_path, results):
    pairs = mart(duckdb_path, "agg_model_pair_gaps").set_index(["model_a", "model_b", "condition", "source"])
    assert set(pairs.index.get_level_values("condition")) == {"A"}  # only A has both models
    for src, g in results[results["condition"] == "A"].groupby("source"):
        ex = g.groupby("model")["ex_strict"].mean() * 100
        row = pairs.loc[("gold", "recall-probe", "A", src)]  # two of the models evaluated under A
        assert row["gap_pp"] == pytest.approx(ex["gold"] - ex["recall-probe"])
        assert row["gap_ci_lo_pp"] <= row["gap_pp"] <= row["gap_ci_hi_pp"]
        assert bool(row["is_flagged"]) == (row["gap_ci_lo_pp"] > 0 or row["gap_ci_hi_pp"] < 0)
        assert row["lower_model"] == "recall-probe" and bool(row["involves_reference_model"])


def _keep_rows(path, keep) -> None:
    """Rewrite one result file with the rows `keep(table)` selects (same schema)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path, partitioning=None)
    pq.write_table(table.filter(keep(table, pc)), path)


def test_only_complete_partitions_and_labelled_samples_reach_the_marts(metrics_home, duckdb_path, tmp_path):
    """A cut-short file never reaches the marts; a file of whole sessions does, labelled as a
    sample; a vanished file's rows go; a rebuilt benchmark makes every partition stale."""
    home = fresh_home(metrics_home, tmp_path / "home", keep_results=True)
    db = home / "dbt" / "memsql.duckdb"
    shutil.copyfile(duckdb_path, db)  # the `built` fixture's first build of these same files
    results = home / "results"

    def summary() -> pd.DataFrame:
        return mart(db, "agg_condition_summary").set_index(["model", "condition"])

    def build() -> pd.DataFrame:
        r = run_dbt(home, "build")
        assert r.returncode == 0, r.output[-4000:]
        return summary()

    first = summary()
    assert set(first.index) == set(PARTITIONS) and not first["is_sample"].any()

    cut = results / "model=recall-probe" / "condition=B" / "turn_results.parquet"
    _keep_rows(cut, lambda t, pc: pc.invert(pc.and_(pc.equal(t["turn_index"], 2), pc.equal(t["tier"], 3))))
    sample = results / "model=recall-probe" / "condition=A" / "turn_results.parquet"
    first_session = pd.read_parquet(sample)["session_id"].min()
    _keep_rows(sample, lambda t, pc: pc.equal(t["session_id"], first_session))
    shutil.rmtree(results / "model=gold")

    after = build()
    kept = {("recall-probe", c) for c in ("A", "B_wm5", "H", "S")} | {("guess-probe", "A")} | {
        ("gold-agent", c) for c in (*AGENT_CONDITIONS, *AGENT_SCHEMA_CONDITIONS)
    }
    assert set(after.index) == kept
    assert bool(after.loc[("recall-probe", "A"), "is_sample"])
    assert not after.loc[("recall-probe", "B_wm5"), "is_sample"]
    assert after.loc[("recall-probe", "A"), "n_turns"] == len(pd.read_parquet(sample))
    # The sample's size in sessions, and an interval over its sessions: one session is one
    # observation, so the interval spans most of the scale whatever its turns scored.
    one = after.loc[("recall-probe", "A")]
    assert one["n_sessions"] == 1 and not one["is_complete"]
    assert one["ex_ci_hi_pct"] - one["ex_ci_lo_pct"] > 50
    assert not (mart(db, "fct_turn_evaluations")["condition"] == "B").any()

    # A rebuilt benchmark (another turns.jsonl) makes every partition stale: none reaches the marts.
    with (home / "benchmark" / "turns.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("\n")
    assert build().empty
    assert mart(db, "fct_turn_evaluations").empty
    con = duckdb.connect(str(db), read_only=True)
    try:
        flags = con.execute(
            "select bool_or(is_current_benchmark), count(*) from intermediate.int_partitions"
        ).fetchone()
    finally:
        con.close()
    assert flags == (False, len(PARTITIONS) - 1)  # every partition but gold, whose files went


def test_build_passes_with_no_result_file(empty_home):
    home, run = empty_home
    assert run.returncode == 0, run.output[-4000:]
    assert all(r["status"] in ("success", "pass") for r in run.results())
    for name in ("fct_turn_evaluations", "agg_condition_summary", "agg_mbs", "agg_ablation"):
        assert mart(home / "dbt" / "memsql.duckdb", name).empty


def test_manifest_documents_every_mart_column_with_grain(metrics_home, duckdb_path, built):
    """`dbt parse` output (what dagster-dbt loads): sources map to Dagster assets; every model and
    every column of every built mart has a description, and each mart states its grain."""
    manifest = json.loads((built.target / "manifest.json").read_text())
    sources = {s["name"]: s for s in manifest["sources"].values()}
    assert sources["turn_results"]["meta"]["dagster"]["asset_key"] == ["turn_results"]
    assert sources["turns"]["meta"]["dagster"]["asset_key"] == ["sessions"]
    models = {n["name"]: n for n in manifest["nodes"].values() if n["resource_type"] == "model"}
    con = duckdb.connect(str(duckdb_path), read_only=True)
    try:
        built_cols = con.execute(
            "select table_name, column_name from information_schema.columns where table_schema = 'main'"
        ).fetchall()
    finally:
        con.close()
    for name, node in models.items():
        assert node["description"].strip(), name
        if name.startswith(("fct_", "agg_")):
            assert "Grain" in node["description"] or "grain" in node["description"], name
    for table, column in built_cols:
        assert models[table]["columns"].get(column, {}).get("description", "").strip(), f"{table}.{column}"


def test_intervals_equal_the_partition_summary_and_contain_the_estimate(duckdb_path, results):
    """The marts' ex_ci_lo/ex_ci_hi and `memsql eval --json` are one Wilson interval over sessions:
    the same numbers; every figure lies in its interval; an all-correct one stays open below 100;
    pairs are paired."""
    from memsql_assets.lib.harness.summary import summarize

    summary = mart(duckdb_path, "agg_condition_summary").set_index(["model", "condition"])
    for (model, cond), g in results.groupby(["model", "condition"]):
        s = summarize(g.astype(object).where(g.notna(), None).to_dict("records"), model, cond, 0.0)  # NaN: None, as rows hold
        row = summary.loc[(model, cond)]
        assert row["n_sessions"] == g["session_id"].nunique()
        assert [row["ex_ci_lo_pct"], row["ex_ci_hi_pct"]] == pytest.approx(s.ex_strict_ci95, abs=1e-3)
    gold = summary.loc[("gold", "A")]
    # 100 % of S sessions: lo = S / (S + z^2), the Wilson bound, never 100.
    assert gold["ex_pct"] == 100 and gold["ex_ci_hi_pct"] == 100
    assert gold["ex_ci_lo_pct"] == pytest.approx(100 * gold["n_sessions"] / (gold["n_sessions"] + 1.959964**2), abs=1e-3)
    assert gold["ex_ci_lo_pct"] < 100
    for name, value, lo, hi in (
        ("agg_ex_by_source", "ex_pct", "ex_ci_lo_pct", "ex_ci_hi_pct"),
        ("agg_ex_by_turn_depth", "ex_pct", "ex_ci_lo_pct", "ex_ci_hi_pct"),
        ("agg_ex_by_source_tier", "ex_pct", "ex_ci_lo_pct", "ex_ci_hi_pct"),
        ("agg_mbs", "mbs_pp", "mbs_ci_lo_pp", "mbs_ci_hi_pp"),
        ("agg_ablation", "win_pp", "win_ci_lo_pp", "win_ci_hi_pp"),
    ):
        df = mart(duckdb_path, name).dropna(subset=[value])
        assert len(df) and df[lo].notna().all(), name
        assert ((df[lo] <= df[value] + 1e-9) & (df[value] <= df[hi] + 1e-9)).all(), name
    mbs = mart(duckdb_path, "agg_mbs")
    first = mbs[(mbs["turn_depth"] == 1) & (mbs["model"] == "recall-probe")]
    # recall-probe answers turn 1 identically under A and B: a paired difference is exactly 0.
    assert (first["mbs_ci_lo_pp"] == 0).all() and (first["mbs_ci_hi_pp"] == 0).all()
    win = mart(duckdb_path, "agg_ablation").set_index(["model", "source"]).loc[("recall-probe", "ALL")]
    assert win["n_turns_b"] == win["n_turns_b_wm5"] == len(results) // len(PARTITIONS)
