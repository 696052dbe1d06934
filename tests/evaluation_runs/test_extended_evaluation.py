"""The extended benchmark evaluated through Dagster (extended_turn_results, beside turn_results), and
its marts by phenomenon through dbt, on a home with the embedded sources and, of each source's extended
sessions, sixteen: the first four and the last four (each distractor session and its twin) and the
whole histories of two analysts (four sessions each, extended.layout)."""

from __future__ import annotations

import shutil

import dagster as dg
import duckdb
import pytest

from memsql_assets.definitions import defs
from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.defs.evaluation.resources import evaluation_run_config
from memsql_assets.defs.jobs import EXTENDED_EVALUATE_JOB
from memsql_assets.lib.benchmark.extended import EXTENDED_DIR
from memsql_assets.lib.benchmark.pipeline import build_measured_extended_sessions
from memsql_assets.lib.benchmark.profiles import extract_profiles
from memsql_assets.lib.benchmark.store import EXTENDED_TURNS_SCHEMA, write_benchmark
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, read_results
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.report.dbt_cli import run_dbt
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, PAPER_BENCHMARK, PHENOMENA, REFERENCE_MODELS

TWINS = 8  # sessions per source: twins and returning sessions, then as many in two analysts' histories


@pytest.fixture(scope="module")
def extended_home(tmp_path_factory, small_home, embedded_dbs):
    home = tmp_path_factory.mktemp("extended") / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report"))
    profiles = {s: extract_profiles(s, p, EXTENDED_DIR) for s, p in embedded_dbs.items()}
    built = build_measured_extended_sessions(profiles, embedded_dbs)  # as the extended_sessions asset builds it
    last = max(int(s.session_id[-3:]) for s in built)
    ends = [s for s in built if not TWINS // 2 < int(s.session_id[-3:]) <= last - TWINS // 2]
    first_analysts = {s.analyst for s in built if TWINS // 2 < int(s.session_id[-3:]) <= TWINS // 2 + 2}
    sessions = ends + [s for s in built if s.analyst in first_analysts]
    assert len(sessions) == 3 * 2 * TWINS
    write_benchmark(benchmark_dir(home, EXTENDED_BENCHMARK), sessions, EXTENDED_TURNS_SCHEMA)
    return home


def test_an_extended_partition_through_dagster(extended_home, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(extended_home))
    # Sessions one at a time (the paper's order): each returning session sees its twin.
    one_by_one = {"resources": evaluation_run_config(wave_size=1)}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("model", list(REFERENCE_MODELS))
        job = defs.resolve_job_def(EXTENDED_EVALUATE_JOB)
        result = job.execute_in_process(
            instance=instance, partition_key=partition_key("reader-probe", "C"), run_config=one_by_one
        )
        assert result.success
        (check,) = result.get_asset_check_evaluations()
        assert check.asset_key == dg.AssetKey("extended_turn_results") and check.passed
        (mat,) = result.get_asset_materialization_events()
        assert mat.asset_key == dg.AssetKey("extended_turn_results")
        meta = mat.materialization.metadata
        assert meta["benchmark"].value == EXTENDED_BENCHMARK
    rows = read_results(partition_dir(extended_home, "reader-probe", "C", EXTENDED_BENCHMARK) / RESULT_FILE)
    assert len({r["session_id"] for r in rows}) == 3 * 2 * TWINS
    assert mat.materialization.metadata["twins_reachable_pct"].value == 100.0
    assert all("-X-" in r["session_id"] for r in rows)
    # Episodic memory holds this benchmark's sessions only: every supplying session is an extended one.
    assert any(r["contaminated"] for r in rows), "a distractor session's value reached a failed turn"
    assert all("-X-" in (r["contamination_source"] or "-X-") for r in rows)
    stale = [r for r in rows if r["stale_state"] is not None]
    assert stale and all(r["turn_index"] > 1 for r in stale)
    assert meta["stale_state"].value == sum(bool(r["stale_state"]) for r in rows)
    assert not partition_dir(extended_home, "reader-probe", "C").exists(), "the paper partition is not touched"


def test_marts_by_phenomenon_via_dbt(extended_home):
    for model, condition in (("gold", "A"), ("reader-probe", "B"), ("reader-probe", "B_wm5")):
        evaluate_partition(extended_home, model, condition, benchmark=EXTENDED_BENCHMARK)
    evaluate_partition(extended_home, "gold", "A")  # the paper benchmark's, beside it
    selected = ("--select", "+agg_ex_by_phenomenon", "+agg_condition_summary", "--indirect-selection", "cautious")
    run_dbt(extended_home, "build", *selected)
    with duckdb.connect(str(extended_home / "dbt" / "memsql.duckdb"), read_only=True) as con:
        by_tag = con.execute(
            "select model, condition, tag, ex_pct from main.agg_ex_by_phenomenon order by all"
        ).fetchall()
        summary = con.execute(
            "select benchmark, model, condition, n_turns from main.agg_condition_summary order by all"
        ).fetchall()
    assert {t for _, _, t, _ in by_tag} == set(PHENOMENA)
    assert all(ex == 100.0 for m, _, _, ex in by_tag if m == "gold")
    probe = {(c, t): ex for m, c, t, ex in by_tag if m == "reader-probe"}
    assert probe[("B", "long_range")] < probe[("B_wm5", "long_range")]
    assert probe[("B", "detour")] == 100.0  # a detour states everything it needs
    # (the module's Dagster test may have added reader-probe under C on the extended benchmark)
    assert {(b, m, c) for b, m, c, _ in summary} >= {
        (EXTENDED_BENCHMARK, "gold", "A"),
        (EXTENDED_BENCHMARK, "reader-probe", "B"),
        (EXTENDED_BENCHMARK, "reader-probe", "B_wm5"),
        (PAPER_BENCHMARK, "gold", "A"),
    }
    assert {(b, m, c) for b, m, c, _ in summary if b == PAPER_BENCHMARK} == {(PAPER_BENCHMARK, "gold", "A")}


def test_the_viewer_shows_both_benchmarks(extended_home):
    from fastapi.testclient import TestClient

    from memsql_assets.lib.viewer import data
    from memsql_assets.lib.viewer.app import create_app

    evaluate_partition(extended_home, "reader-probe", "B", benchmark=EXTENDED_BENCHMARK)
    evaluate_partition(extended_home, "reader-probe", "B")
    index = data.TurnIndex(extended_home)
    keys = {p.key for p in data.partitions(extended_home)}
    assert {"reader-probe/B", f"reader-probe/B@{EXTENDED_BENCHMARK}"} <= keys
    total, rows = data.list_turns(index, {"benchmark": EXTENDED_BENCHMARK, "model": "reader-probe", "condition": "B"})
    assert total == len(read_results(partition_dir(extended_home, "reader-probe", "B", EXTENDED_BENCHMARK) / RESULT_FILE))
    assert all(r["benchmark"] == EXTENDED_BENCHMARK and "-X-" in r["session_id"] for r in rows)
    assert all(r["question"] for r in rows), "every extended turn joins its benchmark's question"
    paper_total, _ = data.list_turns(index, {"benchmark": PAPER_BENCHMARK, "model": "reader-probe", "condition": "B"})
    assert paper_total == len(read_results(partition_dir(extended_home, "reader-probe", "B") / RESULT_FILE))

    client = TestClient(create_app(extended_home))
    page = client.get(f"/compare?left=reader-probe/B@{EXTENDED_BENCHMARK}&right=reader-probe/B")
    assert page.status_code == 200 and "left-link" not in page.text, "two benchmarks share no session"
    page = client.get(f"/compare?left=gold/A@{EXTENDED_BENCHMARK}&right=reader-probe/B@{EXTENDED_BENCHMARK}")
    assert page.status_code == 200 and "/turn/reader-probe/B/" in page.text and "-X-" in page.text
    assert client.get("/?benchmark=nope").status_code == 404
