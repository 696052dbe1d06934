"""The report renders from the marts: files exist, figures are real PNGs, the leaderboard is the
marts' model × condition matrix, and every number in the HTML tables equals the corresponding mart
value (read here independently, formatted to the report's precision)."""

from __future__ import annotations

import dataclasses
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from conftest import PAPER_STAND_INS, PARTITIONS

from memsql_assets.lib.models.builtin_names import BUILTIN_NAMES
from memsql_assets.lib.report import ReportError, build_report, load_marts
from memsql_assets.lib.report.figures import FIGURES
from memsql_assets.lib.report.leaderboard import leaderboard
from memsql_assets.lib.report.page import SECTIONS, leaderboard_html
from memsql_assets.lib.vocabulary import CONDITION_NAMES, REFERENCE_MODELS

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class _Tables(HTMLParser):
    """table id -> (header cells, body rows), tbody id -> its rows, and the src of every <img>."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, tuple[list[str], list[list[str]]]] = {}
        self.groups: dict[str, list[list[str]]] = {}
        self.images: dict[str, str] = {}
        self._table: str | None = None
        self._group: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_head = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = a["id"]
            self.tables[self._table] = ([], [])
        elif tag == "thead":
            self._in_head = True
        elif tag == "tbody" and "id" in a:
            self._group = a["id"]
            self.groups[self._group] = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images[a["id"]] = a["src"]

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._table and self._row is not None:
            head, body = self.tables[self._table]
            if self._in_head:
                head.extend(self._row)
            else:
                body.append(self._row)
            if self._group is not None:
                self.groups[self._group].append(self._row)
            self._row = None
        elif tag == "thead":
            self._in_head = False
        elif tag == "tbody":
            self._group = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(path: Path) -> _Tables:
    p = _Tables()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def keyed(table, n_keys: int) -> dict[tuple[str, ...], dict[str, str]]:
    head, body = table
    return {tuple(r[:n_keys]): dict(zip(head, r, strict=True)) for r in body}


def mart(db: Path, name: str) -> pd.DataFrame:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"select * from main.{name}").df()
    finally:
        con.close()


def same(cell: str, value, decimals: int = 1) -> bool:
    """A formatted cell shows the mart value at the report's precision ('–' for null)."""
    if value is None or pd.isna(value):
        return cell == "–"
    return (
        abs(float(cell.replace(",", "").replace("+", "")) - round(float(value), decimals))
        < 10**-decimals / 2 + 1e-9
    )


