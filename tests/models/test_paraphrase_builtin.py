"""The `paraphrase` built-in: registered in models.yaml, answers with the turn's paraphrase SQL and
sees nothing else of the turn."""

from __future__ import annotations

import asyncio

from memsql_assets.lib.agent.agent import turn_context
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.registry import DEFAULT_MODELS_FILE, load_registry
from memsql_assets.lib.models.request_store import RequestStore

SYSTEM = {"role": "system", "content": "You write SQLite."}


def test_paraphrase_is_an_enabled_offline_builtin_in_models_yaml():
    entry = load_registry(DEFAULT_MODELS_FILE).get("paraphrase")
    assert entry.kind == "builtin" and entry.enabled and entry.litellm_model == "memsql/paraphrase"
    assert entry.builtin_name == "paraphrase"


def test_paraphrase_answers_with_the_paraphrase_sql_only(tmp_path, embedded_turns):
    gw = ModelGateway(
        load_registry(DEFAULT_MODELS_FILE), RequestStore.at_home(tmp_path), home=tmp_path, environ={}
    )
    turns = embedded_turns[::70]

    async def go():
        return await asyncio.gather(
            *(
                gw.acomplete(
                    "paraphrase", [SYSTEM, {"role": "user", "content": t["question"]}], turn_context(t)
                )
                for t in turns
            )
        )

    replies = asyncio.run(go())
    assert [r.text for r in replies] == [t["paraphrase_sql"] for t in turns]
    assert all(r.text != t["gt_sql"] for r, t in zip(replies, turns, strict=True))
    assert all(r.ok and r.cost_usd == 0 for r in replies)
    record = RequestStore.at_home(tmp_path).get(replies[0].request_key)
    assert record["request"]["builtin_context"] == {"paraphrase_sql": turns[0]["paraphrase_sql"]}
