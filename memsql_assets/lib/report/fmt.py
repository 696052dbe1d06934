"""Number formats and the Table shape shared by the HTML page, the Dagster markdown and the CLI text.

Every rendering of a table goes through the same formatted cells, so the HTML, the UI and the
terminal cannot show different numbers for one mart value.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import pandas as pd

from memsql_assets.lib.evaluation.interval import interval_text

MISSING = "–"


def is_missing(v: Any) -> bool:
    """None, NaN, NaT or pd.NA: what a null in a mart becomes in a DataFrame."""
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def pct(v: Any) -> str:
    """A percentage (0–100) with one decimal: 83.2."""
    return MISSING if is_missing(v) else f"{float(v):.1f}"


def pp(v: Any) -> str:
    """A difference in percentage points, signed: +12.5, -3.0, +0.0."""
    return MISSING if is_missing(v) else f"{float(v):+.1f}"


def count(v: Any) -> str:
    return MISSING if is_missing(v) else f"{int(v):,}"


def usd(v: Any) -> str:
    return MISSING if is_missing(v) else f"{float(v):.4f}"


def seconds(v: Any) -> str:
    return MISSING if is_missing(v) else f"{float(v):.3f}"


def number(v: Any) -> str:
    """A mean of counts (tokens per turn): one decimal, thousands separated."""
    return MISSING if is_missing(v) else f"{float(v):,.1f}"


def interval(lo: Any, hi: Any) -> str:
    """A 95 % interval, one decimal: 71.2–84.0."""
    return MISSING if is_missing(lo) or is_missing(hi) else interval_text(float(lo), float(hi))


def flag(v: Any) -> str:
    return MISSING if is_missing(v) else ("yes" if bool(v) else "no")


@dataclass(frozen=True)
class Table:
    """A titled table of already-formatted cells; `key` is its HTML id and its metadata name."""

    key: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""

    def to_markdown(self) -> str:
        def esc(s: str) -> str:
            return s.replace("|", "\\|")

        lines = [f"**{self.title}**", ""]
        if not self.rows:
            lines.append("_no rows yet_")
        else:
            lines.append("| " + " | ".join(esc(c) for c in self.columns) + " |")
            lines.append("|" + "|".join("---" for _ in self.columns) + "|")
            lines.extend("| " + " | ".join(esc(c) for c in row) + " |" for row in self.rows)
        if self.note:
            lines += ["", f"_{self.note}_"]
        return "\n".join(lines)

    def to_html(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "\n".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self.rows
        )
        if not self.rows:
            body = f'<tr><td colspan="{len(self.columns)}">no rows yet</td></tr>'
        note = f'<p class="note">{html.escape(self.note)}</p>' if self.note else ""
        return (
            f'<table id="{html.escape(self.key)}">\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>\n{note}"
        )

    def to_text(self) -> str:
        """Fixed-width columns for a terminal."""
        if not self.rows:
            return f"{self.title}: no rows yet"
        widths = [max(len(c), *(len(r[i]) for r in self.rows)) for i, c in enumerate(self.columns)]

        def line(cells: tuple[str, ...]) -> str:
            return "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            ).rstrip()

        return "\n".join([line(self.columns), *(line(r) for r in self.rows)])
