"""The extended benchmark evaluated through Dagster (extended_turn_results, beside turn_results), and
its marts by phenomenon through dbt, on a home with the embedded sources and, of each source's extended
sessions, sixteen: the first four and the last four (each distractor session and its twin) and the
whole histories of two analysts (four sessions each, extended/layout.py)."""

from __future__ import annotations

import logging
import shutil

import dagster as dg
import duckdb
import pytest

from memsql_assets.definitions import defs
from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.defs.evaluation.resources import evaluation_run_config
from memsql_assets.defs.jobs import EXTENDED_EVALUATE_JOB
from memsql_assets.lib.benchmark.extended.template import EXTENDED_DIR
from memsql_assets.lib.benchmark.pipeline import build_measured_extended_sessions
from memsql_assets.lib.benchmark.profiles import extract_profiles
from memsql_assets.lib.benchmark.store import EXTENDED_TURNS_SCHEMA, read_turns, write_benchmark
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import (
    RESULT_FILE,
    comparable_rows,
    partition_dir,
    progress_dir,
    read_results,
    write_session_checkpoint,
)
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.report.dbt_cli import run_dbt
from memsql_assets.lib.vocabulary import (
    CROSS_SESSION_NOTE,
    EXTENDED_BENCHMARK,
    PAPER_BENCHMARK,
    PHENOMENA,
    REFERENCE_MODELS,
)

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


def test_cross_session_figures_in_the_summary_and_the_marts(extended_home):
    """C_analyst and C side by side: the cross-session figure with its interval over turns, in the
    partition's summary and in agg_condition_summary alike; the analyst's own store reads what the
    shared one misses, and only the shared one takes another analyst's values."""
    from memsql_assets.lib.evaluation.interval import ex_interval
    from memsql_assets.lib.harness.summary import cross_session_turns
    from memsql_assets.lib.memory.plugins import NoAnalystsError

    with pytest.raises(NoAnalystsError, match="^condition C_analyst .*scope: analyst"):
        evaluate_partition(extended_home, "reader-probe", "C_analyst")  # the paper benchmark names no analyst
    tagged = cross_session_turns(read_turns(benchmark_dir(extended_home, EXTENDED_BENCHMARK)))
    assert tagged, "the sample keeps whole histories: continuing sessions with the ones they continue"
    from memsql_assets.lib.harness.settings import EvalSettings

    # One session at a time: in this small sample every analyst's sessions would share one wave of W = 32.
    summaries = {
        c: evaluate_partition(extended_home, "reader-probe", c, EvalSettings(wave_size=1), benchmark=EXTENDED_BENCHMARK).summary
        for c in ("C", "C_analyst")
    }
    for s in summaries.values():
        assert s["n_cross_session"] == len(tagged)
        correct = round(s["ex_cross_session"] * len(tagged) / 100)
        assert s["ex_cross_session_ci95"] == list(ex_interval(correct, len(tagged), len(tagged)))
    shared, own = summaries["C"], summaries["C_analyst"]
    assert own["ex_cross_session"] > shared["ex_cross_session"] and own["contaminated_cross_session"] == 0
    run_dbt(extended_home, "build", "--select", "+agg_condition_summary", "--indirect-selection", "cautious")
    cols = "ex_within_session_pct, ex_within_session_ci_lo_pct, ex_within_session_ci_hi_pct, ex_cross_session_pct, ex_cross_session_ci_lo_pct, ex_cross_session_ci_hi_pct, n_cross_session, n_cross_session_contaminated"
    with duckdb.connect(str(extended_home / "dbt" / "memsql.duckdb"), read_only=True) as con:
        for condition, s in summaries.items():
            row = con.execute(
                f"select {cols} from main.agg_condition_summary where benchmark = ? and model = 'reader-probe' and condition = ?",
                [EXTENDED_BENCHMARK, condition],
            ).fetchone()
            expected = (
                s["ex_within_session"], *s["ex_within_session_ci95"], s["ex_cross_session"], *s["ex_cross_session_ci95"],
                s["n_cross_session"], s["contaminated_cross_session"],
            )
            assert row == pytest.approx(expected, abs=0.01), condition  # the summary rounds to 0.01


