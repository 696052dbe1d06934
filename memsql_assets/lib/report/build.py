"""build_report: marts → PNG figures + report.html + the text and markdown the CLI and Dagster show."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memsql_assets.lib.atomic import write_text_atomic
from memsql_assets.lib.report.figures import write_figures
from memsql_assets.lib.report.fmt import Table
from memsql_assets.lib.report.leaderboard import Leaderboard, leaderboard
from memsql_assets.lib.report.marts import Marts, load_marts
from memsql_assets.lib.report.page import data_uri, render
from memsql_assets.lib.report.tables import agents_table, all_tables, cascade_table, summary_table
from memsql_assets.lib.vocabulary import BENCHMARKS, EXTENDED_BENCHMARK

REPORT_FILE = "report.html"
REPORT_SUMMARY_FILE = "summary.txt"
FIGURE_DIR = "figures"


@dataclass(frozen=True)
class ReportPaths:
    """What build_report wrote, and the same content ready for a terminal and for Dagster metadata.

    leaderboards: each benchmark's model × condition matrix, the page's first section.
    tables: the leaderboards' tables, then the other tables, in page order.
    markdown: one markdown table per table (key → text), for MetadataValue.md.
    figure_markdown: one markdown image per figure with the PNG inlined as a data URI, for the UI
    (the PNG files themselves are in `figures`).
    """

    out_dir: Path
    html: Path
    summary_file: Path
    figures: Mapping[str, Path]
    leaderboards: tuple[Leaderboard, ...]
    tables: tuple[Table, ...]
    summary_text: str
    markdown: Mapping[str, str] = field(default_factory=dict)
    figure_markdown: Mapping[str, str] = field(default_factory=dict)


def _subtitle(m: Marts, duckdb_path: Path) -> str:
    versions = sorted(set(m.condition_summary["benchmark_version"].dropna()))
    n = len(m.condition_summary)
    return (
        f"{n} evaluated model × condition partition(s); benchmark version {', '.join(versions) or '–'}; "
        f"numbers from the dbt marts in {duckdb_path}."
    )


def build_report(duckdb_path: Path, out_dir: Path) -> ReportPaths:
    """Read the marts (read-only) and write out_dir/report.html, out_dir/figures/*.png, out_dir/summary.txt."""
    duckdb_path = Path(duckdb_path)
    out_dir = Path(out_dir)
    marts = load_marts(duckdb_path)
    figures = write_figures(marts, out_dir / FIGURE_DIR)
    boards = tuple(leaderboard(marts, b) for b in BENCHMARKS)
    tables = (*(b.table() for b in boards), *all_tables(marts))
    html_path = out_dir / REPORT_FILE
    write_text_atomic(html_path, render(boards, tables, figures, _subtitle(marts, duckdb_path)))
    summary = summary_table(marts).to_text()
    if not marts.extended_condition_summary.empty:  # both benchmarks' headlines, one after the other
        extended = summary_table(marts, EXTENDED_BENCHMARK)
        summary += f"\n\n{extended.title}:\n{extended.to_text()}"
    cascade = cascade_table(marts)
    if cascade.rows:  # one line per benchmark with a model evaluated with both histories
        summary += f"\n\n{cascade.title}:\n" + "\n".join(f"  {b}: {c}" for b, c in cascade.rows)
    agents = agents_table(marts)
    if agents.rows:  # the agent baseline against AgentSM, where both ran
        summary += f"\n\n{agents.title}:\n{agents.to_text()}"
    summary_path = out_dir / REPORT_SUMMARY_FILE
    write_text_atomic(summary_path, summary + "\n")
    return ReportPaths(
        out_dir=out_dir,
        html=html_path,
        summary_file=summary_path,
        figures=figures,
        leaderboards=boards,
        tables=tables,
        summary_text=summary,
        markdown={t.key: t.to_markdown() for t in tables},
        figure_markdown={k: f"![{k}]({data_uri(p)})" for k, p in figures.items()},
    )
