"""Built-in models through the gateway, in-process (never litellm): gold, recall-probe on real
benchmark turns, the Resolved-block contract, simulated latency, and the local model's
missing-weights report."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import litellm
import pytest

from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.reference.builtins import (
    BuiltinRequestError,
    answer,
    parse_resolved_block,
    recall_probe_sql,
    smollm2_weights_path,
)
from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX

SYSTEM = {"role": "system", "content": "You write SQLite. The Resolved block is authoritative."}


def prompt(turn: dict, resolved: dict) -> list[dict]:
    """A prompt following the Resolved-block contract (builtins.py module docstring)."""
    lines = ["Resolved context:"] + [f"- {k}: {json.dumps(v)}" for k, v in resolved.items()]
    block = "\n".join(lines) + "\n\n" if resolved else ""
    return [SYSTEM, {"role": "user", "content": f"{block}Question: {turn['question']}"}]


def sessions_of(turns: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for t in turns:
        out.setdefault(t["session_id"], []).append(t)
    return out


def gateway(tmp_path, registry) -> ModelGateway:
    return ModelGateway(registry, RequestStore.at_home(tmp_path), home=tmp_path, environ={})


def test_gold_returns_ground_truth_and_caches(tmp_path, test_registry, embedded_turns):
    turns = embedded_turns[::50]
    gw = gateway(tmp_path, test_registry)

    async def go():
        return await asyncio.gather(*(gw.acomplete("gold", prompt(t, {}), t) for t in turns))

    replies = asyncio.run(go())
    assert [r.text for r in replies] == [t["gt_sql"] for t in turns]
    assert all(r.ok and r.cost_usd == 0 and r.completion_tokens == len(r.text.split()) for r in replies)
    rerun = gateway(tmp_path, test_registry)
    assert all(r.cache_hit for r in _all(rerun, "gold", turns))
    assert rerun.calls == 0


async def _gather(gw, model, turns, resolved_for=lambda t: {}):
    return await asyncio.gather(*(gw.acomplete(model, prompt(t, resolved_for(t)), t) for t in turns))


def _all(gw, model, turns):
    return asyncio.run(_gather(gw, model, turns))


def test_gold_key_includes_ground_truth_so_identical_prompts_do_not_collide(tmp_path, test_registry):
    gw = gateway(tmp_path, test_registry)
    same = [SYSTEM, {"role": "user", "content": "And their total?"}]
    a = asyncio.run(gw.acomplete("gold", same, {"gt_sql": "SELECT 1"}))
    b = asyncio.run(gw.acomplete("gold", same, {"gt_sql": "SELECT 2"}))
    assert (a.text, b.text) == ("SELECT 1", "SELECT 2") and a.request_key != b.request_key


def test_recall_probe_with_full_resolved_block_reproduces_gt_on_every_turn(
    tmp_path, test_registry, embedded_turns
):
    resolved_by_turn = {}
    for session in sessions_of(embedded_turns).values():
        state: dict = {}
        for t in sorted(session, key=lambda t: t["turn_index"]):
            resolved_by_turn[(t["session_id"], t["turn_index"])] = {
                k: state[k] for k in t["referenced_context_keys"]
            }
            state.update(t["state_updates"])
    gw = gateway(tmp_path, test_registry)
    replies = asyncio.run(
        _gather(
            gw, "recall-probe", embedded_turns, lambda t: resolved_by_turn[(t["session_id"], t["turn_index"])]
        )
    )
    mismatches = [
        (t["session_id"], t["turn_index"])
        for t, r in zip(embedded_turns, replies, strict=True)
        if r.text != t["gt_sql"]
    ]
    assert mismatches == []
    assert (
        sum(bool(t["referenced_context_keys"]) for t in embedded_turns) > 100
    )  # the test covers memory turns
    # It was told only what it may know: no ground truth, no state values.
    record = RequestStore.at_home(tmp_path).get(replies[-1].request_key)
    assert set(record["request"]["builtin_context"]) == {
        "sql_template",
        "referenced_context_keys",
        "stated_values",
    }


def test_recall_probe_without_a_key_fails_to_run(tmp_path, test_registry, embedded_turns, embedded_dbs):
    turn = next(t for t in embedded_turns if t["memory_critical"])
    reply = asyncio.run(gateway(tmp_path, test_registry).acomplete("recall-probe", prompt(turn, {}), turn))
    assert reply.ok  # the model answered; the SQL is what fails
    for key in turn["referenced_context_keys"]:
        assert "{" + key + "}" in reply.text
    db = embedded_dbs[SOURCE_BY_PREFIX[turn["source"]]]
    conn = open_readonly(db)
    try:
        assert run_query(conn, reply.text, 5.0, 100).error
    finally:
        conn.close()


def test_resolved_block_contract():
    messages = [
        SYSTEM,
        {
            "role": "user",
            "content": (
                'Earlier text\nResolved context:\n- customer_id: "ALFKI"\n- year: 2021\n- bad: not json\n'
                "- amount: 1.5\n\n- after_blank: 1\nQuestion: q"
            ),
        },
    ]
    assert parse_resolved_block(messages) == {"customer_id": "ALFKI", "year": 2021, "amount": 1.5}
    # Later blocks override earlier ones; content lists are read for their text parts.
    later = {"role": "user", "content": [{"type": "text", "text": "Resolved context:\n- year: 2022"}]}
    assert parse_resolved_block([*messages, later])["year"] == 2022
    assert parse_resolved_block([{"role": "user", "content": "Resolved context: - year: 1"}]) == {}


def test_recall_probe_rendering_rules():
    template = "SELECT * FROM t WHERE c = {cid} AND y = {year} AND n = {name} AND z = {zip}"
    sql = recall_probe_sql(
        template, ["cid", "year", "zip"], {"name": "O'Hara"}, {"cid": "ALFKI", "year": 2021, "zip": None}
    )
    assert sql == "SELECT * FROM t WHERE c = 'ALFKI' AND y = 2021 AND n = 'O''Hara' AND z = {zip}"
    # A referenced key is never taken from stated values, even if present there.
    assert recall_probe_sql("x = {k}", ["k"], {"k": 1}, {}) == "x = {k}"


def test_smollm2_missing_weights_is_reported(tmp_path, test_registry):
    reply = asyncio.run(gateway(tmp_path, test_registry).acomplete("smollm2-135m", [SYSTEM], {}))
    assert reply.error_type == "unavailable" and "run `memsql models fetch smollm2`" in reply.error_message
    assert not smollm2_weights_path(tmp_path).exists()

    # The built-in itself says the same when called directly.
    with pytest.raises(BuiltinRequestError, match="model weights missing.*memsql models fetch smollm2"):
        asyncio.run(answer("smollm2-135m", [SYSTEM], {}, {}, tmp_path))


def test_builtins_never_call_litellm_and_keep_records_and_usage(tmp_path, test_registry, monkeypatch):
    async def no_litellm(*args, **kwargs):
        raise AssertionError("a built-in went through litellm")

    monkeypatch.setattr(litellm, "acompletion", no_litellm)
    turn = {"gt_sql": "SELECT COUNT(*) FROM loan"}
    gw = gateway(tmp_path, test_registry)
    reply = asyncio.run(gw.acomplete("gold", [SYSTEM], turn))
    assert reply.ok and reply.text == turn["gt_sql"] and reply.attempts == 1 and gw.calls == 1
    record = RequestStore.at_home(tmp_path).get(reply.request_key)
    assert record["response"]["text"] == turn["gt_sql"] and record["litellm_model"] == "memsql/gold"
    assert record["usage"] == {
        "prompt_tokens": len(SYSTEM["content"].split()),
        "completion_tokens": 4,
        "reasoning_tokens": 0,
    }


def test_a_run_of_builtins_never_imports_litellm(tmp_path):
    # litellm's import costs ~2 s in every process of `memsql run`, which calls only built-ins
    code = f"""
