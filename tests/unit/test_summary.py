"""Partition summaries: turns in numeric order, and no number for what has nothing to score."""

from __future__ import annotations

from memsql_assets.defs.evaluation.assets import _table
from memsql_assets.lib.evaluation.interval import ex_interval
from memsql_assets.lib.harness.summary import cross_session_turns, summarize
from memsql_assets.lib.vocabulary import ERROR_CLASSES


def _row(turn_index: int, ex: bool, critical: bool = True) -> dict:
    return {
        "session_id": "NW-3-001",
        "turn_index": turn_index,
        "tier": 3,
        "source": "NW",
        "ex_strict": ex,
        "ex_bag": ex,
        "ex_set": ex,
        "memory_critical": critical and turn_index > 1,
        "error_class": ERROR_CLASSES[0] if ex else ERROR_CLASSES[1],
        "contaminated": False,
        "fallback_match": False,
        "gt_error": None,
        "model_error_type": None,
        "attempts": 1,
        "cache_hit": False,
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.0,
    }


def test_ex_by_turn_is_in_numeric_order_in_the_summary_and_the_ui_table():
    rows = [_row(t, t % 2 == 0) for t in range(10, 0, -1)]
    s = summarize(rows, "m", "A", 1.0)
    assert list(s.ex_by_turn_index) == list(range(1, 11))
    table_turns = [line.split("|")[1].strip() for line in _table("turn", s.ex_by_turn_index).splitlines()[2:]]
    assert table_turns == [str(t) for t in range(1, 11)]


def test_an_empty_denominator_is_none_as_in_dbt():
    s = summarize([_row(1, True)], "m", "A", 1.0)  # turn 1 is never memory-critical
    assert s.ex_strict == 100.0 and s.ex_memory_critical is None
    assert summarize([], "m", "A", 0.0).ex_strict is None


def test_the_interval_counts_sessions_not_turns():
    one = summarize([_row(t, True) for t in range(1, 11)], "m", "A", 1.0)
    assert one.sessions == 1 and one.ex_strict == 100.0
    lo, hi = one.ex_strict_ci95
    assert hi == 100.0 and lo < 30, "ten turns of one session are one observation"
    assert summarize([], "m", "A", 0.0).ex_strict_ci95 is None


def test_an_entry_configured_to_reason_without_reasoning_tokens_warns():
    silent = [{**_row(t, True), "reasoning_tokens": 0} for t in (1, 2)]
    s = summarize(silent, "gpt-5.2", "B", 1.0, reasoning_expected=True)
    [warning] = s.warnings
    assert warning.startswith("gpt-5.2 is configured to reason, but its 2 answered turns under B report 0")
    assert summarize(silent, "gpt-5.2", "B", 1.0).warnings == [], "not configured to reason"
    thinking = [*silent[:1], {**silent[1], "reasoning_tokens": 12}]
    s = summarize(thinking, "gpt-5.2", "B", 1.0, reasoning_expected=True)
    assert s.warnings == [] and s.reasoning_tokens == 12
    failed = [{**r, "model_error_type": "timeout"} for r in silent]
    assert summarize(failed, "gpt-5.2", "B", 1.0, reasoning_expected=True).warnings == [], "no answer, no claim"


def test_cross_session_turns_are_a_figure_of_their_own_with_an_interval_over_turns():
    """Turns 2-5 are within-session memory-critical (3 of 4 right); turns 6-9, tagged cross-session in
    the benchmark, are right once; turn 1 is in neither figure."""
    turns = [{"session_id": "NW-3-001", "turn_index": t, "tag": "cross_session" if t > 5 else "long_range"} for t in range(1, 10)]
    rows = [_row(t, t in (1, 2, 3, 4, 6)) for t in range(1, 10)]
    rows[6]["contaminated"] = True
    s = summarize(rows, "m", "C", 1.0, cross_session=cross_session_turns(turns))
    assert (s.n_within_session, s.ex_within_session) == (4, 75.0)
    assert (s.n_cross_session, s.ex_cross_session, s.contaminated_cross_session) == (4, 25.0, 1)
    assert s.ex_cross_session_ci95 == list(ex_interval(1, 4, 4)), "Wilson with the turn as the unit"
    assert s.ex_within_session_ci95 == list(ex_interval(3, 4, 4))
    plain = summarize(rows, "m", "C", 1.0)  # the paper's benchmark: no turn is tagged
    assert plain.ex_cross_session is None and plain.ex_cross_session_ci95 is None
    assert plain.ex_within_session == plain.ex_memory_critical