def test_the_report_shows_both_figures_in_a_browser(extended_home, tmp_path):
    """The report's extended matrix, in headless chromium: each cell within | across with the counts,
    C_analyst's cross-session figure above C's, and the two lines that say what separates them. With
    MEMSQL_SCREENSHOTS set, the page's top is left there as report_cross_session.png."""
    import os
    from pathlib import Path

    from memsql_assets.lib.harness.settings import EvalSettings
    from memsql_assets.lib.report.build import build_report

    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip(f"{chromium} is absent: apt-get install -y chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    for condition in ("C", "C_analyst"):
        evaluate_partition(extended_home, "reader-probe", condition, EvalSettings(wave_size=1), benchmark=EXTENDED_BENCHMARK)
    run_dbt(extended_home, "build")
    report = build_report(extended_home / "dbt" / "memsql.duckdb", tmp_path / "report")
    (board,) = [b for b in report.leaderboards if b.benchmark == EXTENDED_BENCHMARK]
    cells = dict(zip(board.conditions, dict(board.references)["reader-probe"], strict=True))
    (headline,) = [t for t in report.tables if t.key == "extended_summary"]
    for row in (dict(zip(headline.columns, r, strict=True)) for r in headline.rows):
        if row["model"] == "reader-probe" and row["condition"] in ("C", "C_analyst"):
            cell = cells[row["condition"]]
            assert (row["EX within session %"], row["EX across sessions %"]) == (cell.value_text, cell.across.value_text)
            assert row["across 95% CI (turns)"] == cell.across.interval_text
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": 1300, "height": 900})
            tab.goto(report.html.as_uri(), wait_until="load")
            across = {}
            for condition in ("C", "C_analyst"):
                td = tab.locator(f'#matrix_extended tr[data-model="reader-probe"] td[data-condition="{condition}"]')
                assert td.locator(".within .v").inner_text() == cells[condition].value_text
                across[condition] = td.locator(".across .v").inner_text()
                assert across[condition] == cells[condition].across.value_text
                cell = cells[condition]
                counts = f"{cell.contaminated} ({cell.contaminated_across}) cont.\n{cell.stale} stale"
                assert td.locator(".counts").inner_text() == counts
            assert float(across["C_analyst"]) > float(across["C"])
            assert cells["C"].contaminated_across > 0 == cells["C_analyst"].contaminated_across
            note = tab.locator("#matrix_extended-note").inner_text().splitlines()
            assert note == list(CROSS_SESSION_NOTE), "two lines say what separates the columns"
            assert "the unit: turns" in tab.locator("#matrix_extended caption").inner_text()
            if os.environ.get("MEMSQL_SCREENSHOTS"):
                tab.locator("header#top").screenshot(path=str(Path(os.environ["MEMSQL_SCREENSHOTS"]) / "report_cross_session.png"))
        finally:
            browser.close()


def test_gold_history_stores_the_ground_truths_and_the_cascade_mart(extended_home):
    from memsql_assets.lib.benchmark.store import read_turns, turn_id
    from memsql_assets.lib.harness.settings import EvalSettings
    from memsql_assets.lib.models.request_store import RequestStore
    from memsql_assets.lib.vocabulary import History

    own = evaluate_partition(extended_home, "reader-probe", "B_wm5", benchmark=EXTENDED_BENCHMARK)
    gold = evaluate_partition(
        extended_home, "reader-probe", "B_wm5", EvalSettings(history="gold"), benchmark=EXTENDED_BENCHMARK
    )
    assert gold.result_path.parent == partition_dir(extended_home, "reader-probe", "B_wm5", EXTENDED_BENCHMARK, History.GOLD)
    assert own.result_path.exists() and own.result_path != gold.result_path
    turns = {turn_id(t): t for t in read_turns(benchmark_dir(extended_home, EXTENDED_BENCHMARK))}
    store = RequestStore.at_home(extended_home)

    def shown(row):
        return store.get(row["request_key"])["request"]["messages"][-1]["content"]

    # Every earlier turn in the window is shown with its ground truth under gold history; under the
    # model's own, a turn the probe could not fill is shown as it wrote it.
    for row in gold.rows:
        previous = turns.get(f"{row['session_id']}#{row['turn_index'] - 1}")
        assert previous is None or f"SQL: {previous['gt_sql']}" in shown(row), turn_id(row)
    assert any("{?}" in shown(r) for r in own.rows), "the own history keeps the probe's unfilled answers"
    run_dbt(extended_home, "build", "--select", "+agg_history_cascade", "--indirect-selection", "cautious")
    with duckdb.connect(str(extended_home / "dbt" / "memsql.duckdb"), read_only=True) as con:
        row = con.execute(
            "select cascade_pp, cascade_ci_lo_pp, cascade_ci_hi_pp, ex_gold_history_pct, ex_own_history_pct "
            "from main.agg_history_cascade where model = 'reader-probe' and condition = 'B_wm5'"
        ).fetchone()
    cascade, lo, hi, ex_gold, ex_own = row
    assert abs(ex_gold - gold.summary["ex_strict"]) < 0.05 and abs(ex_own - own.summary["ex_strict"]) < 0.05
    assert cascade > 0 and lo <= cascade <= hi
    # The viewer shows the gold-history evaluation as a partition of its own, beside the model's own.
    from fastapi.testclient import TestClient

    from memsql_assets.lib.viewer import data
    from memsql_assets.lib.viewer.app import create_app, turn_url

    index = data.TurnIndex(extended_home)
    keys = {p.key for p in data.partitions(extended_home)}
    assert {f"reader-probe/B_wm5@{EXTENDED_BENCHMARK}", f"reader-probe/B_wm5@{EXTENDED_BENCHMARK}~gold"} <= keys
    cell = {"benchmark": EXTENDED_BENCHMARK, "model": "reader-probe", "condition": "B_wm5"}
    assert data.list_turns(index, {**cell, "history": "gold"})[0] == len(gold.rows)
    assert data.list_turns(index, {**cell, "history": "model"})[0] == len(own.rows)
    first = gold.rows[0]
    url = turn_url("reader-probe", "B_wm5", first["session_id"], first["turn_index"], first["epoch"], "gold")
    page = TestClient(create_app(extended_home)).get(url)
    assert page.status_code == 200 and "gold history" in page.text


def test_m0_per_analyst_is_rebuilt_on_a_resume_to_the_clean_runs_rows(extended_home, caplog):
    """mem0 per analyst is kept in memory: the turns of a killed run's finished sessions went with its
    process, so a resume does not trust their checkpoints and rebuilds the partition from its first
    session, the model's answers coming back from the request store."""
    run = {"settings": EvalSettings(wave_size=1), "benchmark": EXTENDED_BENCHMARK}
    clean = evaluate_partition(extended_home, "reader-probe", "M0_analyst", **run)
    checkpoints = progress_dir(extended_home, "reader-probe", "M0_analyst", benchmark=EXTENDED_BENCHMARK)
    for sid in sorted({r["session_id"] for r in clean.rows})[:2]:  # a run killed after two sessions
        write_session_checkpoint(checkpoints, sid, [r for r in clean.rows if r["session_id"] == sid])
    with caplog.at_level(logging.WARNING, logger="memsql_assets.lib.harness.services"):
        resumed = evaluate_partition(extended_home, "reader-probe", "M0_analyst", **run)
    assert any("or is kept in memory only" in r.getMessage() for r in caplog.records)
    assert resumed.summary["resumed_sessions"] == 0 and resumed.summary["model_calls_this_run"] == 0
    assert comparable_rows(resumed.rows) == comparable_rows(clean.rows)
