"""What the agent is shown of a query: whole rows up to SHOWN_ROWS within its observation budget,
how many more there are, and which values were cut (trajectories/tools.py)."""

from __future__ import annotations

import json
import re

from memsql_assets.lib.agent.turn_tools import CallOutcome, TurnTools
from memsql_assets.lib.trajectories.tools import SHOWN_ROWS, VALUE_CHARS, DbTools


def run(box: TurnTools, tool: str, sql: str) -> str:
    use, text = box.run({"id": "c1", "name": tool, "arguments": json.dumps({"sql": sql})})
    assert use.outcome is CallOutcome.OK, use.error
    return text


def shown_rows(text: str) -> list[str]:
    return re.findall(r"\((\d+),\)", text)


def test_six_rows_are_all_shown_and_twenty_five_say_how_many_more(bird):
    box = TurnTools(bird)
    six = run(box, "execute_sql", "SELECT loan_id FROM loan ORDER BY loan_id LIMIT 6")
    assert six.startswith("6 rows [loan_id]: ") and len(shown_rows(six)) == 6 and "not shown" not in six
    many = run(box, "execute_sql", "SELECT loan_id FROM loan ORDER BY loan_id LIMIT 25")
    assert len(shown_rows(many)) == SHOWN_ROWS and many.endswith("(and 5 more rows not shown)")
    capped = run(box, "execute_sql", "SELECT loan_id FROM loan")  # past the query's row cap
    assert capped.startswith("200+ rows") and capped.endswith("(and more than 180 more rows not shown)")


def test_validate_result_shows_the_rows_it_checked(bird):
    text = run(TurnTools(bird), "validate_result", "SELECT loan_id FROM loan ORDER BY loan_id LIMIT 7")
    assert text.startswith("valid: 7 rows × 1 cols, 0 NULL cells, 0 duplicate rows: ")
    assert len(shown_rows(text)) == 7


def test_a_cut_value_says_so_and_rows_are_never_cut_mid_value(bird):
    long_value = "SELECT replace(hex(zeroblob(50)), '00', 'ab') AS v, loan_id FROM loan LIMIT 2"
    text = run(TurnTools(bird), "execute_sql", long_value)
    assert text.count(f"{'ab' * (VALUE_CHARS // 2)}…[cut, {100 - VALUE_CHARS} more chars]") == 2
    short = DbTools(bird.conn, bird.db, bird.stats)  # a trajectory's 200-character budget
    text = short.call("execute_sql", {"sql": "SELECT loan_id, status FROM loan ORDER BY loan_id LIMIT 30"}).observation
    rows = re.findall(r"\(\d+, '[A-D]'\)", text)
    assert 0 < len(rows) < SHOWN_ROWS and len(text) <= 200
    assert text.endswith(f"(and {30 - len(rows)} more rows not shown)") and "…" not in text
