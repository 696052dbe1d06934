"""Each SPEC §1 invariant, broken on purpose, fails its GX suite with a message naming what broke."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from memsql_assets.lib.benchmark.invariants import WHOLE_BENCHMARK_COUNTS, expected_counts, violations
from memsql_assets.lib.benchmark.sample import sample_sessions
from memsql_assets.lib.quality.frames import sessions_frame, turns_frame
from memsql_assets.lib.quality.gx_suites import validate


def _check(turns):
    s = validate(sessions_frame(turns), "benchmark_sessions", "session_id")
    t = validate(turns_frame(turns), "benchmark_turns", "turn_id")
    return s, t


@pytest.mark.slow
def test_generated_benchmark_passes_both_suites(embedded_turns):
    s, t = _check(embedded_turns)
    assert s.success, s.failures
    assert t.success, t.failures
    assert s.evaluated >= 20 and t.evaluated >= 10


def _drop_session(turns, sid="NW-1-003"):
    return [t for t in turns if t["session_id"] != sid]


def _flag_first_turn(turns):
    for t in turns:
        if t["session_id"] == "SEC-2-005" and t["turn_index"] == 1:
            t["memory_critical"] = True
    return turns


def _unbind_key(turns):
    for t in turns:
        if t["session_id"] == "BIRD-3-002" and t["turn_index"] == 1:
            t["state_updates"] = {"loan_status": t["state_updates"]["loan_status"]}
    return turns


def _duplicate_id(turns):
    for t in turns:
        if t["session_id"] == "SEC-1-002":
            t["session_id"] = "SEC-1-001"
    return turns


def _bad_id_format(turns):
    for t in turns:
        if t["session_id"] == "NW-1-001":
            t["session_id"] = "NW-1-1"
    return turns


def _eleventh_ten_turn(turns):
    # a tenth turn appended to a nine-turn NW session: eight ten-turn NW sessions.
    extra = copy.deepcopy(next(t for t in turns if t["session_id"] == "NW-3-001" and t["turn_index"] == 10))
    extra["session_id"] = "NW-3-002"
    return turns + [extra]


def _drop_fallback(turns):
    for t in turns:
        if t["session_id"] == "NW-2-007" and t["turn_index"] == 3:
            t["fallback_sql"] = None
    return turns


def _unknown_source(turns):
    # the suite's value set is the vocabulary's sources, filled in when it is validated
    for t in turns:
        if t["session_id"] == "NW-1-002":
            t["source"] = "XX"
    return turns


def _drop_requirement(turns):
    for t in turns:
        if t["session_id"] == "SEC-3-004" and t["turn_index"] == 9:
            t["output_requirements"] = "  "
    return turns


def _drop_paraphrase(turns):
    for t in turns:
        if t["session_id"] == "BIRD-2-003" and t["turn_index"] == 2:
            t["paraphrase_sql"] = ""
    return turns


def _wrong_tier_shape(turns):
    return [t for t in turns if not (t["session_id"] == "BIRD-2-004" and t["turn_index"] == 4)]


CASES = [
    (_drop_session, "sessions", "300 sessions", None),
    (_drop_session, "turns", "1,400 turns", None),
    (_flag_first_turn, "turns", "turn 1 is never memory-critical", "SEC-2-005#1"),
    (_unbind_key, "turns", "every referenced key is bound by an earlier state_updates", "BIRD-3-002#2"),
    (_duplicate_id, "turns", "one row per (session, turn index)", None),
    (_bad_id_format, "sessions", "session id format PREFIX-TIER-NNN", "NW-1-1"),
    (_unknown_source, "sessions", "known sources", "NW-1-002"),
    (_eleventh_ten_turn, "sessions", "7 ten-turn NW sessions", None),
    (_drop_fallback, "turns", "every memory-critical turn has fallback_sql", "NW-2-007#3"),
    (_drop_requirement, "turns", "every turn states its output requirements", "SEC-3-004#9"),
    (_drop_paraphrase, "turns", "every turn has the paraphrase reference model's SQL", "BIRD-2-003#2"),
    (_wrong_tier_shape, "sessions", "T1 = 1 turn, T2 = 4 turns", "BIRD-2-004"),
    (_wrong_tier_shape, "turns", "1,100 memory-critical turns", None),
]


@pytest.mark.parametrize(
    ("breaker", "suite", "invariant", "failing_id"), CASES, ids=[c[0].__name__ + "-" + c[1] for c in CASES]
)
def test_broken_invariant_fails_with_named_message(embedded_turns, breaker, suite, invariant, failing_id):
    broken = breaker(copy.deepcopy(embedded_turns))
    s, t = _check(broken)
    report = s if suite == "sessions" else t
    assert not report.success
    matching = [f for f in report.failures if invariant in f]
    assert matching, report.failures
    if failing_id:
        assert failing_id in " ".join(matching)
    assert violations(broken), "the generator's own fail-fast verification must agree"


SIZE = 45  # a sized build (the size setting): the sample `memsql eval --sessions 45` takes


def _sized(turns, size=SIZE):
    chosen = set(sample_sessions(turns, size))
    return [t for t in turns if t["session_id"] in chosen]


def test_a_sized_build_passes_with_its_own_counts_and_says_what_it_left_out(embedded_turns):
    sample = _sized(embedded_turns)
    s = validate(sessions_frame(sample), "benchmark_sessions", "session_id", sessions=SIZE)
    t = validate(turns_frame(sample), "benchmark_turns", "turn_id", sessions=SIZE)
    assert s.success and t.success, s.failures + t.failures
    assert s.left_out == ["7 ten-turn NW sessions", "9 ten-turn SEC sessions", "4 ten-turn BIRD sessions", "1,400 turns in all"]
    assert t.left_out == ["1,400 turns", "1,100 memory-critical turns (78.57 %)"]
    whole = validate(sessions_frame(sample), "benchmark_sessions", "session_id")
    assert not whole.success and any("300 sessions" in f for f in whole.failures) and whole.left_out == []


def test_the_expected_counts_of_a_size_are_those_of_its_sample(embedded_turns):
    for size in (9, SIZE, 100, 299):
        per = Counter((t["source"], t["tier"]) for t in _sized(embedded_turns, size) if t["turn_index"] == 1)
        counts = expected_counts(size)
        assert counts["sessions"] == size == sum(per.values())
        assert {(p, tier): counts[f"{p.lower()}_t{tier}_sessions"] for p, tier in per} == dict(per)
        assert counts["tier_3_sessions"] == sum(n for (_, tier), n in per.items() if tier == 3)
    assert WHOLE_BENCHMARK_COUNTS.isdisjoint(expected_counts(SIZE)) and set(expected_counts()) >= WHOLE_BENCHMARK_COUNTS


def test_a_sized_build_missing_a_session_fails_naming_its_counts(embedded_turns):
    sample = _sized(embedded_turns)
    dropped = sorted({t["session_id"] for t in sample if t["session_id"].startswith("NW-2-")})[0]
    s = validate(sessions_frame(_drop_session(sample, dropped)), "benchmark_sessions", "session_id", sessions=SIZE)
    counts = expected_counts(SIZE)
    named = (f"{SIZE} sessions", f"{counts['nw_sessions']} Northwind sessions", f"{counts['tier_2_sessions']} tier-2 sessions")
    assert not s.success and all(any(n in f for f in s.failures) for n in named), s.failures
