"""The report as a person sees it: $MEMSQL_HOME/report/report.html opened in a real headless
browser (Debian's chromium, driven by playwright; `.ci/run` installs it). It opens with the
leaderboard, a heatmap of the mart's model × condition cells in the first screen, the LLMs apart
from the reference models; every other section is collapsed until clicked; once opened, every figure
has decoded (natural size > 0) and the section "This run vs the paper" is there with the mart's rows.

With MEMSQL_SCREENSHOTS set to a folder, the tests leave there report.png (the page's top, as the
README shows it) and report_agents.png (the agents table)."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest

from memsql_assets.lib.models.builtin_names import BUILTIN_NAMES
from memsql_assets.lib.report.figures import FIGURES
from memsql_assets.lib.vocabulary import AGENT_BASELINE_CONDITION, AGENTSM_CONDITION, CONDITION_NAMES

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = os.environ.get("MEMSQL_SCREENSHOTS")  # a folder: the tests' screenshots go there
VIEWPORT = {"width": 1300, "height": 900}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


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
            tab = browser.new_page(viewport=VIEWPORT)
            tab.goto((paper_home / "report" / "report.html").as_uri(), wait_until="load")
            yield tab
        finally:
            browser.close()


def _mart(paper_home: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(paper_home / "dbt" / "memsql.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _open(page, section: str) -> None:
    """Click a collapsed section's summary, as a reader does."""
    details = page.locator(f"details#section-{section}")
    if not details.evaluate("d => d.open"):
        details.locator("summary").click()
    assert details.evaluate("d => d.open"), section


def test_the_page_opens_with_the_leaderboard_heatmap(page, paper_home):
    cells = _mart(
        paper_home,
        "select model, condition, ex_memory_critical_pct, ex_memory_critical_ci_lo_pct, "
        "ex_memory_critical_ci_hi_pct from main.agg_condition_summary where benchmark = 'paper'",
    )
    assert len(cells) > 0
    matrix = page.locator("#matrix_paper")
    box = matrix.bounding_box()
    assert box is not None and box["y"] + box["height"] <= VIEWPORT["height"], "the matrix fills the first screen"
    conditions = {c for _, c, *_ in cells}
    head = page.locator("#matrix_paper thead th").all_inner_texts()
    assert head == ["model", *(c for c in CONDITION_NAMES if c in conditions)]
    references = set(BUILTIN_NAMES["builtin"])
    models = {m for m, *_ in cells}

    def block(kind: str) -> list[str]:
        return page.locator(f"#matrix_paper-{kind} tr[data-model]").evaluate_all("rs => rs.map(r => r.dataset.model)")

    assert block("llms") == sorted(models - references) and len(block("llms")) == 3
    assert block("references") == [m for m in BUILTIN_NAMES["builtin"] if m in models]
    label = "th[scope=rowgroup]"
    assert page.locator(f"#matrix_paper-llms {label}").text_content() == "Evaluated LLMs"
    assert page.locator(f"#matrix_paper-references {label}").text_content().startswith("Reference models")
    colours = {}
    for model, condition, value, lo, hi in cells:
        cell = page.locator(f'#matrix_paper tr[data-model="{model}"] td[data-condition="{condition}"]')
        assert cell.inner_text().split() == [f"{value:.1f}", f"{lo:.1f}–{hi:.1f}"], (model, condition)
        colours[round(value)] = cell.evaluate("td => getComputedStyle(td).backgroundColor")
    filled = page.locator("#matrix_paper td[data-condition]:not(.none)").count()
    assert filled == len(cells)
    assert page.locator("#matrix_paper td.none").count() == (len(head) - 1) * len(models) - len(cells)
    # A heatmap: a cell at 0 % and one at 100 % are coloured, and differently.
    assert colours[0] != colours[100] and "rgba(0, 0, 0, 0)" not in (colours[0], colours[100])
    top = page.locator("header#top")
    assert top.locator("#matrix_paper").count() == 1 and top.locator("details").count() == 0
    shot = top.screenshot()  # what scripts/report_screenshot.py takes for the README
    assert shot.startswith(PNG_SIGNATURE)
    if SCREENSHOTS:
        (Path(SCREENSHOTS) / "report.png").write_bytes(shot)


def test_the_long_sections_are_collapsed_and_empty_ones_are_one_line(page):
    sections = page.locator("details")
    assert sections.count() > 10
    assert sections.evaluate_all("ds => ds.filter(d => d.open).length") == 0
    for table in ("#summary", "#paper", "#agents", "#pair_gaps"):
        assert page.locator(table).count() == 1 and not page.locator(table).is_visible(), table
    images = page.locator("img").all()
    assert len(images) > 0 and not any(img.is_visible() for img in images)
    empty = page.locator("p.empty")
    assert empty.count() > 0
    for line in empty.all():  # visible, naming the command that fills it, at most two lines at this width
        line_height = float(line.evaluate("p => parseFloat(getComputedStyle(p).lineHeight)"))
        assert line.is_visible() and "memsql" in line.inner_text()
        assert line.evaluate("p => p.clientHeight - parseFloat(getComputedStyle(p).paddingTop) * 2") <= 2 * line_height + 1


def test_every_figure_has_loaded_once_its_section_is_open(page):
    for section in page.locator("details").evaluate_all("ds => ds.map(d => d.id.replace('section-', ''))"):
        _open(page, section)
    images = page.eval_on_selector_all(
        "img",
        "els => els.map(e => ({id: e.id, complete: e.complete, w: e.naturalWidth, h: e.naturalHeight}))",
    )
    assert sorted(i["id"] for i in images) == sorted(f"fig-{k}" for k in FIGURES)
    broken = [i for i in images if not (i["complete"] and i["w"] > 0 and i["h"] > 0)]
    assert not broken, broken
    assert all(img.is_visible() for img in page.locator("img").all())


def test_the_paper_section_is_there_with_the_marts_rows(page, paper_home):
    headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
    assert "This run vs the paper" in headings
    section = page.locator("h2", has_text="This run vs the paper")
    assert section.is_visible()
    _open(page, "paper")
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
    _open(page, "agents")
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
