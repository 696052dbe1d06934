"""The static report page: one self-contained HTML file (figures inlined as PNG data URIs, no script,
nothing fetched). It opens with each benchmark's leaderboard as a heatmap; every other section is
one click down (<details>), and a section without data is one line saying what fills it."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memsql_assets.lib.conditions import CONDITIONS as CONDITION_TABLE
from memsql_assets.lib.report.figures import FIGURES
from memsql_assets.lib.report.fmt import Table
from memsql_assets.lib.report.leaderboard import Cell, Leaderboard, Row
from memsql_assets.lib.viewer.server import viewer_url
from memsql_assets.lib.vocabulary import (
    AGENT_BASELINE_CONDITION,
    AGENTSM_CONDITION,
    CROSS_SESSION_NOTE,
    EXTENDED_BENCHMARK,
    FLOOR_CONDITION,
    WINDOW_CONDITION,
)

# A sequential scale (ColorBrewer YlGnBu) for 0 → 100 %; text turns white past DARK.
HEAT = ("#ffffd9", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#0c2c84")
DARK = 0.6

CSS = """
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1200px; color: #222;
  padding: 0 1em; background: #fff; }
header { padding: 0.8em 1em 0.6em; margin: 0 -1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; }
summary h2 { display: inline; font-size: 1.05em; } summary .note { margin-left: 0.6em; }
h3 { font-size: 1em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td:first-child, td:nth-child(2) { text-align: left; }
img { max-width: 100%; border: 1px solid #eee; } .note { color: #666; font-size: 0.85em; }
#paper_claims td:last-child { text-align: left; max-width: 50em; }
details { border-top: 1px solid #ddd; padding: 0.45em 0; }
summary { cursor: pointer; } summary:hover h2 { text-decoration: underline; }
p.empty { border-top: 1px solid #ddd; margin: 0; padding: 0.45em 0; color: #666; font-size: 0.9em;
  line-height: 1.4; }
p.empty b { color: #444; }
code { background: #f4f4f4; padding: 0 0.25em; border-radius: 3px; }
.matrix { font-size: 0.95em; }
.matrix caption { caption-side: bottom; text-align: left; color: #666; font-size: 0.85em; padding-top: 0.3em; }
.matrix thead th:first-child { text-align: left; }
.matrix th[scope=row] { text-align: left; font-weight: 600; background: #fafafa; }
.matrix th[scope=col] { min-width: 5.5em; text-align: center; }
.matrix th[scope=rowgroup] { text-align: left; background: #fff; border-left: 0; border-right: 0;
  padding-top: 0.8em; font-size: 0.85em; text-transform: uppercase; letter-spacing: 0.04em; color: #555; }
.matrix td { text-align: center; min-width: 5.5em; line-height: 1.15; }
.matrix td:first-child { text-align: center; }
.matrix td .v { display: block; font-size: 1.1em; font-weight: 600; }
.matrix td .ci { display: block; font-size: 0.75em; opacity: 0.85; }
.matrix td.none { color: #aaa; background: #fff; }
.matrix th .sub { display: block; font-size: 0.7em; font-weight: 400; color: #666; }
.split-note { font-size: 0.85em; color: #444; margin: 0.3em 0; }
.matrix td.split { padding: 0.15em; background: #fff; }
.matrix td.split .pair { display: flex; flex-direction: column; gap: 2px; }
.matrix td.split .fig { padding: 0.1em 0.2em; }
.matrix td.split .counts { display: block; font-size: 0.7em; color: #555; padding-top: 0.15em; white-space: nowrap; }
.matrix td.hint { text-align: left; color: #555; background: #fff; }
.legend { display: flex; align-items: center; gap: 0.5em; font-size: 0.8em; color: #555; margin: 0.2em 0 1em; }
.legend .bar { width: 16em; height: 0.8em; border: 1px solid #ccc; }
"""


def _code(text: str) -> str:
    """Escape text, then set `…` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


@dataclass(frozen=True)
class Section:
    """One collapsible part of the page: its tables, optional figure, and what fills it when empty."""

    key: str
    heading: str
    tables: tuple[str, ...]
    fills: str  # one line; `…` is set as code
    figure: str | None = None


EVAL = "`memsql eval --model NAME --condition {}`"
FILL_A_MODEL = "add a model to models.yaml, then " + EVAL.format("B")
FILL_EXTENDED = f"evaluate on the extended benchmark: `memsql eval --benchmark {EXTENDED_BENCHMARK} --model NAME --condition B`"
SECTIONS: tuple[Section, ...] = (
    Section(
        "summary",
        "Every partition: the headline table",
        ("summary", "extended_summary"),
        "evaluate a model: " + EVAL.format(FLOOR_CONDITION),
    ),
    Section(
        "benchmarks",
        "The two benchmarks side by side",
        ("benchmarks",),
        f"evaluate a paper partition on the other benchmark too: `memsql eval --benchmark {EXTENDED_BENCHMARK} "
        "--model NAME --condition B`",
    ),
    Section(
        "extended_phenomena",
        "Extended benchmark: phenomena",
        ("extended_phenomena",),
        FILL_EXTENDED,
    ),
    Section(
        "paper",
        "This run vs the paper",
        ("paper", "paper_claims"),
        "the paper's claims are about its LLMs: give one of them (e.g. claude-sonnet-4.6 in models.yaml) "
        "its API key, then `memsql eval --model claude-sonnet-4.6 --condition B`",
        "paper",
    ),
    Section(
        "reference",
        "Reference models",
        ("reference",),
        "`memsql run` evaluates the reference models under every condition",
    ),
    Section("guess_rate", "Guessability", ("guess_rate",), "`memsql run` builds the benchmark and the marts"),
    Section(
        "reasoning",
        "Reasoning vs standard mode",
        ("reasoning",),
        "evaluate a model and its standard-mode entry under one condition, e.g. "
        "`memsql eval --model claude-sonnet-4.6-standard --condition B` beside claude-sonnet-4.6",
    ),
    Section(
        "per_turn_ex",
        "EX by turn depth",
        ("per_turn_ex", "per_turn_ex_all"),
        f"evaluate a model under A and B: {EVAL.format('A')}, then `--condition B`",
        "per_turn_ex",
    ),
    Section(
        "mbs",
        "Memory Benefit Score",
        ("mbs",),
        f"evaluate a model under A and a condition with memory: {EVAL.format('A')}, then `--condition B`",
        "mbs_hook",
    ),
    Section(
        "ablation",
        "Ablation",
        ("ablation",),
        f"evaluate a model under B, {WINDOW_CONDITION}, C and D: {EVAL.format('C')} …",
        "ablation",
    ),
    Section(
        "error_taxonomy",
        "Error taxonomy",
        ("error_taxonomy",),
        "evaluate a model: " + EVAL.format("B"),
        "error_taxonomy",
    ),
    Section(
        "contamination",
        "Contamination",
        ("contamination",),
        "evaluate a model under a condition with memory: " + EVAL.format("C"),
        "contamination",
    ),
    Section(
        "episodic_hit_rate",
        "Episodic memory by wave size",
        ("episodic_hit_rate",),
        "evaluate a model under C or D: `memsql eval --model NAME --condition C --wave-size 1`",
    ),
    Section("cost", "Tokens, latency and cost", ("cost",), "evaluate a model: " + EVAL.format("B"), "cost"),
    Section(
        "contrasts",
        f"Memory conditions against {WINDOW_CONDITION} and {FLOOR_CONDITION}",
        ("contrasts",),
        f"evaluate a model under {FLOOR_CONDITION}, {WINDOW_CONDITION} and another condition: "
        + EVAL.format("C"),
    ),
    Section(
        "memory_cost",
        "The cost of memory",
        ("memory_cost",),
        f"evaluate a model under {FLOOR_CONDITION} and a condition with memory: " + EVAL.format("C"),
    ),
    Section(
        "agents",
        "Agents",
        ("agents", "agent_measures"),
        f"evaluate a model under {AGENT_BASELINE_CONDITION} and {AGENTSM_CONDITION}: "
        f"{EVAL.format(AGENT_BASELINE_CONDITION)}, then `--condition {AGENTSM_CONDITION}`",
    ),
    Section(
        "by_source",
        "EX by source and tier",
        ("ex_by_source", "ex_by_source_tier"),
        "evaluate a model: " + EVAL.format("B"),
    ),
    Section(
        "comparator_sensitivity",
        "Comparator sensitivity",
        ("comparator_sensitivity",),
        "evaluate a model: " + EVAL.format("B"),
    ),
    Section(
        "pair_gaps",
        "Model pairs whose gap is real",
        ("pair_gaps",),
        "evaluate a second model under a condition the first ran: " + EVAL.format("B"),
    ),
)


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")


def heat(value: float) -> tuple[str, str]:
    """Background and text colour of a cell showing `value` %."""
    t = min(max(value / 100.0, 0.0), 1.0) * (len(HEAT) - 1)
    i = min(int(t), len(HEAT) - 2)
    a, b = (tuple(int(c[k : k + 2], 16) for k in (1, 3, 5)) for c in HEAT[i : i + 2])
    rgb = "".join(f"{round(x + (y - x) * (t - i)):02x}" for x, y in zip(a, b, strict=True))
    return f"#{rgb}", "#fff" if t / (len(HEAT) - 1) > DARK else "#111"


def _cell(model: str, condition: str, cell: Cell | None) -> str:
    if cell is None or cell.value is None:
        title = html.escape(f"{model} · {condition}: not evaluated")
        return f'<td class="none" data-condition="{condition}" title="{title}">–</td>'
    if cell.across is not None:
        return _split_cell(model, condition, cell, cell.across)
    bg, fg = heat(cell.value)
    title = (
        f"{model} · {condition}: memory-critical EX {cell.value_text} %, 95 % interval "
        f"{cell.interval_text}; {cell.run}"
    )
    return (
        f'<td data-condition="{condition}" style="background:{bg};color:{fg}" title="{html.escape(title)}">'
        f'<span class="v">{cell.value_text}</span> <span class="ci">{cell.interval_text}</span></td>'
    )


def _figure(kind: str, figure: Cell) -> str:
    """One of a split cell's figures, on its own heat colour."""
    bg, fg = ("#fff", "#aaa") if figure.value is None else heat(figure.value)
    return (
        f'<span class="fig {kind}" style="background:{bg};color:{fg}"><span class="v">{figure.value_text}</span>'
        f'<span class="ci">{figure.interval_text}</span></span>'
    )


def _split_cell(model: str, condition: str, within: Cell, across: Cell) -> str:
    """The extended matrix's cell: within a session | across sessions, the counts under them."""
    title = (
        f"{model} · {condition}: memory-critical EX within a session {within.value_text} % "
        f"({within.interval_text}), EX across sessions {across.value_text} % ({across.interval_text}), "
        f"95 % intervals over turns; {within.counts_text}; {within.run}"
    )
    return (
        f'<td class="split" data-condition="{condition}" title="{html.escape(title)}">'
        f'<span class="pair">{_figure("within", within)}{_figure("across", across)}</span>'
        f'<span class="counts">{within.contaminated} ({within.contaminated_across}) cont.<br>{within.stale} stale</span></td>'
    )


def _block(board: Leaderboard, kind: str, label: str, rows: tuple[Row, ...], empty: str) -> str:
    width = len(board.conditions) + 1
    out = [
        f'<tbody id="{board.key}-{kind}">',
        f'<tr><th scope="rowgroup" colspan="{width}">{label}</th></tr>',
    ]
    if not rows:
        out.append(f'<tr><td class="hint" colspan="{width}">{_code(empty)}</td></tr>')
    for model, cells in rows:
        tds = "".join(_cell(model, c, cell) for c, cell in zip(board.conditions, cells, strict=True))
        out.append(
            f'<tr data-model="{html.escape(model)}"><th scope="row">{html.escape(model)}</th>{tds}</tr>'
        )
    out.append("</tbody>")
    return "\n".join(out)


def _condition_header(condition: str, split: bool) -> str:
    spec = CONDITION_TABLE.get(condition)
    title = f' title="{html.escape(spec.description)}"' if spec is not None and spec.description else ""
    sub = '<span class="sub">within, across</span>' if split else ""
    return f'<th scope="col"{title}>{html.escape(condition)}{sub}</th>'


def leaderboard_html(board: Leaderboard) -> str:
    if board.is_empty:
        fills = FILL_EXTENDED if board.benchmark == EXTENDED_BENCHMARK else FILL_A_MODEL
        return (
            f'<p class="empty" id="{board.key}-empty"><b>{html.escape(board.title)}</b>: no partition yet; '
            f"{_code(fills)}.</p>"
        )
    head = "".join(_condition_header(c, board.split) for c in board.conditions)
    return "\n".join(
        [
            f"<h2>{html.escape(board.title)}</h2>",
            f'<table class="matrix" id="{board.key}">',
            f"<caption>{html.escape(board.caption())}</caption>",
            f'<thead><tr><th scope="col">model</th>{head}</tr></thead>',
            _block(board, "llms", "Evaluated LLMs", board.llms, "none yet: " + FILL_A_MODEL),
            _block(
                board,
                "references",
                "Reference models (offline: bounds and floors, not contestants)",
                board.references,
                "none yet: `memsql run` evaluates them",
            ),
            "</table>",
            _split_note(board),
            _legend(),
        ]
    )


def _split_note(board: Leaderboard) -> str:
    """What separates the extended matrix's two figures, in two lines."""
    if not board.split:
        return ""
    lines = "<br>".join(html.escape(line) for line in CROSS_SESSION_NOTE)
    return f'<p class="split-note" id="{board.key}-note">{lines}</p>'


def _legend() -> str:
    stops = ", ".join(f"{c} {100 * i / (len(HEAT) - 1):.0f}%" for i, c in enumerate(HEAT))
    return (
        '<div class="legend" aria-hidden="true"><span>0 %</span>'
        f'<span class="bar" style="background:linear-gradient(to right, {stops})"></span><span>100 %</span></div>'
    )


def _section(section: Section, by_key: Mapping[str, Table], figures: Mapping[str, Path]) -> str:
    tables = [by_key[k] for k in section.tables if k in by_key and by_key[k].rows]
    figure = figures.get(section.figure) if section.figure else None
    if not tables and figure is None:
        return (
            f'<p class="empty" id="section-{section.key}"><b>{html.escape(section.heading)}</b>: no data yet; '
            f"{_code(section.fills)}.</p>"
        )
    contents = (
        [f"{len(tables[0].rows)} rows" if len(tables) == 1 else f"{len(tables)} tables"] if tables else []
    )
    contents += ["a figure"] if figure is not None else []
    parts = [
        f'<details id="section-{section.key}">',
        f'<summary><h2>{html.escape(section.heading)}</h2><span class="note">{", ".join(contents)}</span></summary>',
    ]
    if figure is not None:
        alt = FIGURES[section.figure][0]
        parts.append(f'<img id="fig-{section.figure}" alt="{html.escape(alt)}" src="{data_uri(figure)}">')
    for t in tables:
        parts += [f"<h3>{html.escape(t.title)}</h3>", t.to_html()]
    parts.append("</details>")
    return "\n".join(parts)


def render(
    boards: Sequence[Leaderboard], tables: Sequence[Table], figures: Mapping[str, Path], subtitle: str
) -> str:
    by_key = {t.key: t for t in tables}
    placed = {k for s in SECTIONS for k in s.tables} | {b.key for b in boards}
    rest = tuple(t.key for t in tables if t.key not in placed)
    sections = SECTIONS + ((Section("more", "More tables", rest, FILL_A_MODEL),) if rest else ())
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>memsql results report</title>',
        f"<style>{CSS}</style></head><body>",
        '<header id="top">',  # the first screen: what scripts/report_screenshot.py captures
        "<h1>memsql results report</h1>",
        f'<p class="note">{html.escape(subtitle)}</p>',
        f'<p class="note">Every turn behind these tables: run <code>memsql view</code>, then open '
        f'<a id="viewer-link" href="{viewer_url()}">{viewer_url()}</a>.</p>',
        *(leaderboard_html(b) for b in boards),
        "</header>",
        *(_section(s, by_key, figures) for s in sections),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
