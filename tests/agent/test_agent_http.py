"""The agent loop through litellm's real HTTP client against a scripted OpenAI-compatible server
running as its own process: multi-step tool calls (one step with two), then a final text answer."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from agent_helpers import CELL, TURN, gateway, registry, turn_messages

from memsql_assets.lib.agent.loop import CallOutcome, TurnOutcome, gateway_complete, run_agent, trace_json
from memsql_assets.lib.agent.turn_tools import TurnTools

SERVER = Path(__file__).with_name("scripted_chat_server.py")
FINAL = "SELECT COUNT(*) FROM loan WHERE status = 'A'"
SCRIPT = [
    {"tool_calls": [["list_tables", "{}"]]},
    {
        "tool_calls": [
            ["get_ddl", '{"table": "loan"}'],
            ["distinct_values", '{"table": "loan", "column": "status"}'],
        ]
    },
    {"tool_calls": [["execute_sql", json.dumps({"sql": FINAL})]]},
    {"content": f"The answer:\n```sql\n{FINAL}\n```"},
]


@pytest.fixture()
def server(tmp_path):
    script, log = tmp_path / "script.json", tmp_path / "requests.jsonl"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), str(script), str(log)], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1", log
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def requests(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def test_tool_calls_through_http_then_a_final_answer_and_a_replay_without_calls(server, tmp_path, bird):
    url, log = server
    reg = registry(tmp_path / "home", url)

    def turn():
        gw = gateway(tmp_path / "home", reg)
        complete = gateway_complete(gw, "http-agent", TURN, CELL)
        return asyncio.run(run_agent(turn_messages(), TurnTools(bird), complete)), gw

    trace, gw = turn()
    replayed, gw_again = turn()
    assert (trace.outcome, trace.final_sql) == (TurnOutcome.FINAL_TEXT, FINAL), trace.error_message
    assert [[u.tool for u in s.tool_uses] for s in trace.steps] == [
        ["list_tables"],
        ["get_ddl", "distinct_values"],
        ["execute_sql"],
        [],
    ]
    assert all(u.outcome is CallOutcome.OK for s in trace.steps for u in s.tool_uses)
    assert "'A'" in trace.steps[1].tool_uses[1].observation and trace.steps[2].tool_uses[0].phase == "execute"
    assert [s.prompt_tokens for s in trace.steps] == [101, 102, 103, 104] and gw.calls == 4
    sent = requests(log)
    assert len(sent) == 4 and sent[0]["model"] == "scripted-agent"
    assert [t["function"]["name"] for t in sent[0]["tools"]][-1] == "submit_sql"
    last = sent[-1]["messages"]
    assert [m["role"] for m in last[2:]] == [
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
    ]
    assert last[-1]["content"].startswith("1 rows [COUNT(*)]")
    # the same turn again: every step replayed from the request store, no request reaches the server
    assert gw_again.calls == 0 and len(requests(log)) == 4
    assert trace_json(replayed, False) == trace_json(trace, False)
    assert [s.latency_s for s in replayed.steps] == [s.latency_s for s in trace.steps]
