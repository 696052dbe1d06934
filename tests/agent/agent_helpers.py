"""Shared by the agent-loop tests: a registry with the reference agent and an HTTP model, a gateway."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from memsql_assets.lib.models.gateway import ModelGateway, ModelReply, RetryPolicy
from memsql_assets.lib.models.registry import Registry, load_registry
from memsql_assets.lib.models.request_store import RequestStore, evaluation_cell
from memsql_assets.lib.trajectories.markdown import render_markdown
from memsql_assets.lib.trajectories.tools import DbTools
from memsql_assets.lib.trajectories.trace import Step, Trace

# Reads loan, account and district of bird_financial (three tables, two joins).
GT_SQL = (
    "SELECT COUNT(*) AS n FROM loan l JOIN account a ON a.account_id = l.account_id "
    "JOIN district d ON d.district_id = a.district_id WHERE d.A3 = 'Prague'"
)
CELL = evaluation_cell("agent", "T", "BIRD-1-001#1")
TURN = {"gt_sql": GT_SQL}


def registry(tmp_path: Path, api_base: str = "http://127.0.0.1:9/v1") -> Registry:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "models.yaml"
    path.write_text(
        textwrap.dedent(
            f"""
            models:
              gold-agent:
                litellm_model: memsql/gold-agent
                kind: builtin
                reasoning: {{type: none}}
                max_concurrency: 1
                price_per_mtok: {{input: 0, output: 0}}
                enabled: true
              http-agent:
                litellm_model: openai/scripted-agent
                kind: api
                reasoning: {{type: none}}
                api_base: "{api_base}"
                max_concurrency: 1
                price_per_mtok: {{input: 1, output: 1}}
                enabled: true
            """
        ),
        encoding="utf-8",
    )
    return load_registry(path)


def gateway(home: Path, reg: Registry) -> ModelGateway:
    retry = RetryPolicy(max_attempts=1, max_connect_attempts=1, jitter=False)
    return ModelGateway(reg, RequestStore.at_home(home), home=home, retry=retry, environ={})


def turn_messages(extra: str = "") -> list[dict[str, str]]:
    question = "How many loans belong to accounts of districts whose A3 is Prague?"
    return [
        {"role": "system", "content": "You are an expert SQLite analyst."},
        {"role": "user", "content": f"{extra}\n\nQuestion: {question}".strip()},
    ]


def explored_trajectory(tools: DbTools) -> str:
    """A trajectory of real calls whose explore segment covers the ground truth's tables."""
    calls = [("list_tables", {})] + [("get_ddl", {"table": t}) for t in ("loan", "account", "district")]
    calls += [("sample_rows", {"table": "loan", "n": 3}), ("get_ddl", {"table": "nope"})]
    steps = [Step(c.tool, c.args, c.observation, c.error) for c in (tools.call(t, a) for t, a in calls)]
    steps.append(Step("execute_sql", {"sql": GT_SQL}, tools.call("execute_sql", {"sql": GT_SQL}).observation))
    return render_markdown(Trace("bird_financial-0", "bird_financial", "q", tuple(steps), GT_SQL, True))


class Scripted:
    """A model that answers each step with the next scripted reply and records what it was sent."""

    def __init__(self, *replies: ModelReply):
        self.replies = list(replies)
        self.seen: list[list[dict]] = []
        self.offered: list[list[str]] = []

    async def __call__(self, messages, tools):
        self.seen.append(messages)
        self.offered.append([t["function"]["name"] for t in tools])
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def reply(*calls: tuple[str, object], text: str = "", error: str | None = None) -> ModelReply:
    """A reply with these (tool, arguments) calls; arguments that are not text are sent as JSON."""
    tool_calls = tuple(
        {"id": f"c{i}", "name": n, "arguments": a if isinstance(a, str) else json.dumps(a)}
        for i, (n, a) in enumerate(calls)
    )
    return ModelReply(
        text, "", 5, 3, 0.01, 0.0, False, 1, error, error and "boom", "k" * 64, tool_calls=tool_calls
    )
