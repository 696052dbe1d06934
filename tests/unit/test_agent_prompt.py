"""Agent prompt composition per condition (golden files) and context resolution."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from memsql_assets.lib.agent.agent import Agent
from memsql_assets.lib.agent.prompts import OUTPUT_REQUIREMENTS_HEADER, SYSTEM_PROMPT, PromptParts
from memsql_assets.lib.conditions import CONDITIONS, get_condition
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.memory.mem0_memory import MEM0_SHARDS
from memsql_assets.lib.memory.plugins import build_memory
from memsql_assets.lib.memory.resolution import resolve_context, retrieved_sessions
from memsql_assets.lib.vocabulary import AGENTSM_CONDITION, PROMPT_TRAJECTORY_CONDITION, REPORT_SOURCES

GOLDEN = Path(__file__).with_name("golden")
TURN = {
    "session_id": "SEC-3-004",
    "turn_index": 9,
    "source": "SEC",
    "question": "And total liabilities?",
    "referenced_context_keys": ["ticker", "older_year", "newer_year"],
    "state_updates": {"metric": "total_liabilities"},
    "output_requirements": "Return one row per fiscal year, ordered by year, with two columns: fiscal_year "
    "(an integer) and value_billions (the metric in billions of US dollars, rounded to 2 decimals).",
}


def _payload(sid, t, question, updates):
    return {
        "session_id": sid,
        "turn_index": t,
        "source": "SEC",
        "question": question,
        "sql": f"SELECT {t}",
        "result_summary": f"[({t},)]",
        "state_updates": updates,
    }


class FakeWorking:
    """Narrow fake: the last turns of SEC-3-004 (turn 1's ticker and years are outside any window)."""

    def recall(self, session_id, window):
        turns = [
            _payload(session_id, t, f"question {t}", {"metric": f"m{t}"} if t % 2 else {})
            for t in range(8, 0, -1)
        ]
        return [p for p in turns if p["turn_index"] != 1][:window]

    def append(self, session_id, payload, window):
        raise AssertionError("assemble must not write")


class FakeEpisodic:
    def query(self, text, k=3, source=None, exclude_session=None, embedding=None, session_id=None, among=None):
        hits = [
            _payload(
                "SEC-3-004",
                1,
                "Show Quarvex revenue for 2024 and 2025.",
                {"ticker": "QRVX", "metric": "revenue", "older_year": 2024, "newer_year": 2025},
            ),
            _payload("SEC-3-002", 9, "And total liabilities?", {"metric": "total_liabilities"}),
        ]
        return hits[:k]


class FakeSemantic:
    def query(self, text, source, k=1, embedding=None):
        return [{"text": "annual_financials contains ticker, fiscal_year, metric, and value_billions"}][:k]


class FakeMem0:
    """Narrow fake of a mem0 shard's Memory: the session's turns 2-8 as search hits, scored by recency."""

    def search(self, query, filters, top_k, threshold):
        sid = filters["user_id"]
        turns = FakeWorking().recall(sid, None)
        return {
            "results": [
                {"score": 0.1 * p["turn_index"], "metadata": {"turn_index": p["turn_index"], "payload": _json(p)}}
                for p in turns
            ]
        }


def _json(payload):
    import json

    return json.dumps(payload, sort_keys=True)


def _memory(condition):
    """The condition's memory implementation over narrow fakes of its stores (what `open` would connect)."""
    memory = build_memory(get_condition(condition))
    stores = {
        "working": FakeWorking(),
        "episodic": FakeEpisodic(),
        "semantic": FakeSemantic(),
        "lookup": lambda source, question, vector=None: "## Explore (steps 1-2)\n- list_tables()",
        "shards": {shard: FakeMem0() for shard in range(MEM0_SHARDS)},
        "k": 2,
    }
    for name, store in stores.items():
        setattr(memory, name, store)
    if condition == "S":  # the summary rolls forward over the session's earlier turns
        for payload in reversed(FakeWorking().recall(TURN["session_id"], None)):
            memory.persist(payload)
    return memory


def _agent(condition):
    return Agent(
        get_condition(condition),
        {"SEC": "CREATE TABLE companies (ticker TEXT PRIMARY KEY, company_name TEXT);"},
        _memory(condition),
    )


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_prompt_per_condition_matches_golden_file(condition):
    prompt = asyncio.run(_agent(condition).assemble(TURN))
    assert prompt.messages[0] == {"role": "system", "content": SYSTEM_PROMPT}
    text = prompt.messages[1]["content"]
    golden = GOLDEN / f"prompt_{condition}.txt"
    if os.environ.get("MEMSQL_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_output_requirements_are_the_last_block_and_identical_in_every_condition(condition):
    text = asyncio.run(_agent(condition).assemble(TURN)).messages[1]["content"]
    block = f"{OUTPUT_REQUIREMENTS_HEADER}\n{TURN['output_requirements']}"
    assert text.endswith(f"Question: {TURN['question']}\n\n{block}")
    assert text.count(OUTPUT_REQUIREMENTS_HEADER) == 1


@pytest.mark.slow
def test_every_benchmark_turn_prompt_ends_with_its_requirement_in_every_condition(embedded_turns):
    schemas = {src: f"CREATE TABLE {src.lower()}_t (x);" for src in REPORT_SOURCES}

    async def texts(condition):
        agent = _agent(condition)
        agent.schemas = schemas
        prompts = await asyncio.gather(*(agent.assemble(t) for t in embedded_turns))
        return [p.messages[1]["content"] for p in prompts]

    for condition in CONDITIONS:
        for turn, text in zip(embedded_turns, asyncio.run(texts(condition)), strict=True):
            assert text.endswith(f"\n\n{OUTPUT_REQUIREMENTS_HEADER}\n{turn['output_requirements']}"), (
                condition,
                turn["session_id"],
                turn["turn_index"],
            )


def test_agentsm_puts_only_the_explore_segment_in_the_first_message_and_the_prompt_variant_all():
    markdown = "# Trajectory: q\n\n## Explore (steps 1-2)\n- list_tables()\n\n## Execute (step 3)\n- execute_sql()\n"
    prompts = {}
    for condition in (AGENTSM_CONDITION, PROMPT_TRAJECTORY_CONDITION):
        agent = _agent(condition)
        agent.memory.lookup = lambda source, question, vector=None: markdown
        prompts[condition] = asyncio.run(agent.assemble(TURN))
    agentsm, single = prompts[AGENTSM_CONDITION], prompts[PROMPT_TRAJECTORY_CONDITION]
    assert "## Explore" in agentsm.messages[1]["content"] and "## Execute" not in agentsm.messages[1]["content"]
    assert agentsm.trajectory["execute"].startswith("## Execute") and "explore" in agentsm.trajectory
    assert "## Execute" in single.messages[1]["content"] and not single.trajectory


def test_a_turn_without_output_requirements_is_a_clear_error():
    turn = {k: v for k, v in TURN.items() if k != "output_requirements"}
    with pytest.raises(ValueError, match="no output_requirements.*rematerialize the `sessions` asset"):
        asyncio.run(_agent("B").assemble(turn))
    with pytest.raises(ValueError, match="no output_requirements"):
        PromptParts(source="SEC", schema="", question="q", output_requirements=" \n")


def test_condition_blocks():
    texts = {c: asyncio.run(_agent(c).assemble(TURN)).messages[1]["content"] for c in CONDITIONS}
    assert "Recent conversation" not in texts["A"] and "Resolved context" not in texts["A"]
    assert texts["B"].count("Q: question") == 2 and texts["B_wm5"].count("Q: question") == 5
    assert "Similar past turns" in texts["C"] and "Semantic hints" not in texts["C"]
    assert "Semantic hints" in texts["D"] and "Reference trajectory" in texts[PROMPT_TRAJECTORY_CONDITION]
    assert "Reference trajectory" in texts[AGENTSM_CONDITION]
    assert '- ticker: "QRVX"' in texts["C"] and '- ticker: "QRVX"' not in texts["B_wm5"]
    assert texts["T_schema"] == texts["B_wm5"], "T_schema's first message is B_wm5's prompt (the loop adds its tools)"
    # T's is the same without the source guidance and the schema: the agent finds them with its tools
    assert "Schema:" not in texts["T"] and "Source guidance:" not in texts["T"]
    assert texts["B_wm5"].endswith("\n\n" + texts["T"])
    assert texts[AGENTSM_CONDITION] == texts["E_schema"][texts["E_schema"].index("Reference trajectory") :]
    assert texts["H"].count("Q: question") == 7, "H shows every earlier turn the session has"
    assert "Summary of earlier turns:" in texts["S"] and "Result:" not in texts["S"]
    assert "Similar past turns" in texts["M0"] and "Recent conversation" not in texts["M0"]


def test_resolution_walks_working_memory_first_then_episodic():
    working = [
        _payload("S-1", 3, "q3", {"year": 2020}),
        _payload("S-1", 2, "q2", {"year": 2019, "ticker": "A"}),
    ]
    episodic = [_payload("S-0", 1, "q", {"ticker": "B", "region": "x"})]
    res = resolve_context(["year", "ticker", "region", "missing"], working, episodic)
    assert res.values == {"year": 2020, "ticker": "A", "region": "x"}
    assert res.origins == {"year": "working:S-1#3", "ticker": "working:S-1#2", "region": "episodic:S-0#1"}
    assert res.missing == ["missing"]
    assert res.supplying_sessions == ("S-0",)  # working memory never names another session


def test_resolution_records_which_retrieved_sessions_supplied_keys():
    episodic = [
        _payload("S-3", 1, "q", {"other": 1}),
        _payload("S-2", 1, "q", {"ticker": "B"}),
        _payload("S-3", 2, "q", {"year": 2021}),
        _payload("S-1", 1, "q", {"ticker": "C", "year": 2020}),
    ]
    res = resolve_context(["ticker", "year"], [], episodic)
    assert res.values == {"ticker": "B", "year": 2021}
    assert res.supplying_sessions == ("S-2", "S-3")
    assert retrieved_sessions(episodic) == ("S-3", "S-2", "S-1")


def test_unknown_condition_is_a_clear_error():
    with pytest.raises(MemsqlError, match="unknown condition 'F'; expected one of"):
        get_condition("F")


class ListWorking:
    """Narrow fake of working memory that counts its reads."""

    def __init__(self):
        self.lists, self.recalls = {}, 0

    def recall(self, session_id, window):
        self.recalls += 1
        return self.lists.get(session_id, [])[:window]

    def append(self, session_id, payload, window):
        self.lists[session_id] = [payload, *self.lists.get(session_id, [])][:window]
        return list(self.lists[session_id])


def test_a_session_reads_working_memory_once_then_from_each_append_reply():
    working = ListWorking()
    memory = build_memory(get_condition("B"))
    memory.working = working
    agent = Agent(get_condition("B"), {"SEC": "CREATE TABLE t (x);"}, memory)
    turns = [{**TURN, "turn_index": i, "referenced_context_keys": []} for i in (1, 2, 3)]
    for turn in turns:
        prompt = asyncio.run(agent.assemble(turn))
        assert prompt.working == working.recall(turn["session_id"], 2)  # what a read would give
        agent.persist(turn, f"SELECT {turn['turn_index']}", "")
    assert working.recalls == 3 + 1  # the first turn's read, and the three checks above
    asyncio.run(agent.assemble(turns[0]))  # the session redone from its first turn: read again
    assert working.recalls == 5
    working.lists.clear()
    working.clear = lambda session_id: None
    memory.forget(TURN["session_id"])  # the runner emptied the session's memory: nothing to read
    assert asyncio.run(agent.assemble(turns[0])).working == [] and working.recalls == 5


@pytest.mark.parametrize("source", REPORT_SOURCES)
def test_observed_prompts_leave_out_the_resolved_context_line_annotated_ones_keep_it_verbatim(source):
    from memsql_assets.lib.agent.prompts import build_messages
    from memsql_assets.lib.sources.guidance import RESOLVED_CONTEXT_LINE, SOURCE_GUIDANCE

    (line,) = [g for g in SOURCE_GUIDANCE[source] if g.startswith(RESOLVED_CONTEXT_LINE)]
    parts = {"source": source, "schema": "CREATE TABLE t (x)", "question": "q", "output_requirements": "one row"}
    annotated = build_messages(PromptParts(**parts))[1]["content"]
    observed = build_messages(PromptParts(**parts, observed=True))[1]["content"]
    assert f"- {line}\n" in annotated
    assert RESOLVED_CONTEXT_LINE not in observed
    assert annotated.replace(f"- {line}\n", "") == observed, "nothing else differs"
