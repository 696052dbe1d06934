"""Where the runner scores a turn (runner.py): on its event loop when every result the turn needs is
cached, in a worker thread when SQL must run or a file must be read first."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

from memsql_assets.lib.conditions import get_condition
from memsql_assets.lib.harness.runner import PartitionRunner
from memsql_assets.lib.memory.plugins import build_memory

GT = "SELECT region, SUM(amount) FROM sales GROUP BY region ORDER BY region"
OTHER = "SELECT region FROM sales ORDER BY region"


def _runner(tmp_path) -> PartitionRunner:
    db = tmp_path / "t.sqlite"
    with sqlite3.connect(db) as w:
        w.execute("CREATE TABLE sales (region TEXT, amount REAL)")
        w.executemany("INSERT INTO sales VALUES (?, ?)", [("North", 1.0), ("South", 2.0)])
    agent = SimpleNamespace(
        condition=get_condition("A"), memory=build_memory(get_condition("A")), persist=lambda *args: None
    )
    return PartitionRunner("m", agent, None, tmp_path / "home", {"T": db}, "v1")  # type: ignore[arg-type]


def _turn() -> dict:
    return {"session_id": "T-2-001", "turn_index": 2, "source": "T", "gt_sql": GT, "fallback_sql": None}


def test_cached_results_are_scored_here_and_the_rest_in_a_thread(tmp_path):
    runner = _runner(tmp_path)
    assert runner._score_here(_turn(), GT, ()) is None, "the source's file is checked first, in a thread"
    threaded, failure = runner._score_and_persist(_turn(), GT)
    assert failure is None
    assert threaded.ex_strict
    assert runner._score_here(_turn(), GT, ()) == threaded  # the same score, from the cache
    assert runner._score_here(_turn(), OTHER, ()) is None, "SQL the model writes anew runs in a thread"
    wrong, _ = runner._score_and_persist(_turn(), OTHER)
    assert not wrong.ex_strict and runner._score_here(_turn(), OTHER, ()) == wrong
    # A wrong answer with supplying sessions needs the benchmark's sessions file: read in a thread.
    assert runner._score_here(_turn(), OTHER, ("T-2-009",)) is None
