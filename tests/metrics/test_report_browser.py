"""The report as a person sees it: $MEMSQL_HOME/report/report.html opened in a real headless
browser (Debian's chromium, driven by playwright; `.ci/run` installs it). Every figure has decoded
(natural size > 0) and the section "This run vs the paper" is there with the mart's rows."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest

from memsql_assets.lib.report.figures import FIGURES
from memsql_assets.lib.vocabulary import AGENT_BASELINE_CONDITION, AGENTSM_CONDITION

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = os.environ.get("MEMSQL_SCREENSHOTS")  # a folder: the agents table's screenshot goes there


@pytest.fixture(scope="module")
def page(paper_home):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: apt-get install -y chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            tab = browser.new_page(viewport={"width": 1300, "height": 900})
            tab.goto((paper_home / "report" / "report.html").as_uri(), wait_until="load")
            yield tab
        finally:
            browser.close()


def test_every_figure_has_loaded(page):
    images = page.eval_on_selector_all(
        "img",
        "els => els.map(e => ({id: e.id, complete: e.complete, w: e.naturalWidth, h: e.naturalHeight}))",
    )
    assert sorted(i["id"] for i in images) == sorted(f"fig-{k}" for k in FIGURES)
    broken = [i for i in images if not (i["complete"] and i["w"] > 0 and i["h"] > 0)]
    assert not broken, broken
    shown = page.eval_on_selector_all("img", "els => els.map(e => e.getBoundingClientRect().width)")
    assert all(w > 0 for w in shown)  # laid out, not hidden


def test_the_paper_section_is_there_with_the_marts_rows(page, paper_home):
    headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
    assert "This run vs the paper" in headings
    section = page.locator("h2", has_text="This run vs the paper")
    assert section.is_visible()
    assert page.locator("#fig-paper").is_visible()
    con = duckdb.connect(str(paper_home / "dbt" / "memsql.duckdb"), read_only=True)
    try:
        n_rows, n_claims = con.execute(
            "select count(*), count(distinct claim_id) from main.paper_comparison where verdict <> 'not evaluated'"
        ).fetchone()
    finally:
        con.close()
    assert page.locator("#paper tbody tr").count() == n_rows > 0
    text = page.locator("#paper").inner_text()
    assert "claude-sonnet-4.6" in text and "inside" in text and "outside" in text
    assert page.locator("#paper_claims tbody tr").count() == n_claims > 3
    sentences = page.locator("#paper_claims").inner_text()
    assert "Turn-1 accuracy is competitive (67.0–73.0% across all five models at Condition A)" in sentences


def test_the_agents_section_shows_t_against_e_per_source_with_steps_saved(page, paper_home):
    headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
    assert "Agents" in headings
    table = page.locator("#agents")
    table.scroll_into_view_if_needed()
    assert table.is_visible()
    con = duckdb.connect(str(paper_home / "dbt" / "memsql.duckdb"), read_only=True)
    try:
        saved = con.execute(
            "select source, schema_in_prompt, median_steps_t, median_steps_e, steps_saved "
            "from main.agg_agent_steps_saved"
        ).fetchall()
    finally:
        con.close()
    assert page.locator("#agents tbody tr").count() == len(saved) > 1
    head = page.locator("#agents thead").inner_text()
    for column in (f"EX {AGENT_BASELINE_CONDITION} 95% CI", f"EX {AGENTSM_CONDITION} 95% CI", "steps saved by"):
        assert column in head
    cells = [r.split("\t") for r in page.locator("#agents tbody tr").all_inner_texts()]
    rows = {(r[2], r[3]): r for r in cells}
    for source, shown, steps_t, steps_e, steps in saved:
        row = rows[(source, "yes" if shown else "no")]
        assert {f"{v:.1f}" for v in (steps_t, steps_e, steps)} <= set(row)
        assert (steps > 0) != shown and "reference agent (scripted)" in row
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / "report_agents.png"), clip=table.bounding_box())
