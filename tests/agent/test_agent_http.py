"""The agent loop through litellm's real HTTP client against a scripted OpenAI-compatible server
running as its own process: multi-step tool calls (one step with two), then `submit_sql`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_helpers import CELL, TURN, gateway, registry, turn_messages

from memsql_assets.lib.agent.loop import (
    AgentTrace,
    CallOutcome,
    TurnOutcome,
    gateway_complete,
    run_agent,
    trace_json,
)
from memsql_assets.lib.agent.turn_tools import TurnTools
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.trajectories.tools import DbTools

SERVER = Path(__file__).with_name("scripted_chat_server.py")
CHILD = Path(__file__).with_name("agent_child.py")
REPO = Path(__file__).resolve().parents[2]
FINAL = "SELECT COUNT(*) FROM loan WHERE status = 'A'"
BY_STATUS = "SELECT status, COUNT(*) FROM loan GROUP BY status ORDER BY status"
SCRIPT = [
    {"tool_calls": [["list_tables", "{}"]]},
    {
        "tool_calls": [
            ["get_ddl", '{"table": "loan"}'],
            ["distinct_values", '{"table": "loan", "column": "status"}'],
        ]
    },
    {"tool_calls": [["execute_sql", json.dumps({"sql": BY_STATUS})]]},
    {"tool_calls": [["submit_sql", json.dumps({"sql": FINAL})]]},
]


@contextlib.contextmanager
def scripted_server(folder: Path, *stall: str) -> Iterator[tuple[str, Path]]:
    """The server process on SCRIPT: its base URL and its request log; `stall`: step, flag file."""
    script, log = folder / "script.json", folder / "requests.jsonl"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), str(script), str(log), *stall], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1", log
    finally:
        proc.terminate()
        try:  # a loaded machine can hold a process in disk sleep for seconds past its signal
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=60)


@pytest.fixture()
def server(tmp_path):
    with scripted_server(tmp_path) as got:
        yield got


def http_turn(home: Path, url: str, tools: DbTools) -> tuple[AgentTrace, ModelGateway]:
    gw = gateway(home, registry(home, url))
    complete = gateway_complete(gw, "http-agent", TURN, CELL)
    return asyncio.run(run_agent(turn_messages(), TurnTools(tools), complete)), gw


def requests(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def test_tool_calls_through_http_then_a_submission_and_a_replay_without_calls(server, tmp_path, bird):
    url, log = server
    trace, gw = http_turn(tmp_path / "home", url, bird)
    replayed, gw_again = http_turn(tmp_path / "home", url, bird)
    assert (trace.outcome, trace.final_sql) == (TurnOutcome.SUBMITTED, FINAL), trace.error_message
    assert [[u.tool for u in s.tool_uses] for s in trace.steps] == [
        ["list_tables"],
        ["get_ddl", "distinct_values"],
        ["execute_sql"],
        ["submit_sql"],
    ]
    assert [u.outcome for s in trace.steps for u in s.tool_uses][-1] is CallOutcome.SUBMITTED
    assert all(u.outcome is CallOutcome.OK for s in trace.steps[:-1] for u in s.tool_uses)
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
    # the model is shown every row of its query, not the first three
    assert last[-1]["content"] == "4 rows [status, COUNT(*)]: " + "; ".join(
        str(r) for r in bird.conn.execute(BY_STATUS).fetchall()
    )
    # the same turn again: every step replayed from the request store, no request reaches the server
    assert gw_again.calls == 0 and len(requests(log)) == 4
    assert trace_json(replayed, False) == trace_json(trace, False)
    assert [s.latency_s for s in replayed.steps] == [s.latency_s for s in trace.steps]


def wait_for(condition, child: subprocess.Popen, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if child.poll() is not None:
            pytest.fail(f"the agent process ended early: {child.communicate()[1][-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail("the agent process never reached the stalled step")
        time.sleep(0.05)


@pytest.mark.slow
def test_a_turn_killed_mid_step_resumes_with_no_calls_for_its_completed_steps(tmp_path, bird, embedded_dbs):
    """kill -9 while the model answers step 3; the rerun asks the model for steps 3 and 4 only, and
    its trace equals a clean run's."""
    flag = tmp_path / "stall"
    with scripted_server(tmp_path, "3", str(flag)) as (url, log):
        clean, _ = http_turn(tmp_path / "clean", url, bird)
        flag.touch()
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        db = str(embedded_dbs["bird_financial"])
        child = subprocess.Popen(
            [sys.executable, str(CHILD), str(tmp_path / "home"), url, db],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_for(lambda: len(requests(log)) == 4 + 3, child)  # the clean run's 4, then steps 1-3
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.communicate()
        assert RequestStore.at_home(tmp_path / "home").count() == 2, "steps 1 and 2 were stored"
        flag.unlink()
        resumed, gw = http_turn(tmp_path / "home", url, bird)
        assert gw.calls == 2 and len(requests(log)) == 4 + 3 + 2
    assert [s.cache_hit for s in resumed.steps] == [True, True, False, False]
    assert trace_json(resumed, False) == trace_json(clean, False)
