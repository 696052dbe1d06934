"""The reference agent's policy (`memsql/gold-agent`): model-free, deterministic, offline.

It proves the agent loop end to end and measures the steps a trajectory saves without a model:

1. explore: list_tables, get_ddl of each table the ground-truth SQL reads, a sample of the first;
2. validate: validate_result of the ground-truth SQL;
3. submit_sql with the ground-truth SQL.

Exploration that a trajectory in the prompt already did (the calls listed under its "## Explore"
headers, trajectories/markdown.py, that did not fail) is skipped, so with a trajectory that covers
the tables the agent takes fewer steps. The policy is a function of the messages alone: the number
of assistant steps already taken says where in the plan it stands, so a resumed turn asks the same.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

AGENT_CONTEXT_FIELDS: tuple[str, ...] = ("gt_sql",)
# The tool that ends an agent's turn with its final SQL (lib/agent/loop.py offers it).
SUBMIT_TOOL = "submit_sql"
SAMPLE_ROWS = 3

Action = tuple[str, dict[str, Any]]

# A table after FROM or JOIN: "quoted", [bracketed], `backticked` or bare.
_TABLE_RE = re.compile(r"\b(?:FROM|JOIN)\s+(\"[^\"]+\"|\[[^\]]+\]|`[^`]+`|[A-Za-z_][\w$]*)", re.I)
_CTE_RE = re.compile(r"(?:\bWITH(?:\s+RECURSIVE)?|,)\s*([A-Za-z_]\w*)\s+AS\s*\(", re.I)
# One rendered call of a trajectory step: `tool` `{json args}` → observation
_CALL_RE = re.compile(r"`([A-Za-z_]\w*)` `(\{.*?\})` → (.*)$")


def sql_tables(sql: str) -> list[str]:
    """The tables `sql` reads, in order of first appearance (common table expressions left out)."""
    ctes = {m.group(1).lower() for m in _CTE_RE.finditer(sql)}
    out: list[str] = []
    for m in _TABLE_RE.finditer(sql):
        raw = m.group(1)
        name = raw[1:-1] if raw[0] in '"[`' else raw
        if name.lower() not in ctes and name.lower() not in (t.lower() for t in out):
            out.append(name)
    return out


def explored_calls(texts: Sequence[str]) -> set[tuple[str, str]]:
    """(tool, table lowercased or "") of every call that succeeded under an Explore header."""
    covered: set[tuple[str, str]] = set()
    for text in texts:
        in_explore = False
        for line in text.splitlines():
            if line.startswith("## "):
                in_explore = line[3:].lower().startswith("explore")
                continue
            m = _CALL_RE.search(line) if in_explore else None
            if m is None or m.group(3).startswith("**error:**"):
                continue
            try:
                args = json.loads(m.group(2))
            except ValueError:
                continue
            covered.add((m.group(1), str(args.get("table", "")).lower()))
    return covered


def plan(gt_sql: str, covered: set[tuple[str, str]]) -> list[Action]:
    tables = sql_tables(gt_sql)
    actions: list[Action] = []
    if ("list_tables", "") not in covered:
        actions.append(("list_tables", {}))
    actions += [("get_ddl", {"table": t}) for t in tables if ("get_ddl", t.lower()) not in covered]
    if tables and ("sample_rows", tables[0].lower()) not in covered:
        actions.append(("sample_rows", {"table": tables[0], "n": SAMPLE_ROWS}))
    actions.append(("validate_result", {"sql": gt_sql}))
    actions.append((SUBMIT_TOOL, {"sql": gt_sql}))
    return actions


def next_action(prompt_texts: Sequence[str], steps_taken: int, gt_sql: str) -> Action:
    """The action of the agent's next step: `prompt_texts` are the system and user messages' texts,
    `steps_taken` the assistant messages so far."""
    actions = plan(gt_sql, explored_calls(prompt_texts))
    return actions[min(steps_taken, len(actions) - 1)]
