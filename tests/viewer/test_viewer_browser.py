"""`memsql view` as a person uses it: a separate process on a small home, driven in Debian's chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request

import duckdb
import pyarrow.parquet as pq
import pytest

from memsql_assets.lib.harness.results import partition_dir, read_results
from tests.viewer.conftest import REPO, free_port

# A `memsql view` process and Chromium over a home built with dbt: not part of the quick subset.
pytestmark = pytest.mark.integration

@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """Where the pages' screenshots go (to be looked at: the layout is not asserted)."""
    return tmp_path_factory.mktemp("viewer_screenshots")


@pytest.fixture(scope="module")
def tab(browser, viewer):
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    yield page
    page.close()


def _turns(home):
    bench = pq.read_table(home / "benchmark" / "turns.parquet").to_pylist()
    return {(t["session_id"], t["turn_index"]): t for t in bench}


def test_failed_turn_shows_prompt_both_sqls_and_previews(tab, viewer, view_home, shots):
    tab.goto(viewer + "/")
    tab.select_option("select[name=model]", "recall-probe")
    tab.select_option("select[name=condition]", "B")
    tab.select_option("select[name=failed]", "yes")
    tab.click("button[type=submit]")
    rows = read_results(partition_dir(view_home, "recall-probe", "B") / "turn_results.parquet")
    failed = [r for r in rows if r["error_class"] != "correct"]
    assert tab.inner_text("#count").startswith(f"{len(failed):,} turns match")
    tab.screenshot(path=str(shots / "list.png"))
    tab.locator("a.turn-link").first.click()
    session, turn = tab.locator("h1").inner_text().split("·")[1].split(" turn ")
    row = next(r for r in failed if (r["session_id"], r["turn_index"]) == (session.strip(), int(turn)))
    truth = _turns(view_home)[(row["session_id"], row["turn_index"])]
    assert tab.inner_text("#model-sql") == row["extracted_sql"]
    assert tab.inner_text("#gt-sql") == truth["gt_sql"]
    assert truth["question"] in tab.inner_text("#prompt")
    assert "Output requirements" in tab.inner_text("#prompt")
    assert tab.locator("#gt-result th").count() >= 1  # the ground truth's result as a table
    assert tab.locator("#model-result, .card .bad").count() >= 1  # the model's: rows or its error
    for key in (k for k in row["missing_keys"].strip("[]").replace('"', "").split(", ") if k):
        assert key in tab.inner_text("#missing")
    tab.screenshot(path=str(shots / "turn.png"), full_page=True)


def test_comparison_lists_the_marts_flips_and_opens_both_sides(tab, viewer, view_home, shots):
    con = duckdb.connect(str(view_home / "dbt" / "memsql.duckdb"), read_only=True)
    (expected,) = con.execute(
        "select count(*) from main.fct_turn_evaluations l join main.fct_turn_evaluations r "
        "using (session_id, turn_index, epoch) where l.model = 'recall-probe' and l.condition = 'B' "
        "and r.model = 'recall-probe' and r.condition = 'B_wm5' and l.error_class <> r.error_class"
    ).fetchone()
    con.close()
    tab.goto(viewer + "/compare?left=recall-probe/B&right=recall-probe/B_wm5")
    assert int(tab.inner_text("#n-flips")) == expected > 0
    assert tab.locator("table.flips tr").count() == expected
    tab.screenshot(path=str(shots / "compare.png"), full_page=True)
    right = tab.locator("a.right-link").first.get_attribute("href")
    tab.locator("a.left-link").first.click()
    assert "/recall-probe/B/" in tab.url and tab.locator("#gt-sql").is_visible()
    tab.goto(viewer + right)
    assert "/recall-probe/B_wm5/" in tab.url and tab.locator("#gt-sql").is_visible()


def test_unknown_model_is_a_404_naming_the_choices(viewer):
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(viewer + "/turn/nope/B/BIRD-1-001/1/1")
    assert err.value.code == 404
    body = err.value.read().decode()
    assert "nope" in body and "recall-probe" in body and "gold" in body


def test_unknown_condition_is_a_404_naming_the_choices(viewer):
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(viewer + "/?model=recall-probe&condition=Z")
    assert err.value.code == 404
    body = err.value.read().decode()
    assert "Z" in body and "B_wm5" in body


def _view(home, port):
    env_cmd = [sys.executable, "-m", "memsql_assets.cli", "view", "--port", str(port)]
    return subprocess.run(
        env_cmd,
        env={**os.environ, "MEMSQL_HOME": str(home), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_home_without_results_says_how_to_make_some(tmp_path):
    out = _view(tmp_path, free_port())
    assert out.returncode == 1
    assert out.stderr.strip().count("\n") == 0 and "memsql run" in out.stderr


def test_a_taken_port_is_one_line_naming_it(viewer, view_home):
    port = int(viewer.rsplit(":", 1)[1])
    out = _view(view_home, port)
    assert out.returncode == 1
    assert out.stderr.strip().count("\n") == 0 and f"127.0.0.1:{port}" in out.stderr


def test_a_partition_being_written_shows_only_committed_files(viewer, view_home):
    part = partition_dir(view_home, "half", "A")
    (part / "_progress" / "epoch=1").mkdir(parents=True)
    (part / "_progress" / "epoch=1" / "BIRD-1-001.json").write_text("[")
    (part / ".turn_results.parquet.tmp").write_bytes(b"PAR1 half")
    try:
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(viewer + "/?model=half")
        assert err.value.code == 404 and "recall-probe" in err.value.read().decode()
    finally:
        shutil.rmtree(part.parent)
