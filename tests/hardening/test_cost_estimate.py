"""The estimate's prompts under conditions with memory (lib/harness/plan_prompts.py): each earlier
turn stands in with its ground truth, so they are the prompts of a model that answers every turn
with its ground truth, the `gold` built-in, turn by turn; and the estimate says which blocks it
leaves out."""

from __future__ import annotations

import pytest

from memsql_assets.lib.agent.agent import prompt_hash
from memsql_assets.lib.agent.conditions import get_condition
from memsql_assets.lib.benchmark.store import read_turns, turn_id
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.plan_prompts import left_out, stand_in_messages
from memsql_assets.lib.harness.sample import sample_turns
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK, context_mode

SESSIONS = 9


@pytest.mark.parametrize("condition", ["B", "H", "S"])
def test_the_stand_in_prompts_are_those_of_a_model_that_answers_the_ground_truth(home, condition):
    out = evaluate_partition(home, "gold", condition, EvalSettings(sessions=SESSIONS))
    turns = sample_turns(read_turns(benchmark_dir(home)), SESSIONS)
    mode = context_mode(condition, PAPER_BENCHMARK)
    planned = dict(stand_in_messages(home, get_condition(condition), turns, mode, wave_size=1))
    ran = {f"{r['session_id']}#{r['turn_index']}": r["prompt_hash"] for r in out.rows}
    assert len(ran) == len(turns) == len(planned)
    differ = [t for t in map(turn_id, turns) if prompt_hash(planned[t]) != ran[t]]
    assert not differ, f"{len(differ)} of {len(turns)} prompts differ, first {differ[0]}"
    assert any("Recent conversation:" in m[1]["content"] or "Summary of earlier turns:" in m[1]["content"]
               for m in planned.values()), "the memory's blocks are there"  # fmt: skip


def test_the_estimate_names_the_blocks_it_leaves_out():
    assert left_out(get_condition("A")) is None and left_out(get_condition("C")) is None
    assert left_out(get_condition("E_prompt")) == "the retrieved trajectory"
    assert left_out(get_condition("M0")) == "mem0's retrieved turns"
