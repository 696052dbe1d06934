"""What the one-turn page adds to a turn row: the prompt as sent (from that turn's request store
record), both result previews (re-run read-only on the source) and why they differ, and a SQL diff."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import source_db_path
from memsql_assets.lib.sql.compare import rows_match
from memsql_assets.lib.sql.execute import QueryResult, run_query
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX

PREVIEW_ROWS = 20
# A user message is blocks separated by blank lines; a block starts with its heading ("Schema:").
_BLOCK_HEAD = re.compile(r"^([A-Z][\w ()/-]{1,40}):")


def prompt_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each message with its content split into titled blocks (the text itself unchanged)."""
    out = []
    for m in messages:
        content = str(m.get("content") or "")
        blocks = []
        for part in re.split(r"\n\s*\n", content):
            head = _BLOCK_HEAD.match(part)
            blocks.append({"title": head.group(1) if head else "", "text": part})
        out.append({"role": m.get("role", "?"), "blocks": blocks, "chars": len(content)})
    return out


def request_record(home: Path, key: str | None) -> dict[str, Any] | None:
    return RequestStore.at_home(home).get(key) if key else None


def preview(home: Path, source_prefix: str, sql: str | None) -> QueryResult | None:
    if not sql:
        return None
    conn = open_readonly(source_db_path(home, SOURCE_BY_PREFIX[source_prefix]))
    try:
        return run_query(conn, sql)
    finally:
        conn.close()


def why_different(model: QueryResult | None, truth: QueryResult | None) -> str:
    """One sentence: the first way the model's result departs from the ground truth's."""
    if truth is None or not truth.ok:
        return f"the ground truth failed: {truth.error if truth else 'no SQL'}"
    if model is None:
        return "no SQL was extracted from the reply"
    if not model.ok:
        return f"the model's SQL failed: {model.error}"
    if len(model.columns) != len(truth.columns):
        return f"{len(model.columns)} columns {model.columns}, the ground truth has {len(truth.columns)} {truth.columns}"
    if len(model.rows) != len(truth.rows):
        return f"{len(model.rows)} rows, the ground truth has {len(truth.rows)}"
    for i, (a, b) in enumerate(zip(model.rows, truth.rows, strict=True)):
        if not rows_match(a, b):
            for j, (x, y) in enumerate(zip(a, b, strict=True)):
                if not rows_match((x,), (y,)):
                    return f"row {i + 1}, column {truth.columns[j]}: {x!r}, the ground truth has {y!r}"
            return f"row {i + 1} differs"
    return "the results match"


def sql_diff(model_sql: str | None, gt_sql: str | None) -> list[tuple[str, str]]:
    """(kind, token line) pairs: SQL split at its clauses, so that a diff reads clause by clause."""

    def lines(sql: str | None) -> list[str]:
        return re.sub(
            r"\s+(?=(FROM|WHERE|JOIN|GROUP BY|ORDER BY|HAVING|LIMIT|UNION|SELECT)\b)", "\n", sql or ""
        ).split("\n")

    kinds = {"-": "model", "+": "truth", " ": "same"}
    return [(kinds[d[0]], d[2:]) for d in difflib.ndiff(lines(model_sql), lines(gt_sql)) if d[0] in kinds]


def parse_json(text: Any, default: Any) -> Any:
    """A JSON-text column's value (lists stored natively pass through)."""
    if not isinstance(text, str):
        return default if text is None else text
    try:
        return json.loads(text) if text else default
    except ValueError:
        return text
