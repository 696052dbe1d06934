"""Waves of C and D (runner.py): how sessions are grouped, the wave size rule, and checkpoints of
another wave size being void."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from memsql_assets.lib.conditions import get_condition
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.harness.results import progress_dir
from memsql_assets.lib.harness.runner import PartitionRunner
from memsql_assets.lib.harness.schedule import history_reach, waves
from memsql_assets.lib.harness.settings import resolve_wave_size
from memsql_assets.lib.memory.plugins import build_memory


def test_waves_are_consecutive_sessions_of_one_source_in_order():
    order = [f"BIRD-{i:02d}" for i in range(7)] + ["NW-00", "NW-01"]
    source = {s: s.split("-")[0] for s in order}
    assert waves(order, 3, source) == {
        "BIRD": [["BIRD-00", "BIRD-01", "BIRD-02"], ["BIRD-03", "BIRD-04", "BIRD-05"], ["BIRD-06"]],
        "NW": [["NW-00", "NW-01"]],  # not with BIRD-06: retrieval never crosses sources
    }
    # W = 1: the paper's strictly sequential order (within a source, all that retrieval can see).
    assert waves(order, 1, source) == {"BIRD": [[s] for s in order[:7]], "NW": [["NW-00"], ["NW-01"]]}
    assert waves(order, 16, source) == {"BIRD": [order[:7]], "NW": [order[7:]]}


def test_wave_size_defaults_to_the_concurrency_and_below_one_is_an_error():
    assert resolve_wave_size(None, 16) == 16 and resolve_wave_size(1, 16) == 1
    for bad in (0, -1, True, 2.5, "4"):
        with pytest.raises(MemsqlError, match=r"wave size must be an integer >= 1 .*got"):
            resolve_wave_size(bad, 16)  # type: ignore[arg-type]


def _turns(continues: dict[str, str], n: int = 24) -> list[dict[str, object]]:
    ids = [f"NW-X-{i:03d}" for i in range(1, n + 1)]
    return [{"session_id": s, "source": "NW", "continues_session_id": continues.get(s)} for s in ids] + [
        {"session_id": "SEC-X-001", "source": "SEC"}
    ]


def test_the_wave_size_keeps_every_history_reachable():
    # Each history step is 11 positions: W = 11 puts the three sessions in waves 0, 1, 2; W = 12 puts the first two in one.
    turns = _turns({"NW-X-012": "NW-X-001", "NW-X-023": "NW-X-012"})
    reach = history_reach(turns)
    assert reach == 11
    chains = waves(sorted({str(t["session_id"]) for t in turns}), reach, {str(t["session_id"]): str(t["source"]) for t in turns})
    wave_of = {s: i for wave_list in chains.values() for i, w in enumerate(wave_list) for s in w}
    assert wave_of["NW-X-001"] < wave_of["NW-X-012"] < wave_of["NW-X-023"]
    assert history_reach(_turns({})) is None, "no history: no cap (the paper's benchmark)"
    assert history_reach(_turns({"NW-X-005": "NW-X-099"})) == 25, "a history outside a sample constrains nothing"
    # The cap applies to the default only: a W the user asks for stands, and a lower concurrency wins.
    assert resolve_wave_size(None, 32, reach) == 11
    assert resolve_wave_size(None, 4, reach) == 4
    assert resolve_wave_size(16, 32, reach) == 16


def _runner(home, condition: str, wave_size: int) -> PartitionRunner:
    agent = SimpleNamespace(condition=get_condition(condition), memory=build_memory(get_condition(condition)), observed=False)
    return PartitionRunner("m", agent, None, home, {}, "v1", concurrency=16, wave_size=wave_size)  # type: ignore[arg-type]


@pytest.mark.parametrize(("condition", "kept"), [("C", False), ("D", False), ("B", True)])
def test_checkpoints_of_another_wave_size_are_void_for_cross_session_conditions(tmp_path, condition, kept):
    _runner(tmp_path, condition, 4)._prepare_progress()
    marker = progress_dir(tmp_path, "m", condition) / "marker"
    marker.write_text("a checkpoint of the W = 4 run")
    _runner(tmp_path, condition, 4)._prepare_progress()
    assert marker.exists(), "same W: the checkpoints stand"
    _runner(tmp_path, condition, 16)._prepare_progress()
    assert marker.exists() is kept
    meta_path = progress_dir(tmp_path, "m", condition) / "_meta.json"
    meta = json.loads(meta_path.read_text())
    assert meta.get("wave_size") == (None if kept else 16)
    # Checkpoints written before waves were cut per source (same W, no `waves` in the meta).
    meta_path.write_text(json.dumps({k: v for k, v in meta.items() if k != "waves"}))
    marker.write_text("a checkpoint of waves of consecutive sessions across sources")
    _runner(tmp_path, condition, 16)._prepare_progress()
    assert marker.exists() is kept


class _Recording(PartitionRunner):
    """The runner's scheduling with turns that only record when they start (no agent, model or SQL)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.started: list[tuple[str, int]] = []
        self.fail_before_sending: set[str] = set()

    async def run_turn(self, turn, sent=None):  # type: ignore[no-untyped-def]
        self.started.append((turn["session_id"], turn["turn_index"]))
        if turn["session_id"] in self.fail_before_sending:
            raise RuntimeError(f"{turn['session_id']} failed before its first request")
        if sent is not None:
            sent.set()
        await asyncio.sleep(0.01)  # the model call
        return {**turn, "ex_strict": True, "model_error_type": None}

    def _commit_now(self, sessions):  # type: ignore[no-untyped-def]
        pass


