"""Synthetic questions written by an LLM from the model registry (the alternative to the grammar).

The model sees the schema and is asked for (question, SQL) pairs as JSON. Nothing it writes is
trusted: every SQL runs on the sandboxed read-only connection and must return a non-empty,
not-all-NULL result; benchmark questions, near copies of them and duplicates are dropped, as for
the grammar.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.schema import schema_text, user_tables
from memsql_assets.lib.trajectories.explorer import Propose
from memsql_assets.lib.trajectories.leakage import LeakageGuard, normalize_question
from memsql_assets.lib.trajectories.synthetic_question import SyntheticQuestion

INSTRUCTIONS = (
    "You write practice questions for a text-to-SQL agent. Given a SQLite schema, reply with a JSON "
    'array only: [{"question": "...", "sql": "..."}]. Each question is one an analyst would ask; each '
    "sql is one valid SQLite SELECT that answers it on this schema and returns at least one row."
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_pairs(reply: str) -> list[tuple[str, str]]:
    """The (question, sql) pairs in a reply; anything malformed is skipped, never fatal."""
    fenced = _FENCE.search(reply)
    text = fenced.group(1) if fenced else reply
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return []
    try:
        items = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return []
    pairs = []
    for item in items if isinstance(items, list) else []:
        if (
            isinstance(item, dict)
            and isinstance(item.get("question"), str)
            and isinstance(item.get("sql"), str)
        ):
            pairs.append((item["question"].strip(), item["sql"].strip().rstrip(";")))
    return pairs


def generate_questions_llm(
    db_name: str,
    db_path: Path,
    n: int,
    propose: Propose,
    exclude_questions: set[str] | frozenset[str] = frozenset(),
    max_rounds: int = 3,
) -> list[SyntheticQuestion]:
    guard = LeakageGuard(exclude_questions)
    schema = schema_text(db_path)
    conn = open_readonly(db_path)
    tables = user_tables(conn)
    out: list[SyntheticQuestion] = []
    seen: set[str] = set()
    try:
        for _ in range(max_rounds):
            if len(out) >= n:
                break
            ask = f"Schema:\n{schema}\n\nWrite {n - len(out)} different questions with their SQL."
            reply = propose([{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": ask}])
            for question, sql in parse_pairs(reply):
                key = normalize_question(question)
                if not question or key in seen or len(out) >= n or guard.blocks(question):
                    continue
                result = run_query(conn, sql, timeout_s=5.0, row_cap=1000)
                if not result.ok or not result.rows or all(v is None for row in result.rows for v in row):
                    continue
                seen.add(key)
                digest = hashlib.sha256(f"{db_name}\n{question}\n{sql}".encode()).hexdigest()[:12]
                used = tuple(t for t in tables if re.search(rf"\b{re.escape(t)}\b", sql, re.IGNORECASE))
                out.append(SyntheticQuestion(f"{db_name}-llm-{digest}", db_name, question, sql, "llm", used))
    finally:
        conn.close()
    return out
