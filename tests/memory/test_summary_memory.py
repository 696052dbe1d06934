"""Condition S's extractive rolling summary, and what the two probes read of it."""

from __future__ import annotations

from memsql_assets.lib.agent.prompts import PromptParts, build_messages
from memsql_assets.lib.memory.protocol import MemoryTurn, PromptBlock
from memsql_assets.lib.memory.summary import SUMMARY_HEADER, RollingSummary, SummaryParams, extract
from memsql_assets.lib.reference.builtins import parse_resolved_block
from memsql_assets.lib.reference.reader_probe import past_turns


def turn(i, updates, sid="SEC-3-001"):
    return {
        "session_id": sid,
        "turn_index": i,
        "source": "SEC",
        "question": f"question {i}",
        "sql": f"SELECT {i}",
        "result_summary": f"[({i},)]",
        "state_updates": updates,
    }


def test_the_summary_keeps_the_turns_that_bound_the_current_state_and_the_newest():
    kept = []
    for t in (turn(1, {"ticker": "AAPL", "years": [2022, 2023]}), turn(2, {}), turn(3, {"metric": "net_income"})):
        kept = extract(kept, t, max_turns=3)
    assert [k["turn_index"] for k in kept] == [1, 3], "turn 2 bound nothing and is no longer the newest"
    assert "result_summary" not in kept[0], "result lines are dropped: the summary compresses"
    kept = extract(kept, turn(4, {"metric": "cash"}), max_turns=3)
    assert [k["turn_index"] for k in kept] == [1, 4], "turn 3's metric was overwritten by turn 4's"


def test_at_most_max_turns_are_kept_and_a_dropped_turn_never_comes_back():
    kept = []
    for i, key in enumerate(("a", "b", "c", "d"), start=1):
        kept = extract(kept, turn(i, {key: i}), max_turns=2)
    assert [k["turn_index"] for k in kept] == [3, 4]
    kept = extract(kept, turn(5, {}), max_turns=2)
    assert [k["turn_index"] for k in kept] == [4, 5], "turn 3 is dropped and turn 1 does not return"


def test_the_summary_resolves_the_newest_binding_and_shows_question_and_sql():
    memory = RollingSummary(SummaryParams(max_turns=3))
    for t in (turn(1, {"ticker": "AAPL", "metric": "revenue"}), turn(2, {"metric": "cash"})):
        memory.persist(t)
    got = memory.retrieve(MemoryTurn("SEC-3-001", 3, "SEC", "And net income?", ("ticker", "metric")), None)
    assert got.resolution.values == {"ticker": "AAPL", "metric": "cash"}
    assert got.resolution.origins == {"ticker": "summary:SEC-3-001#1", "metric": "summary:SEC-3-001#2"}
    (block,) = got.blocks
    assert block == PromptBlock(SUMMARY_HEADER, "Q: question 1\nSQL: SELECT 1\n\nQ: question 2\nSQL: SELECT 2")
    memory.forget("SEC-3-001")
    assert memory.retrieve(MemoryTurn("SEC-3-001", 1, "SEC", "q", ()), None).blocks == ()


def test_the_reader_probe_reads_the_summarys_turns_and_stops_at_the_next_block():
    parts = PromptParts(
        source="SEC",
        schema="CREATE TABLE t (x);",
        question="And net income?",
        output_requirements="One row.",
        blocks=(PromptBlock(SUMMARY_HEADER, "Q: question 1\nSQL: SELECT 1\n\nQ: question 2\nSQL: SELECT 2").render(),),
        resolved={"ticker": "AAPL"},
    )
    messages = build_messages(parts)
    turns = past_turns([m["content"] for m in messages], SUMMARY_HEADER)
    assert [(t.question, t.sql) for t in turns] == [("question 1", "SELECT 1"), ("question 2", "SELECT 2")]
    assert parse_resolved_block(messages) == {"ticker": "AAPL"}, "recall-probe reads the Resolved block"


# One customer written three ways (DESIGN: a memory's choices depend on what an earlier SQL means).
CUSTOMER_SQL = {
    "id": "o.CustomerID = '{id}'",
    "lookup": "o.CustomerID = (SELECT CustomerID FROM Customers WHERE CompanyName = '{name}')",
    "join": "o.CustomerID IN (SELECT c.CustomerID FROM Customers c WHERE c.CompanyName = '{name}')",
}
JOINED = "SELECT COUNT(*) FROM Orders o JOIN Customers c ON c.CustomerID = o.CustomerID WHERE c.CompanyName = '{name}'{year}"


def _nw_turn(i, question, customer, style, year=None):
    id_, name = customer
    year_sql = f" AND strftime('%Y', o.OrderDate) = '{year}'" if year else ""
    if style == "join":
        sql = JOINED.format(name=name, year=year_sql)
    else:
        sql = f"SELECT COUNT(*) FROM Orders o WHERE {CUSTOMER_SQL[style].format(id=id_, name=name)}{year_sql}"
    return {"session_id": "NW-X-013", "turn_index": i, "source": "NW", "question": question, "sql": sql}


def test_the_observed_summary_keeps_the_same_turns_however_the_sql_writes_the_customer():
    from memsql_assets.lib.context_mode import ContextMode

    thread, detour = ("DELAG", "Delagrange"), ("AROUT", "Around the Horn")
    kept_by_style = {}
    for thread_style in CUSTOMER_SQL:
        for detour_style in CUSTOMER_SQL:
            session = [
                _nw_turn(1, "How many orders did Delagrange place?", thread, thread_style),
                _nw_turn(2, "And in 1997?", thread, thread_style, 1997),
                _nw_turn(3, "Separately: Around the Horn's orders in 1998?", detour, detour_style, 1998),
                _nw_turn(4, "Back to Delagrange: how many in 1996?", thread, thread_style, 1996),
            ]
            kept: list = []
            indexes = []
            for t in session:
                kept = extract(kept, t, max_turns=3, mode=ContextMode.OBSERVED)
                indexes.append([k["turn_index"] for k in kept])
            kept_by_style[(thread_style, detour_style)] = indexes
    assert len({str(v) for v in kept_by_style.values()}) == 1, kept_by_style
    # The customer is one key: the detour's customer replaces the thread's; the year, another, too.
    assert kept_by_style[("id", "id")] == [[1], [2], [3], [4]]