def _recording(home, lengths: dict[str, int], wave_size: int | None = None) -> tuple[_Recording, list[dict]]:
    agent = SimpleNamespace(condition=get_condition("C"), memory=build_memory(get_condition("C")), observed=False)
    size = wave_size or len(lengths)
    runner = _Recording("m", agent, None, home, {}, "v1", concurrency=16, wave_size=size)  # type: ignore[arg-type]
    turns = [
        {"session_id": s, "source": s.split("-")[0], "turn_index": i}
        for s, n in lengths.items()
        for i in range(1, n + 1)
    ]
    return runner, turns


def test_a_waves_sessions_start_longest_first_each_after_the_one_before_sent_its_first_request(tmp_path):
    runner, turns = _recording(tmp_path, {"S-0": 1, "S-1": 3, "S-2": 2})
    rows, _ = asyncio.run(runner.run(turns))
    firsts = [sid for sid, index in runner.started if index == 1]
    assert firsts == ["S-1", "S-2", "S-0"]
    # Staggered, not serialized: every session had started before the longest one's second turn.
    assert runner.started[:3] == [("S-1", 1), ("S-2", 1), ("S-0", 1)]
    assert [(r["session_id"], r["turn_index"]) for r in rows] == sorted(
        (t["session_id"], t["turn_index"]) for t in turns
    )


def test_a_session_failing_before_its_first_request_stops_the_wave_from_starting_more(tmp_path):
    runner, turns = _recording(tmp_path, {"S-0": 1, "S-1": 3, "S-2": 2})
    runner.fail_before_sending = {"S-2"}
    with pytest.raises(RuntimeError, match="S-2 failed before its first request"):
        asyncio.run(runner.run(turns))
    assert [sid for sid, index in runner.started if index == 1] == ["S-1", "S-2"]  # S-0 never started


def test_each_sources_waves_run_beside_the_others_and_after_their_own(tmp_path):
    """W = 1: a source's sessions run one after another, while another source's fill the free slots."""
    runner, turns = _recording(tmp_path, {"BIRD-0": 4, "BIRD-1": 1, "NW-0": 1, "NW-1": 1}, wave_size=1)
    asyncio.run(runner.run(turns))
    at = {turn: i for i, turn in enumerate(runner.started)}
    assert at[("BIRD-1", 1)] > at[("BIRD-0", 4)]  # the next wave of its source: after the whole wave
    assert at[("NW-1", 1)] < at[("BIRD-0", 4)]  # another source's next wave did not wait for BIRD's
