"""A plan counts the calls of its own history: a gold-history answer never answers a model-history
cell, nor the reverse (lib/harness/plan.py answered_by_config; lib/history.py)."""

from __future__ import annotations

import json

from memsql_assets.lib.harness.plan import answered_by_config
from memsql_assets.lib.history import History


def _record(store, name: str, turn: int, history: str | None) -> None:
    cell = {"model": "m", "condition": "B_wm5", "session": "NW-X-001", "turn": turn, "epoch": 1}
    if history:
        cell["history"] = history
    record = {"cell": cell, "litellm_model": "openai/m", "request": {"params": {}}, "usage": {"completion_tokens": 7}}
    (store / "ab").mkdir(parents=True, exist_ok=True)
    (store / "ab" / f"{name}.json").write_text(json.dumps(record), encoding="utf-8")


def test_each_history_counts_only_its_own_answers(tmp_path):
    _record(tmp_path, "own", 1, None)
    _record(tmp_path, "gold", 2, "gold")
    config = json.dumps(["openai/m", {}], sort_keys=True)
    own = answered_by_config(tmp_path)
    gold = answered_by_config(tmp_path, history=History.GOLD)
    assert {c[3] for c in own.cells[config]} == {1}
    assert {c[3] for c in gold.cells[config]} == {2}
