"""One evaluation cell, one sample: a cell's answer is reused by that cell only."""

from __future__ import annotations

import json
import shutil

import pytest
from model_fakes import FAKE_KEY_ENV, FAKE_SECRET

from memsql_assets.lib.benchmark.sample import SampleSizeError
from memsql_assets.lib.harness.evaluate import EvalSettings, evaluate_partition
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.request_store import RequestStore, evaluation_cell, request_key


def _home(small_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "requests", "redis"))
    return home


def _run(home, registry, provider, condition, settings=None):
    gateway = ModelGateway(registry, RequestStore(home / "requests"), home=home)
    before = len(provider.calls)
    out = evaluate_partition(home, "flaky", condition, settings=settings, registry=registry, gateway=gateway)
    return out, len(provider.calls) - before


def test_b_wm5_after_b_asks_the_model_for_every_turn(
    small_home, tmp_path, fake_provider, test_registry, monkeypatch
):
    home = _home(small_home, tmp_path)
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    fake_provider.default = "numbered"
    b, b_calls = _run(home, test_registry, fake_provider, "B")
    wm5, wm5_calls = _run(home, test_registry, fake_provider, "B_wm5")
    assert b_calls == b.summary["turns"]
    assert wm5_calls == wm5.summary["turns"] == 132, "nothing shared from B"
    assert wm5.summary["cache_hits"] == 0 and wm5.summary["share_identical_prompts"] is False
    # Turn 1's prompt is the same under B and B_wm5, yet each cell has its own answer.
    first = {
        c: {r["session_id"]: (r["prompt_hash"], r["raw_output"]) for r in out.rows if r["turn_index"] == 1}
        for c, out in (("B", b), ("B_wm5", wm5))
    }
    assert all(first["B"][s][0] == first["B_wm5"][s][0] for s in first["B"]), "identical prompts"
    assert all(first["B"][s][1] != first["B_wm5"][s][1] for s in first["B"]), "distinct samples"

    again, again_calls = _run(home, test_registry, fake_provider, "B_wm5")
    assert again_calls == 0, "a re-run reuses the cell's own answers"
    assert [r["raw_output"] for r in again.rows] == [r["raw_output"] for r in wm5.rows]


def test_share_identical_prompts_is_explicit_and_recorded(
    small_home, tmp_path, fake_provider, test_registry, monkeypatch
):
    home = _home(small_home, tmp_path)
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    shared = EvalSettings(share_identical_prompts=True)
    b, _ = _run(home, test_registry, fake_provider, "B", shared)
    wm5, wm5_calls = _run(home, test_registry, fake_provider, "B_wm5", shared)
    assert wm5.summary["share_identical_prompts"] is True
    assert wm5.summary["cache_hits"] > 0 and wm5_calls == wm5.summary["turns"] - wm5.summary["cache_hits"]
    summary_file = json.loads((b.result_path.parent / "summary.json").read_text(encoding="utf-8"))
    assert summary_file["share_identical_prompts"] is True


def test_cell_key_differs_per_cell_and_shared_key_is_the_schema_1_key():
    msgs = [{"role": "user", "content": "q"}]
    shared = request_key("m/x", {}, msgs)
    cells = [
        evaluation_cell("m", "B", "NW-1-001#1"),
        evaluation_cell("m", "B_wm5", "NW-1-001#1"),
        evaluation_cell("m", "B", "NW-1-002#1"),
        evaluation_cell("m", "B", "NW-1-001#2"),
        evaluation_cell("m", "B", "NW-1-001#1", epoch=2),
        evaluation_cell("n", "B", "NW-1-001#1"),
    ]
    keys = {request_key("m/x", {}, msgs, None, c) for c in cells}
    assert len(keys) == len(cells) and shared not in keys
    assert evaluation_cell("m", "A", "SEC-2-010#3") == {
        "model": "m",
        "condition": "A",
        "session": "SEC-2-010",
        "turn": 3,
        "epoch": 1,
    }


def test_old_records_stay_readable(tmp_path, fake_provider, test_registry, monkeypatch):
    """A schema-1 record (no cell in key or record) is replayed when prompts are shared."""
    import asyncio

    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    store = RequestStore(tmp_path)
    gateway = ModelGateway(test_registry, store, home=tmp_path)
    msgs = [{"role": "user", "content": "q"}]
    key = gateway.request_key_for("flaky", msgs, {})
    record = {"key": key, "schema": 1, "response": {"text": "SELECT 42", "reasoning": ""}, "usage": {}}
    store.path_for(key).parent.mkdir(parents=True)
    store.path_for(key).write_text(json.dumps(record), encoding="utf-8")
    shared = asyncio.run(gateway.acomplete("flaky", msgs, {}))
    assert shared.cache_hit and shared.text == "SELECT 42" and not fake_provider.calls
    own = asyncio.run(gateway.acomplete("flaky", msgs, {}, cell=evaluation_cell("flaky", "A", "NW-1-001#1")))
    assert not own.cache_hit and len(fake_provider.calls) == 1
    assert store.get(own.request_key)["cell"]["session"] == "NW-1-001"


