"""Exploration agents that turn a synthetic question into a trace of real tool calls.

`DeterministicExplorer` (the default, so the store builds offline) follows a fixed policy that
mimics what agents do on an unfamiliar database:

1. explore: list_tables; get_ddl + sample_rows for each table the question mentions; the
   distinct values of a filtered column (does the value exist?); sometimes column_stats of a
   measured column; for a join question, join discovery: the foreign key of each hop
   (find_join_path), the DDL of each table reached and a three-row sample of the join;
2. execute: run the drafted SQL. For a join question it may (deterministically, by question id
   and seed) first draft the join-less variant after exploring only the first table; that fails
   with a real "no such column" error, and the agent re-explores (join discovery as above)
   before executing the correct query — exploration re-entered after an error;
3. validate: validate_result, sometimes a COUNT(*) sanity query around the answer.

Given composite tools, the explorer executes the same policy but merges every stretch of planned
calls that matches a composite (same tools, same phase; longest first) into one composite step.

`LlmExplorer` lets a model choose tools: `propose(messages) -> str` returns one JSON object per
turn, either {"tool": name, "args": {...}} or {"final_sql": "..."}. The model gateway is plugged in
by the caller; unit tests use a scripted callable.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from memsql_assets.lib.sql.schema import SchemaStats
from memsql_assets.lib.trajectories.composites import CompositeTool
from memsql_assets.lib.trajectories.phases import RuleSet, default_rules
from memsql_assets.lib.trajectories.synthetic_question import SyntheticQuestion
from memsql_assets.lib.trajectories.tools import TOOL_NAMES, DbTools
from memsql_assets.lib.trajectories.trace import Call, Step, Trace, clip

Plan = list[tuple[str, dict[str, Any]]]
Propose = Callable[[list[dict[str, str]]], str]


class Explorer(Protocol):
    name: str

    def explore(self, question: SyntheticQuestion, tools: DbTools) -> Trace: ...


def mentioned_tables(text: str, stats: SchemaStats) -> list[str]:
    """Tables named in the question, in order of first mention (whole-word, case-insensitive)."""
    hits = []
    for t in stats.tables:
        m = re.search(rf"(?<![\w]){re.escape(t.name)}(?![\w])", text, re.I)
        if m:
            hits.append((m.start(), t.name))
    return [name for _, name in sorted(hits)]


def run_plan(plan: Plan, tools: DbTools, composites: Sequence[CompositeTool], rules: RuleSet) -> list[Step]:
    """Execute planned calls; stretches matching a composite (longest first) become one step."""
    ordered = sorted(composites, key=lambda c: (-len(c.steps), -c.count, c.name))
    steps: list[Step] = []
    i = 0
    while i < len(plan):
        match = None
        for comp in ordered:
            window = plan[i : i + len(comp.steps)]
            if (
                len(window) == len(comp.steps)
                and tuple(t for t, _ in window) == comp.steps
                and all(rules.classify_call(t, a) == comp.phase for t, a in window)
            ):
                match = comp
                break
        if match is None:
            call = tools.call(*plan[i])
            steps.append(Step(call.tool, call.args, call.observation, call.error))
            i += 1
            continue
        calls = tuple(tools.call(t, a) for t, a in plan[i : i + len(match.steps)])
        errors = [f"{c.tool}: {c.error}" for c in calls if c.error]
        obs = clip(" | ".join(f"{c.tool}: {c.observation or c.error}" for c in calls))
        steps.append(Step(match.name, {}, obs, clip("; ".join(errors)) if errors else None, calls))
        i += len(match.steps)
    return steps


@dataclass
class DeterministicExplorer:
    seed: int = 0
    composites: Sequence[CompositeTool] = ()
    rules: RuleSet = field(default_factory=default_rules)
    naive_rate: float = 0.5
    stats_rate: float = 0.5
    sanity_rate: float = 0.35
    name: str = "deterministic"

    def explore(self, question: SyntheticQuestion, tools: DbTools) -> Trace:
        rng = random.Random(f"memsql-explorer:{self.seed}:{question.id}")
        mentioned = mentioned_tables(question.text, tools.stats) or list(question.tables)
        naive = question.naive_sql is not None and rng.random() < self.naive_rate
        first = [question.tables[0]] if naive else mentioned
        filters = {(t, c) for t, c, _ in question.values}

        def probe(tables: Sequence[str], with_sample: bool) -> Plan:
            plan: Plan = []
            for t in tables:
                plan.append(("get_ddl", {"table": t}))
                if with_sample:
                    plan.append(("sample_rows", {"table": t, "n": 3}))
            return plan + values(tables)

        def values(tables: Sequence[str]) -> Plan:
            return [
                ("distinct_values", {"table": t, "column": c, "limit": 10})
                for t, c in sorted(filters)
                if t in tables
            ]

        plan: Plan = [("list_tables", {})] + probe(first, True)
        for t, c in question.columns:
            if t in first and (t, c) not in filters and rng.random() < self.stats_rate:
                plan.append(("column_stats", {"table": t, "column": c}))
        if not naive:
            plan += discover_joins(question, first)
        steps = run_plan(plan, tools, self.composites, self.rules)
        if naive:
            assert question.naive_sql is not None
            steps += run_plan(
                [("execute_sql", {"sql": question.naive_sql})], tools, self.composites, self.rules
            )
            recover = discover_joins(question, first)
            recover += values([t for t in question.tables if t not in first])
            steps += run_plan(recover, tools, self.composites, self.rules)
        checks: Plan = [("validate_result", {"sql": question.sql})]
        if rng.random() < self.sanity_rate:
            checks.append(("execute_sql", {"sql": f"SELECT COUNT(*) AS n FROM ({question.sql})"}))
        steps += run_plan([("execute_sql", {"sql": question.sql})], tools, self.composites, self.rules)
        steps += run_plan(checks, tools, self.composites, self.rules)
        return Trace(
            question_id=question.id,
            db=question.db,
            question=question.text,
            steps=tuple(steps),
            final_sql=question.sql,
            final_sql_ok=_final_ok(steps, question.sql),
            explorer=self.name,
        )


# the answer's join, as the grammar writes it: "FROM A t0 JOIN B t1 ON … JOIN C t2 ON …"
_JOIN_FROM = re.compile(
    r"\bFROM\s+((?:\"[^\"]+\"|\w+)\s+t0(?:\s+JOIN\s+(?:\"[^\"]+\"|\w+)\s+t\d+\s+ON\s+[^()]+?)+)"
    r"(?=\s+WHERE\b|\s+GROUP\s+BY\b|\s*\)|\s*$)",
    re.I,
)


def discover_joins(question: SyntheticQuestion, known: Sequence[str]) -> Plan:
    """Join discovery: the foreign key of each hop (find_join_path), the DDL of each table not yet
    read, then a three-row sample of the joined tables (does the join match rows?)."""
    tables = list(question.tables)
    if len(tables) < 2:
        return []
    plan: Plan = []
    for a, b in itertools.pairwise(tables):
        plan.append(("find_join_path", {"source": a, "target": b}))
        if b not in known:
            plan.append(("get_ddl", {"table": b}))
    joined = _JOIN_FROM.search(question.sql)
    if joined:
        plan.append(("execute_sql", {"sql": f"SELECT * FROM {joined.group(1)} LIMIT 3"}))
    return plan


def _final_ok(steps: Sequence[Step], sql: str) -> bool:
    """The answer ran without error and its validation passed."""
    calls = [c for s in steps for c in s.primitive_calls()]
    ran = [c for c in calls if c.tool == "execute_sql" and c.args.get("sql") == sql]
    checked = [c for c in calls if c.tool == "validate_result" and c.args.get("sql") == sql]
    return bool(ran) and all(c.error is None for c in ran) and all(c.error is None for c in checked)


LLM_SYSTEM = (
    "You explore a SQLite database to answer a question. Reply with exactly one JSON object per turn: "
    '{"tool": NAME, "args": {...}} to call a tool, or {"final_sql": "..."} when done. Tools: '
    "list_tables(); get_ddl(table); sample_rows(table, n); distinct_values(table, column, limit); "
    "column_stats(table, column); find_join_path(source, target); execute_sql(sql); validate_result(sql)."
)


def parse_action(reply: str) -> dict[str, Any] | None:
    """The first JSON object in a model reply (models wrap JSON in prose or code fences)."""
    start = reply.find("{")
    while start != -1:
        try:
            obj, _ = json.JSONDecoder().raw_decode(reply[start:])
        except json.JSONDecodeError:
            start = reply.find("{", start + 1)
            continue
        return obj if isinstance(obj, dict) else None
    return None


@dataclass
class LlmExplorer:
    propose: Propose
    max_steps: int = 15
    composites: Sequence[CompositeTool] = ()
    name: str = "llm"

    def explore(self, question: SyntheticQuestion, tools: DbTools) -> Trace:
        system = LLM_SYSTEM
        if self.composites:
            system += ' Composite tools (args: {"calls": [args of each step]}): ' + "; ".join(
                f"{c.name} = {' + '.join(c.steps)}" for c in self.composites
            )
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": f"Database: {question.db}\nQuestion: {question.text}"},
        ]
        by_name = {c.name: c for c in self.composites}
        steps: list[Step] = []
        final_sql: str | None = None
        for _ in range(self.max_steps):
            reply = self.propose(list(messages))
            messages.append({"role": "assistant", "content": reply})
            action = parse_action(reply)
            if action is not None and isinstance(action.get("final_sql"), str):
                final_sql = action["final_sql"]
                break
            step = self._act(action, tools, by_name)
            steps.append(step)
            messages.append(
                {
                    "role": "user",
                    "content": f"Observation: {step.observation}"
                    + (f"\nError: {step.error}" if step.error else ""),
                }
            )
        ok = False
        if final_sql is not None:
            check = tools.call("validate_result", {"sql": final_sql})
            ok = check.error is None
        return Trace(question.id, question.db, question.text, tuple(steps), final_sql, ok, self.name)

    def _act(self, action: dict[str, Any] | None, tools: DbTools, by_name: dict[str, CompositeTool]) -> Step:
        if action is None or not isinstance(action.get("tool"), str):
            return Step(
                "invalid_action", {}, "", 'expected {"tool": ..., "args": {...}} or {"final_sql": ...}'
            )
        tool, args = action["tool"], action.get("args") or {}
        if not isinstance(args, dict):
            return Step(tool, {}, "", "args must be a JSON object")
        comp = by_name.get(tool)
        if comp is None:
            call = tools.call(tool, args)
            return Step(call.tool, call.args, call.observation, call.error)
        sub = args.get("calls") or [{} for _ in comp.steps]
        if not isinstance(sub, list) or len(sub) != len(comp.steps):
            return Step(tool, args, "", f"{tool} needs 'calls': a list of {len(comp.steps)} argument objects")
        calls: tuple[Call, ...] = tuple(
            tools.call(t, a if isinstance(a, dict) else {}) for t, a in zip(comp.steps, sub, strict=True)
        )
        errors = [f"{c.tool}: {c.error}" for c in calls if c.error]
        obs = clip(" | ".join(f"{c.tool}: {c.observation or c.error}" for c in calls))
        return Step(tool, {}, obs, clip("; ".join(errors)) if errors else None, calls)


def make_explorer(
    kind: str = "deterministic",
    *,
    seed: int = 0,
    composites: Sequence[CompositeTool] = (),
    propose: Propose | None = None,
    max_steps: int = 15,
) -> Explorer:
    """The configuration switch: 'deterministic' (offline default) or 'llm' (needs `propose`)."""
    if kind == "deterministic":
        return DeterministicExplorer(seed=seed, composites=composites)
    if kind == "llm":
        if propose is None:
            raise ValueError("explorer 'llm' needs a propose(messages) -> str callable (the model gateway)")
        return LlmExplorer(propose=propose, max_steps=max_steps, composites=composites)
    raise ValueError(f"unknown explorer kind {kind!r}; expected 'deterministic' or 'llm'")


__all__ = ["TOOL_NAMES", "DeterministicExplorer", "Explorer", "LlmExplorer", "make_explorer", "run_plan"]