@pytest.fixture(scope="module")
def report(duckdb_path, tmp_path_factory):
    return build_report(duckdb_path, tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def page(report):
    return parse(report.html)


def test_files_exist_and_figures_are_nonempty_pngs(report, page):
    assert report.html.exists() and report.summary_file.exists()
    # Only reference models ran here, and the paper's claims are checked for LLMs only: no paper figure.
    assert set(report.figures) == set(FIGURES) - {"paper"}
    assert not (report.out_dir / "figures" / "paper.png").exists()
    for key, png in report.figures.items():
        data = png.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000, key
    assert set(page.images) == {f"fig-{key}" for key in report.figures}
    assert all(src.startswith("data:image/png;base64,") for src in page.images.values())
    assert set(report.markdown) == {t.key for t in report.tables}
    # Every table with rows is on the page, and no empty one.
    assert set(page.tables) == {t.key for t in report.tables if t.rows} and "matrix_paper" in page.tables


def _matrix_cells(page, benchmark: str) -> tuple[list[str], dict[str, list[list[str]]]]:
    """The leaderboard's column heads, and its two blocks' rows (the labelled divider row first)."""
    head, _ = page.tables[f"matrix_{benchmark}"]
    return head, {kind: page.groups[f"matrix_{benchmark}-{kind}"] for kind in ("llms", "references")}


def test_the_leaderboard_is_the_marts_model_by_condition_matrix(report, page, duckdb_path):
    summary = mart(duckdb_path, "agg_condition_summary")
    summary = summary[summary["benchmark"] == "paper"]
    head, blocks = _matrix_cells(page, "paper")
    assert head == ["model", *(c for c in CONDITION_NAMES if c in set(summary["condition"]))]
    assert head[1:] == ["A", "B", "B_wm5", "T", "E", "T_schema", "E_schema", "H", "S"]
    # Only reference models ran here: the LLM block is its divider and one line saying how to add one.
    llms, references = blocks["llms"], blocks["references"]
    assert llms[0] == ["Evaluated LLMs"] and len(llms) == 2 and "models.yaml" in llms[1][0] and "memsql eval" in llms[1][0]
    assert references[0][0].startswith("Reference models")
    rows = {r[0]: dict(zip(head[1:], r[1:], strict=True)) for r in references[1:]}
    assert list(rows) == [m for m in BUILTIN_NAMES["builtin"] if m in set(summary["model"])]
    assert list(rows) == ["gold", "recall-probe", "guess-probe", "gold-agent"]
    assert len(summary) == len(PARTITIONS)
    for rec in summary.to_dict("records"):
        lo, hi = rec["ex_memory_critical_ci_lo_pct"], rec["ex_memory_critical_ci_hi_pct"]
        expected = f"{rec['ex_memory_critical_pct']:.1f} {lo:.1f}–{hi:.1f}"
        assert rows[rec["model"]][rec["condition"]] == expected, (rec["model"], rec["condition"])
    filled = [c for r in rows.values() for c in r.values() if c != "–"]
    assert len(filled) == len(summary)
    text = report.leaderboards[0].table()
    assert sum("(" in c for r in text.rows for c in r[2:]) == len(summary)
    # No partition of the extended benchmark: one line saying what fills it, no table.
    html = report.html.read_text(encoding="utf-8")
    assert "matrix_extended" not in page.tables and 'id="matrix_extended-empty"' in html
    assert "memsql eval --benchmark extended" in html


def test_the_leaderboard_caption_names_the_context_mode_only_where_the_mart_has_it(duckdb_path):
    marts = load_marts(duckdb_path)
    assert leaderboard(marts).caption().endswith("Context: annotated."), "the mart records the paper's mode"
    summary = marts.condition_summary.drop(columns=["context_mode"])
    board = leaderboard(dataclasses.replace(marts, condition_summary=summary))
    assert "Context" not in board.caption() and not board.modes
    uniform = dataclasses.replace(marts, condition_summary=summary.assign(context_mode="annotated"))
    assert leaderboard(uniform).caption().endswith("Context: annotated.")
    mixed = summary.assign(context_mode=["observed" if c == "H" else "annotated" for c in summary["condition"]])
    board = leaderboard(dataclasses.replace(marts, condition_summary=mixed))
    expected = "Context: annotated (A, B, B_wm5, T, E, T_schema, E_schema, S); observed (H)."
    assert board.caption().endswith(expected) and expected in leaderboard_html(board)


def test_a_mart_with_two_rows_for_one_partition_is_a_clear_error(duckdb_path):
    marts = load_marts(duckdb_path)
    twice = pd.concat([marts.condition_summary, marts.condition_summary.iloc[:1]])
    with pytest.raises(ReportError, match="expected one row per model × condition"):
        leaderboard(dataclasses.replace(marts, condition_summary=twice))


def test_headline_numbers_equal_the_mart(report, page, duckdb_path):
    rows = keyed(page.tables["summary"], 2)
    summary = mart(duckdb_path, "agg_condition_summary")
    assert set(rows) == set(PARTITIONS)
    for rec in summary.to_dict("records"):
        cells = rows[(rec["model"], rec["condition"])]
        assert same(cells["EX %"], rec["ex_pct"])
        assert same(cells["EX mem-critical %"], rec["ex_memory_critical_pct"])
        assert same(cells["EX turn 1 %"], rec["ex_turn1_pct"])
        assert same(cells["contaminated %"], rec["contamination_rate_pct"])
        assert cells["tokens"] == f"{rec['total_tokens']:,}"
        assert cells["turns"] == f"{rec['n_turns']:,}"
        assert f"{rec['ex_pct']:.1f}" in report.summary_text


def test_per_turn_and_mbs_tables_equal_the_marts(page, duckdb_path):
    depth = mart(duckdb_path, "agg_ex_by_turn_depth")
    per_turn = keyed(page.tables["per_turn_ex"], 2)
    assert {k[1] for k in per_turn} == {"A", "B"}
    for rec in depth[depth["condition"].isin(["A", "B"])].to_dict("records"):
        assert same(per_turn[(rec["model"], rec["condition"])][f"t={rec['turn_depth']}"], rec["ex_pct"])
    mbs = keyed(page.tables["mbs"], 2)
    mbs_mart = mart(duckdb_path, "agg_mbs")
    assert len(mbs) > 0 and len(mbs_mart) > 0
    for rec in mbs_mart.to_dict("records"):
        assert same(mbs[(rec["model"], rec["condition"])][f"t={rec['turn_depth']}"], rec["mbs_pp"])


def test_ablation_errors_contamination_cost_tables_equal_the_marts(page, duckdb_path):
    abl = keyed(page.tables["ablation"], 2)
    ablation = mart(duckdb_path, "agg_ablation")
    assert len(ablation) == len(abl) > 0
    for rec in ablation.to_dict("records"):
        cells = abl[(rec["model"], rec["source"])]
        for col, head in (
            ("ex_b_pct", "EX B"),
            ("win_pp", "Win"),
            ("ep_pp", "Ep"),
            ("sem_pp", "Sem"),
            ("net_pp", "Net"),
            ("traj_pp", "Traj"),
            ("traj_prompt_pp", "Traj_prompt"),
        ):
            assert same(cells[head], rec[col]), (rec["model"], rec["source"], head)
    tax = keyed(page.tables["error_taxonomy"], 2)
    taxonomy = mart(duckdb_path, "agg_error_taxonomy")
    assert set(tax) == set(PARTITIONS) and len(taxonomy) > 0
    for rec in taxonomy.to_dict("records"):
        assert same(tax[(rec["model"], rec["condition"])][rec["error_class"]], rec["share_pct"])
    cont = keyed(page.tables["contamination"], 2)
    contamination = mart(duckdb_path, "agg_contamination")
    assert set(cont) == set(PARTITIONS) and len(contamination) == len(PARTITIONS)
    for rec in contamination.to_dict("records"):
        cells = cont[(rec["model"], rec["condition"])]
        assert cells["contaminated"] == f"{rec['n_contaminated']:,}"
        assert same(cells["% of turns"], rec["contamination_rate_pct"])
        assert cells["fallback match"] == f"{rec['n_fallback_match']:,}"
    cost = keyed(page.tables["cost"], 2)
    costs = mart(duckdb_path, "agg_cost")
    assert set(cost) == set(PARTITIONS) and len(costs) == len(PARTITIONS)
    for rec in costs.to_dict("records"):
        cells = cost[(rec["model"], rec["condition"])]
        assert cells["tokens"] == f"{rec['total_tokens']:,}"
        assert same(cells["latency s (mean)"], rec["mean_latency_s"], 3)
        assert same(cells["cost USD"], rec["total_cost_usd"], 4)


def test_added_conditions_against_b_wm5_and_a_and_the_cost_of_memory_equal_the_marts(page, duckdb_path):
    contrasts = keyed(page.tables["contrasts"], 3)
    marts = mart(duckdb_path, "agg_condition_contrasts")
    assert len(contrasts) > 0 and (marts["source"] == "ALL").any()
    for rec in marts[marts["source"] == "ALL"].to_dict("records"):
        if rec["condition"] in ("A", "B_wm5"):
            assert (rec["benchmark"], rec["model"], rec["condition"]) not in contrasts, "the references have no row"
            continue
        cells = contrasts[(rec["benchmark"], rec["model"], rec["condition"])]
        assert same(cells["− B_wm5"], rec["vs_window_pp"]) and same(cells["− A (MBS)"], rec["vs_a_pp"])
    h = marts[(marts["model"] == "recall-probe") & (marts["condition"] == "H") & (marts["source"] == "ALL")].iloc[0]
    # recall-probe resolves from every earlier turn under H, from five under B_wm5: a real gain, its interval above 0
    assert h["vs_window_pp"] > 0 and 0 < h["vs_window_ci_lo_pp"] <= h["vs_window_pp"] <= h["vs_window_ci_hi_pp"]
    assert h["vs_a_pp"] == h["ex_pct"] - h["ex_a_pct"] and h["vs_a_ci_lo_pp"] > 0

    cost = mart(duckdb_path, "agg_memory_cost").set_index(["model", "condition"])
    probe = cost.loc["recall-probe"]
    assert probe.loc["A", "mean_memory_prompt_tokens"] == 0 and probe.loc["A", "memory_store_entries"] == 0
    tokens = probe["mean_memory_prompt_tokens"]
    assert tokens["H"] > tokens["B_wm5"] > tokens["B"] > 0 and 0 < tokens["S"] < tokens["H"]
    assert probe.loc["S", "memory_store_bytes"] < probe.loc["H", "memory_store_bytes"]
    assert (probe["n_memory_errors"] == 0).all() and probe.loc["H", "memory_implementation"] == "window"
    table = keyed(page.tables["memory_cost"], 3)
    for (model, condition), rec in cost.iterrows():
        cells = table[("paper", model, condition)]
        assert same(cells["tokens added/turn"], rec["mean_memory_prompt_tokens"])
        assert same(cells["retrieval ms (mean)"], rec["mean_retrieval_ms"], 3)


def test_paper_tables_equal_the_mart(paper_home):
    """On the stand-ins for the paper's models (reference models' results relabelled as LLMs)."""
    page = parse(paper_home / "report" / "report.html")
    duckdb_path = paper_home / "dbt" / "memsql.duckdb"
    paper = mart(duckdb_path, "paper_comparison")
    shown = paper[paper["verdict"] != "not evaluated"]
    rows = keyed(page.tables["paper"], 4)
    assert len(rows) == len(page.tables["paper"][1]) == len(shown) > 0
    for rec in shown.to_dict("records"):
        cells = rows[(rec["model"], rec["claim_id"], rec["condition"], rec["source"])]
        assert same(cells["this run"], rec["value"], int(rec["decimals"])), rec["claim_id"]
        assert cells["verdict"] == rec["verdict"]
    claims = keyed(page.tables["paper_claims"], 1)
    assert set(claims) == {(c,) for c in shown["claim_id"]}
    for rec in shown.drop_duplicates("claim_id").to_dict("records"):
        assert claims[(rec["claim_id"],)]["the paper says"] == rec["sentence"]
    # The claims reach the LLM entries only, never the reference models evaluated beside them.
    assert set(paper["model"]) == {target[0] for _, target in PAPER_STAND_INS}
    assert not set(paper["model"]) & set(REFERENCE_MODELS)
    # The leaderboard sets the LLMs apart from the reference models.
    _, blocks = _matrix_cells(page, "paper")
    assert [r[0] for r in blocks["llms"][1:]] == sorted({target[0] for _, target in PAPER_STAND_INS})
    assert {r[0] for r in blocks["references"][1:]} <= set(BUILTIN_NAMES["builtin"])


def test_report_of_empty_marts_says_what_fills_each_section_in_one_line(empty_home, tmp_path):
    home, run = empty_home
    assert run.returncode == 0, run.output[-4000:]
    report = build_report(home / "dbt" / "memsql.duckdb", tmp_path / "report")
    html = report.html.read_text(encoding="utf-8")
    # No figure and no empty table; the one section to open is the benchmark's guessability, from no partition.
    assert report.figures == {} and "<img" not in html and "no rows yet" not in html
    assert html.count("<table") == html.count("<details") == 1 and '<details id="section-guess_rate">' in html
    empty = [f"section-{s.key}" for s in SECTIONS if s.key != "guess_rate"]
    for key in ("matrix_paper-empty", "matrix_extended-empty", *empty):
        start = html.index(f'<p class="empty" id="{key}">')
        line = html[start : html.index("</p>", start)]
        assert "\n" not in line and "<code>memsql " in line, key
    assert "models.yaml" in html


def test_missing_database_is_a_clear_error(tmp_path):
    with pytest.raises(ReportError, match="does not exist"):
        build_report(tmp_path / "nope.duckdb", tmp_path / "out")


def test_summary_shows_the_interval_and_labels_samples(page, duckdb_path, report):
    rows = keyed(page.tables["summary"], 2)
    summary = mart(duckdb_path, "agg_condition_summary")
    assert set(rows) == set(PARTITIONS) and len(summary) == len(PARTITIONS)
    for rec in summary.to_dict("records"):
        cells = rows[(rec["model"], rec["condition"])]
        assert cells["EX 95% CI"] == f"{rec['ex_ci_lo_pct']:.1f}–{rec['ex_ci_hi_pct']:.1f}"
        assert cells["run"] == ("complete" if rec["is_complete"] else f"sample of {rec['n_sessions']} sessions")
        assert cells["EX 95% CI"] in report.summary_text


def test_pair_gaps_table_lists_the_gaps_whose_interval_excludes_zero(page, duckdb_path):
    gaps = mart(duckdb_path, "agg_model_pair_gaps")
    flagged = gaps[gaps["is_flagged"]]
    rows = keyed(page.tables["pair_gaps"], 4)
    assert len(rows) == len(flagged) > 0
    for rec in flagged.to_dict("records"):
        cells = rows[(rec["model_a"], rec["model_b"], rec["condition"], rec["source"])]
        assert cells["gap 95% CI"] == f"{rec['gap_ci_lo_pp']:.1f}–{rec['gap_ci_hi_pp']:.1f}"


def test_one_runs_interval_agrees_in_the_json_the_cli_the_marts_and_the_report(
    page, duckdb_path, report, metrics_home, capsys
):
    """gold under A answers every turn of its sessions: the interval `memsql eval --json` writes
    (summary.json), the CLI's line, agg_condition_summary and the report's cell are one interval,
    and it stays open below 100."""
    import json

    from memsql_assets.cli.render import print_evaluations
    from memsql_assets.lib.harness.results import partition_dir
    from memsql_assets.lib.harness.summary import SUMMARY_FILE, read_summary
    from memsql_assets.orchestration.outcome import EvaluationRun

    summary = json.loads((partition_dir(metrics_home, "gold", "A") / SUMMARY_FILE).read_text())
    lo, hi = summary["ex_strict_ci95"]
    assert summary["ex_strict"] == 100.0 and hi == 100.0 and 80 < lo < 100
    text = f"{lo:.1f}–{hi:.1f}"
    rec = mart(duckdb_path, "agg_condition_summary").set_index(["model", "condition"]).loc[("gold", "A")]
    assert rec["n_sessions"] == summary["sessions"]
    assert [rec["ex_ci_lo_pct"], rec["ex_ci_hi_pct"]] == pytest.approx([lo, hi], abs=1e-9)
    assert keyed(page.tables["summary"], 2)[("gold", "A")]["EX 95% CI"] == text
    published = read_summary(partition_dir(metrics_home, "gold", "A"))
    print_evaluations([EvaluationRun(model="gold", condition="A", success=True, summary=published)])
    assert text in capsys.readouterr().out
