"""The static report page: one self-contained HTML file (figures inlined as PNG data URIs)."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path

from memsql_assets.lib.report.figures import FIGURES
from memsql_assets.lib.report.fmt import Table
from memsql_assets.lib.viewer.server import viewer_url
from memsql_assets.lib.vocabulary import FLOOR_CONDITION, WINDOW_CONDITION

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td:first-child, td:nth-child(2) { text-align: left; }
img { max-width: 100%; border: 1px solid #eee; } .note { color: #666; font-size: 0.85em; }
#paper_claims td:last-child { text-align: left; max-width: 50em; }
"""

# Which figure goes with which table, in page order; tables not listed follow under "More tables".
SECTIONS: tuple[tuple[str, str | None, str], ...] = (
    ("Headline", None, "summary"),
    ("Headline: the extended benchmark", None, "extended_summary"),
    ("The two benchmarks side by side", None, "benchmarks"),
    ("Extended benchmark: phenomena", None, "extended_phenomena"),
    ("This run vs the paper", "paper", "paper"),
    ("Reference models", None, "reference"),
    ("Guessability", None, "guess_rate"),
    ("The paper's sentences", None, "paper_claims"),
    ("Reasoning vs standard mode", None, "reasoning"),
    ("EX by turn depth: A vs B", "per_turn_ex", "per_turn_ex"),
    ("Memory Benefit Score", "mbs_hook", "mbs"),
    ("Ablation", "ablation", "ablation"),
    ("Error taxonomy", "error_taxonomy", "error_taxonomy"),
    ("Contamination", "contamination", "contamination"),
    ("Tokens, latency and cost", "cost", "cost"),
    (f"Memory conditions against {WINDOW_CONDITION} and {FLOOR_CONDITION}", None, "contrasts"),
    ("The cost of memory", None, "memory_cost"),
    ("Agents", None, "agents"),
    ("Agents: AgentSM's measures", None, "agent_measures"),
)


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")


def render(tables: Sequence[Table], figures: Mapping[str, Path], subtitle: str) -> str:
    by_key = {t.key: t for t in tables}
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>memsql results report</title>',
        f"<style>{CSS}</style></head><body>",
        "<h1>memsql results report</h1>",
        f'<p class="note">{html.escape(subtitle)}</p>',
        f'<p class="note">Every turn behind these tables: run <code>memsql view</code>, then open '
        f'<a id="viewer-link" href="{viewer_url()}">{viewer_url()}</a>.</p>',
    ]
    used: set[str] = set()
    for heading, fig_key, table_key in SECTIONS:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        if fig_key is not None and fig_key in figures:
            alt = FIGURES[fig_key][0]
            parts.append(
                f'<img id="fig-{fig_key}" alt="{html.escape(alt)}" src="{data_uri(figures[fig_key])}">'
            )
        if table_key in by_key:
            parts.append(f"<h3>{html.escape(by_key[table_key].title)}</h3>")
            parts.append(by_key[table_key].to_html())
            used.add(table_key)
    rest = [t for t in tables if t.key not in used]
    if rest:
        parts.append("<h2>More tables</h2>")
        for t in rest:
            parts.append(f"<h3>{html.escape(t.title)}</h3>")
            parts.append(t.to_html())
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
