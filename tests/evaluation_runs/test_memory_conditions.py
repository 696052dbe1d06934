"""The conditions the memory protocol added, through the real harness on the small benchmark: H (every
earlier turn), S (the rolling extractive summary) and M0 (mem0, offline), measured by the probes that
read the prompt, with their memory's cost recorded in the partition's summary."""

from __future__ import annotations

import shutil

import pytest

from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import comparable_rows, output_dir
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.memory import mem0_memory
from memsql_assets.lib.memory.mem0_memory import MEM0_STORE

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def home(small_home, tmp_path_factory):
    home = tmp_path_factory.mktemp("memory_conditions") / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report", "requests"))
    return home


def test_full_history_delivers_at_least_the_five_turn_window(home):
    for model in ("reader-probe", "recall-probe"):
        window = evaluate_partition(home, model, "B_wm5").summary
        history = evaluate_partition(home, model, "H").summary
        assert history["ex_strict"] >= window["ex_strict"], model
        assert history["ex_memory_critical"] >= window["ex_memory_critical"], model
    # recall-probe reads only the Resolved block: H resolves from every earlier turn, B_wm5 from five
    assert history["ex_memory_critical"] == 100.0 > window["ex_memory_critical"]
    assert history["memory_implementation"] == "window" and history["wave_size"] is None
    assert history["memory_store_entries"] == history["turns"], "each session held every turn by its end"


def test_the_rolling_summary_compresses_and_still_resolves(home):
    summary = evaluate_partition(home, "recall-probe", "S")
    history = evaluate_partition(home, "recall-probe", "H")
    s, h = summary.summary, history.summary
    assert s["memory_implementation"] == "summary" and 0 < s["memory_store_bytes"] < h["memory_store_bytes"]
    assert s["memory_store_entries"] == s["sessions"], "one summary per session"
    # Fewer prompt tokens than the full history, for the values the turns need.
    assert s["prompt_tokens"] < h["prompt_tokens"]
    assert s["ex_memory_critical"] >= 90.0
    resolved_from = {o.split(":")[0] for r in summary.rows for o in _origins(r)}
    assert resolved_from == {"summary"}
    reader = evaluate_partition(home, "reader-probe", "S").summary
    assert reader["ex_strict"] >= s["ex_strict"], "the careful reader reads the summary's SQL as well"


def _origins(row):
    import json

    return json.loads(row["resolved_keys"]).values()


def test_mem0_runs_offline_per_session_and_reproducibly(home, monkeypatch):
    embedded: list[str] = []  # the texts mem0's embedder embeds itself, rather than take the runner's vector
    packaged = mem0_memory.embedding_function

    def counted():
        return lambda texts: embedded.extend(texts) or packaged()(texts)

    monkeypatch.setattr(mem0_memory, "embedding_function", counted)
    settings = EvalSettings(sessions=9)
    first = evaluate_partition(home, "reader-probe", "M0", settings=settings)
    assert embedded == [], "every question's vector is the partition's batch vector, passed by the runner"
    s = first.summary
    assert s["n_turns"] > 20 and s["memory_implementation"] == "mem0"
    assert s["error_classes"]["memory_error"] == 0
    assert s["memory_store_entries"] == s["turns"] and s["memory_store_bytes"] > s["turns"] * 384 * 4
    assert not (output_dir(home, "reader-probe", "M0", 9) / MEM0_STORE).exists(), "its shards are in memory"
    later = [r for r in first.rows if r["turn_index"] > 1]
    assert any(r["retrieved_sessions"] != "[]" for r in later), "mem0 returned the session's earlier turns"
    again = evaluate_partition(home, "reader-probe", "M0", settings=settings)
    assert again.summary["model_calls_this_run"] == 0
    assert comparable_rows(again.rows) == comparable_rows(first.rows), "retrieval is a function of what is stored"
