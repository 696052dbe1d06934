"""Synthetic questions written by a registry LLM (through litellm and the gateway), verified by execution."""

from __future__ import annotations

import json

import litellm
from litellm import CustomLLM
from model_fakes import FAKE_KEY_ENV

from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.proposer import proposer
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.trajectories.llm_questions import parse_pairs
from memsql_assets.lib.trajectories.store import plan_questions

PAIRS = [
    {"question": "How many customers are there?", "sql": "SELECT COUNT(*) FROM Customers"},
    {"question": "List every product name.", "sql": "SELECT ProductName FROM Products ORDER BY 1"},
    {"question": "A broken one", "sql": "SELEC nope"},
    {"question": "An empty one", "sql": "SELECT * FROM Customers WHERE 1 = 0"},
    {"question": "How many customers are there?", "sql": "SELECT COUNT(CustomerID) FROM Customers"},
    {"question": "What were total sales to them?", "sql": "SELECT 1"},
]


class WriterProvider(CustomLLM):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def acompletion(self, model, messages, *args, **kwargs):
        self.calls += 1
        content = "Here you go:\n```json\n" + json.dumps(PAIRS) + "\n```"
        return litellm.ModelResponse(
            choices=[
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
            ],
            usage={"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        )


def test_parse_pairs_tolerates_fences_and_garbage():
    assert parse_pairs('```json\n[{"question": "q", "sql": "SELECT 1;"}]\n```') == [("q", "SELECT 1")]
    assert parse_pairs("no json here") == [] and parse_pairs("[{broken") == []


def test_llm_questions_are_verified_deduplicated_and_exclude_the_benchmark(
    embedded_dbs, tmp_path, write_registry, monkeypatch
):
    writer = WriterProvider()
    monkeypatch.setattr(
        litellm,
        "custom_provider_map",
        [*litellm.custom_provider_map, {"provider": "memsqlwriter", "custom_handler": writer}],
    )
    monkeypatch.setenv(FAKE_KEY_ENV, "sk-test-writer")
    registry = load_registry(
        write_registry(f"""
        models:
          writer:
            litellm_model: memsqlwriter/w
            kind: api
            reasoning: {{type: default}}
            api_key_env: {FAKE_KEY_ENV}
            max_concurrency: 1
            price_per_mtok: {{input: 1.0, output: 1.0}}
            enabled: true
        """)
    )
    propose = proposer(ModelGateway(registry, RequestStore(tmp_path / "requests"), home=tmp_path), "writer")
    plan = plan_questions(
        {"northwind": embedded_dbs["northwind"]}, 4, 0, {"What were total sales to them?"}, propose=propose
    )
    texts = [q.text for q in plan.questions["northwind"]]
    assert texts == ["How many customers are there?", "List every product name."]
    assert all(q.template == "llm" and q.tables for q in plan.questions["northwind"])
    assert plan.shortfall == {"northwind": 2}
    # Round 1 asks for 4, round 2 for the 2 missing; round 3 repeats round 2's prompt: a store hit.
    assert writer.calls == 2