import asyncio, sys
from pathlib import Path
import memsql_assets.lib.reference
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import RequestStore
home = Path({str(tmp_path)!r})
gw = ModelGateway(load_registry(), RequestStore.at_home(home), home=home, environ={{}})
reply = asyncio.run(gw.acomplete("gold", [{{"role": "user", "content": "q"}}], {{"gt_sql": "SELECT 1"}}))
assert reply.ok and reply.text == "SELECT 1", reply
print("litellm" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_gateway_without_the_reference_layer_says_how_to_load_the_builtins(tmp_path):
    # the gateway never imports lib/reference (a layer above it): a process that skips it is told so
    code = f"""
import asyncio
from pathlib import Path
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import RequestStore
home = Path({str(tmp_path)!r})
gw = ModelGateway(load_registry(), RequestStore.at_home(home), home=home, environ={{}})
asyncio.run(gw.acomplete("gold", [{{"role": "user", "content": "q"}}], {{"gt_sql": "SELECT 1"}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert "the built-in models are not loaded: import memsql_assets.lib.reference" in out.stderr


def test_an_unanswerable_builtin_request_is_a_typed_bad_request(tmp_path, test_registry):
    with pytest.raises(BuiltinRequestError, match="no built-in model 'oracle'"):
        asyncio.run(answer("oracle", [SYSTEM], {}, {}, tmp_path))
    oversized = {"gt_sql": "SELECT 1 " + "-" * 300_000}
    reply = asyncio.run(gateway(tmp_path, test_registry).acomplete("gold", [SYSTEM], oversized))
    assert reply.error_type == "malformed_response" and "over the 200,000 limit" in reply.error_message


def test_simulated_latency_delays_each_answer(tmp_path):
    async def timed(params):
        t0 = time.monotonic()
        text, _, _ = await answer("gold", [SYSTEM], {"gt_sql": "SELECT 1"}, params, tmp_path)
        return text, time.monotonic() - t0

    assert asyncio.run(timed({"simulated_latency_ms": 150}))[0] == "SELECT 1"
    assert asyncio.run(timed({"simulated_latency_ms": 150}))[1] >= 0.15
    assert asyncio.run(timed({}))[1] < 0.05


def test_builtin_needs_its_turn_fields(tmp_path, test_registry):
    from memsql_assets.lib.errors import MemsqlError

    with pytest.raises(MemsqlError, match="turn_context lacks gt_sql"):
        asyncio.run(gateway(tmp_path, test_registry).acomplete("gold", [SYSTEM], {"question": "q"}))


def test_the_reference_agent_asked_without_tools_answers_as_gold(tmp_path):
    """A single-shot condition (A to D, E_prompt) offers no tools: gold-agent answers the ground truth there."""
    text, _, completion = asyncio.run(answer("gold-agent", [SYSTEM], {"gt_sql": "SELECT 1"}, {}, tmp_path))
    assert text == "SELECT 1" and completion == 2
