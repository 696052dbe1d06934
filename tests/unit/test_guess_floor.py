"""The paper benchmark is hard to guess on the embedded sources: guess-probe (the most common values,
no memory) stays at most GUESS_FLOOR_MAX_PCT % on memory-critical turns, so does the mean
guess_rate, the year pairs go both ways, and a binary turn's answer needs its supporting value."""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict

import pytest

from memsql_assets.lib.reference.builtins import answer
from memsql_assets.lib.sql.compare import strict_equal
from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.vocabulary import GUESS_FLOOR_MAX_PCT, GUESS_PROBE, SOURCE_BY_PREFIX, SOURCE_PREFIXES


@pytest.fixture(scope="module")
def conns(embedded_dbs):
    with contextlib.ExitStack() as stack:
        yield {
            p: stack.enter_context(contextlib.closing(open_readonly(embedded_dbs[n])))
            for p, n in SOURCE_BY_PREFIX.items()
        }


def _rows(conns, turn, sql):
    return run_query(conns[turn["source"]], sql).rows


@pytest.mark.slow
def test_guess_probe_scores_at_most_the_floor_on_memory_critical_turns(embedded_turns, conns, tmp_path):
    critical = [t for t in embedded_turns if t["memory_critical"]]
    correct = 0
    for t in critical:
        context = {
            k: t[k] for k in ("sql_template", "referenced_context_keys", "stated_values", "guess_values")
        }
        sql, _, _ = asyncio.run(answer(GUESS_PROBE, [], context, {}, tmp_path))
        correct += strict_equal(_rows(conns, t, sql), _rows(conns, t, t["gt_sql"]))
    assert len(critical) == 1100
    assert 0 < 100 * correct / len(critical) <= GUESS_FLOOR_MAX_PCT  # a floor, and a low one


def test_guess_probe_answers_turn_one_like_gold(embedded_turns, tmp_path):
    first = [t for t in embedded_turns if t["turn_index"] == 1][:20]
    assert len(first) == 20
    for t in first:
        context = {
            k: t[k] for k in ("sql_template", "referenced_context_keys", "stated_values", "guess_values")
        }
        sql, _, _ = asyncio.run(answer(GUESS_PROBE, [], context, {}, tmp_path))
        assert sql == t["gt_sql"]  # nothing to guess: the question states every value


def test_mean_guess_rate_of_memory_critical_turns_is_at_most_the_floor(embedded_turns):
    rates = [t["guess_rate"] for t in embedded_turns if t["memory_critical"]]
    assert len(rates) == 1100 and all(0.0 <= r <= 1.0 for r in rates)
    assert 100 * sum(rates) / len(rates) <= GUESS_FLOOR_MAX_PCT
    assert all(t["guess_rate"] is None for t in embedded_turns if not t["memory_critical"])


def _higher_year_turns(embedded_turns):
    """(turn, the session's older year) of every "which year was higher" turn."""
    out, state = [], defaultdict(dict)
    for t in sorted(embedded_turns, key=lambda t: (t["session_id"], t["turn_index"])):
        if "higher" in t["question"]:
            out.append((t, state[t["session_id"]]["older_year"]))
        state[t["session_id"]].update(t["state_updates"])
    return out


def test_the_older_year_is_higher_in_about_half_the_sessions(embedded_turns, conns):
    by_question = defaultdict(list)
    for t, older in _higher_year_turns(embedded_turns):
        year = _rows(conns, t, t["gt_sql"])[0][0]
        by_question[(t["source"], t["question"])].append(str(year) == str(older))
    assert {s for s, _ in by_question} == {SOURCE_PREFIXES["sec_edgar"], SOURCE_PREFIXES["northwind"]}
    for key, older_higher in by_question.items():
        assert 0.35 <= sum(older_higher) / len(older_higher) <= 0.65, key


def test_a_binary_turn_needs_the_supporting_value_not_the_year_alone(embedded_turns, conns):
    turns = _higher_year_turns(embedded_turns)
    assert len(turns) == 198
    for t, _older in turns:
        gold = _rows(conns, t, t["gt_sql"])
        assert len(gold) == 1 and len(gold[0]) == 2  # the year and its value
        year_only = [(gold[0][0],)]  # the right year, guessed without the value
        assert not strict_equal(year_only, gold), t["session_id"]
        assert "two columns" in t["output_requirements"], t["output_requirements"]
