"""A short text of a query result: what memory payloads and the answer checks show of it."""

from __future__ import annotations

from memsql_assets.lib.sql.execute import QueryResult

SUMMARY_MAX_CHARS = 300


def summarize_result(result: QueryResult | None, raw_output: str | None = None) -> str:
    """A short text of a result for memory payloads: row count, columns, first rows (<= 300 chars)."""
    if result is None:
        text = "no SQL" if raw_output and raw_output.strip() else "no output"
    elif not result.ok:
        text = f"error: {result.error}"
    else:
        rows = result.rows or []
        head = f"{len(rows)}{'+' if result.truncated else ''} row{'s' if len(rows) != 1 else ''}"
        cols = ", ".join(result.columns)
        shown = "; ".join("(" + ", ".join(map(str, row)) + ")" for row in rows[:5])
        text = f"{head} [{cols}]" + (f": {shown}" if shown else "")
        if len(rows) > 5:
            text += "; …"
    if len(text) > SUMMARY_MAX_CHARS:
        text = text[: SUMMARY_MAX_CHARS - 1] + "…"
    return text
