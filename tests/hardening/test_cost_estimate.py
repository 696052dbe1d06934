"""The estimate's prompts under conditions with memory (lib/harness/plan_prompts.py): each earlier
turn stands in with its ground truth, so they are the prompts of a model that answers every turn
with its ground truth, the `gold` built-in: the same prompts under window and summary memories, and
under episodic ones the same number of past turns shown (which similar turns, only Chroma's search
names). The estimate names the blocks it leaves out."""

from __future__ import annotations

import json

import pytest

from memsql_assets.lib.agent.agent import prompt_hash
from memsql_assets.lib.benchmark.sample import sample_turns
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.conditions import get_condition
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.plan_prompts import left_out, stand_in_messages
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK, context_mode

SESSIONS = 9
WAVE = 2  # several waves per source: C sees its source's earlier waves


def planned_and_sent(home, condition: str) -> tuple[dict, dict]:
    """Each turn's planned messages, and the messages the gold model's run sent (request store)."""
    out = evaluate_partition(home, "gold", condition, EvalSettings(sessions=SESSIONS, wave_size=WAVE))
    turns = sample_turns(read_turns(benchmark_dir(home)), SESSIONS)
    mode = context_mode(condition, PAPER_BENCHMARK)
    planned = dict(stand_in_messages(home, get_condition(condition), turns, mode, WAVE))
    sent = {}
    for path in RequestStore.at_home(home).root.glob("??/*.json"):
        record = json.loads(path.read_bytes())
        cell = record["cell"]
        if cell["condition"] == condition:
            sent[f"{cell['session']}#{cell['turn']}"] = record["request"]["messages"]
    assert len(out.rows) == len(turns) == len(planned) == len(sent)
    return planned, sent


@pytest.mark.parametrize("condition", ["B", "H", "S"])
def test_the_stand_in_prompts_are_those_of_a_model_that_answers_the_ground_truth(home, condition):
    planned, sent = planned_and_sent(home, condition)
    differ = [t for t in planned if prompt_hash(planned[t]) != prompt_hash(sent[t])]
    assert not differ, f"{len(differ)} of {len(planned)} prompts differ, first {differ[0]}"
    blocks = ("Recent conversation:", "Summary of earlier turns:")
    assert any(b in m[1]["content"] for m in planned.values() for b in blocks), "the memory's blocks are there"


def test_under_c_each_prompt_shows_as_many_past_turns_as_the_run_did(home):
    planned, sent = planned_and_sent(home, "C")
    shown = {t: m[1]["content"].count("\nQ: ") for t, m in planned.items()}
    assert shown == {t: m[1]["content"].count("\nQ: ") for t, m in sent.items()}
    assert any("Similar past turns:" in m[1]["content"] for m in planned.values())
    chars = [sum(len(m[1]["content"]) for m in side.values()) for side in (planned, sent)]
    print(f"C: {sum(shown.values())} past turns shown; prompt characters planned {chars[0]:,}, sent {chars[1]:,}")
    assert abs(chars[0] - chars[1]) <= 0.05 * chars[1], "the similar turns stood in for are of a like size"


def test_the_estimate_names_the_blocks_it_leaves_out():
    assert left_out(get_condition("A")) is None and left_out(get_condition("C")) is None
    assert left_out(get_condition("E_prompt")) == "the retrieved trajectory"
    assert left_out(get_condition("M0")) == "mem0's retrieved turns"