def test_sample_run_then_full_run_reuses_the_sampled_cells(
    small_home, tmp_path, fake_provider, test_registry, monkeypatch
):
    home = _home(small_home, tmp_path)
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    fake_provider.default = "numbered"
    sample, sample_calls = _run(home, test_registry, fake_provider, "B", EvalSettings(sessions=9))
    s = sample.summary
    assert s["sessions"] == 9 and s["complete"] is False and len(s["sample_sessions"]) == 9
    assert {(r["source"], r["tier"]) for r in sample.rows} == {(r["source"], r["tier"]) for r in _all(home)}
    assert sample_calls == s["turns"] == len(sample.rows) and s["ex_strict_ci95"] is not None
    full, full_calls = _run(home, test_registry, fake_provider, "B")
    assert full.summary["complete"] is True and full.summary["sample_sessions"] is None
    assert full_calls == full.summary["turns"] - s["turns"], "the sampled cells' answers are reused"
    answered = {(r["session_id"], r["turn_index"]): r["raw_output"] for r in sample.rows}
    assert all(
        answered[k] == r["raw_output"]
        for r in full.rows
        if (k := (r["session_id"], r["turn_index"])) in answered
    )


def test_a_sample_that_cannot_cover_the_strata_writes_nothing(small_home, tmp_path, test_registry):
    home = _home(small_home, tmp_path)
    with pytest.raises(SampleSizeError, match=r"sessions 3: expected 9 to 30"):
        evaluate_partition(home, "gold", "A", settings=EvalSettings(sessions=3), registry=test_registry)
    assert not (home / "results").exists() and not (home / "requests").exists()


def _all(home):
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.paths import benchmark_dir

    return read_turns(benchmark_dir(home))


def test_adding_epoch_2_to_a_finished_partition_asks_only_for_epoch_2(
    small_home, tmp_path, fake_provider, test_registry, monkeypatch
):
    """Epochs: epoch 2 is an independent sample of every cell; epoch 1's answers
    come back from the request store, so only epoch 2 makes model requests."""
    home = _home(small_home, tmp_path)
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    fake_provider.default = "numbered"
    one, one_calls = _run(home, test_registry, fake_provider, "C")
    assert one_calls == one.summary["turns"] and one.summary["epochs"] == 1
    two, two_calls = _run(home, test_registry, fake_provider, "C", EvalSettings(epochs=2))
    s = two.summary
    assert two_calls == s["turns"] == one.summary["turns"], "model requests only for epoch 2"
    assert s["epochs"] == 2 and s["n_turns"] == 2 * s["turns"] == len(two.rows)
    by_epoch = {
        e: {(r["session_id"], r["turn_index"]): r for r in two.rows if r["epoch"] == e} for e in (1, 2)
    }
    first = {(r["session_id"], r["turn_index"]): r["raw_output"] for r in one.rows}
    assert {k: r["raw_output"] for k, r in by_epoch[1].items()} == first, "epoch 1 is the finished run's"
    assert all(r["cache_hit"] for r in by_epoch[1].values())
    assert not any(r["cache_hit"] for r in by_epoch[2].values())
    assert all(by_epoch[2][k]["raw_output"] != a for k, a in first.items()), "epoch 2 is its own sample"
    # Episodic memory is per epoch (one collection each, every turn of that epoch): epochs never
    # retrieve each other's answers.
    from memsql_assets.lib.harness.results import partition_dir
    from memsql_assets.lib.memory.chroma import chroma_client

    client = chroma_client(partition_dir(home, "flaky", "C"))
    counts = {c.name.rsplit("-", 1)[-1]: c.count() for c in client.list_collections()}
    assert counts == {"epoch1": s["turns"], "epoch2": s["turns"]}
    again, again_calls = _run(home, test_registry, fake_provider, "C", EvalSettings(epochs=2))
    assert again_calls == 0 and [r["raw_output"] for r in again.rows] == [r["raw_output"] for r in two.rows]


def test_epochs_below_1_are_refused_before_anything_is_written(small_home, tmp_path, test_registry):
    from memsql_assets.lib.harness.settings import EpochsError

    home = _home(small_home, tmp_path)
    for bad in (0, -1):
        with pytest.raises(EpochsError, match=rf"^epochs {bad}: expected an integer >= 1"):
            evaluate_partition(home, "gold", "A", settings=EvalSettings(epochs=bad), registry=test_registry)
    assert not (home / "results").exists() and not (home / "requests").exists()
