"""The reference agent's policy (`memsql/gold-agent`): model-free, deterministic, offline.

A scripted instrument, not a model: it knows the ground truth and explores only what its first
message does not already tell it, so its steps measure how much exploration a condition's prompt
leaves necessary, never what a model would do.

- With the schema in the prompt (a condition's `schema_in_prompt`), it submits at once: one step.
- Without it: list_tables, get_ddl of each table the ground-truth SQL reads, validate_result of the
  ground-truth SQL, then submit_sql with it.

Exploration that a trajectory in the prompt already did (the calls listed under its "## Explore"
headers, trajectories/markdown.py, that did not fail) is skipped, so under E it reuses what the
retrieved trajectory shows and explores the rest. The policy is a function of the messages alone:
the number of assistant steps already taken says where in the plan it stands, so a resumed turn
asks the same.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from memsql_assets.lib.agent.prompts import schema_in_prompt
from memsql_assets.lib.agent.tool_specs import SUBMIT_TOOL
from memsql_assets.lib.sql.syntax import sql_tables

AGENT_CONTEXT_FIELDS: tuple[str, ...] = ("gt_sql",)

Action = tuple[str, dict[str, Any]]

# One rendered call of a trajectory step: `tool` `{json args}` → observation
_CALL_RE = re.compile(r"`([A-Za-z_]\w*)` `(\{.*?\})` → (.*)$")
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
    """The steps of a turn without the schema in its prompt, skipping the `covered` explorations."""
    actions: list[Action] = []
    if ("list_tables", "") not in covered:
        actions.append(("list_tables", {}))
    actions += [("get_ddl", {"table": t}) for t in sql_tables(gt_sql) if ("get_ddl", t.lower()) not in covered]
    actions.append(("validate_result", {"sql": gt_sql}))
    actions.append((SUBMIT_TOOL, {"sql": gt_sql}))
    return actions


def next_action(prompt_texts: Sequence[str], steps_taken: int, gt_sql: str) -> Action:
    """The action of the agent's next step: `prompt_texts` are the system and user messages' texts,
    `steps_taken` the assistant messages so far."""
    if schema_in_prompt(prompt_texts):
        return (SUBMIT_TOOL, {"sql": gt_sql})
    actions = plan(gt_sql, explored_calls(prompt_texts))
    return actions[min(steps_taken, len(actions) - 1)]
