"""guess_rate on a hand-built source: a turn that other profiles answer alike is guessable, one they
do not is not; and strict_key is the strict comparison it counts with."""

from __future__ import annotations

import sqlite3

import pytest

from memsql_assets.lib.benchmark.generate import generate_source
from memsql_assets.lib.benchmark.guess import _source_rates, _tiers, guess_rate
from memsql_assets.lib.benchmark.profiles import extract_profiles
from memsql_assets.lib.benchmark.templates import load_tier_template
from memsql_assets.lib.sql.compare import strict_equal, strict_key

METRICS = ("revenue", "net_income", "cash", "total_assets", "total_liabilities")
# Revenue in 2020: A and B report the same value, C another; every 2021 value differs.
REVENUE_2020 = {"A": 1.0, "B": 1.0, "C": 2.0}


@pytest.fixture(scope="module")
def tiny_sec(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny_sec") / "sec_edgar.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE companies (ticker TEXT PRIMARY KEY, company_name TEXT)")
    conn.execute(
        "CREATE TABLE annual_financials (ticker TEXT, metric TEXT, fiscal_year INTEGER, value_billions REAL)"
    )
    for i, ticker in enumerate("ABC"):
        conn.execute("INSERT INTO companies VALUES (?, ?)", (ticker, f"Company {ticker}"))
        for j, metric in enumerate(METRICS):
            older = REVENUE_2020[ticker] if metric == "revenue" else 10.0 + 3 * i + j
            conn.execute("INSERT INTO annual_financials VALUES (?, ?, 2020, ?)", (ticker, metric, older))
            conn.execute(
                "INSERT INTO annual_financials VALUES (?, ?, 2021, ?)", (ticker, metric, 50.0 + 7 * i + j)
            )
    conn.commit()
    conn.close()
    return path


def test_guess_rate_counts_the_other_profiles_that_give_the_answer(tiny_sec):
    profiles = extract_profiles("sec_edgar", tiny_sec)
    templates = {tier: load_tier_template("sec_edgar", tier) for tier in (1, 2, 3)}
    sessions = _source_rates(
        generate_source("sec_edgar", templates, profiles),
        _tiers("sec_edgar", profiles, templates[1].path.parent),
        tiny_sec,
    )
    # "And in {older_year}?" of sec-t2-change, on revenue: A's answer is B's too, C's is its own.
    # The tier-2 pool is every (ticker, metric) pair of four metrics: 12 profiles, so 11 others.
    seen = set()
    for s in sessions:
        turn = s.turns[1] if s.variant_id == "sec-t2-change" and s.profile["metric"] == "revenue" else None
        if turn is None:
            continue
        assert turn.question == "And in 2020?"
        seen.add(s.profile["ticker"])
        expected = {"A": 1 / 11, "B": 1 / 11, "C": 0.0}[s.profile["ticker"]]
        assert turn.guess_rate == pytest.approx(expected, abs=1e-6), s.session_id
    assert {"A", "C"} <= seen  # a turn that another profile answers alike, and one none does
    for s in sessions:
        assert s.turns[0].guess_rate is None  # turn 1 is never memory-critical
        assert all(t.guess_rate is not None for t in s.turns if t.memory_critical)
        # The full history of one company's metric: no other company's is the same.
        for t in s.turns:
            if t.question.startswith("Show the full history"):
                assert t.guess_rate == 0.0


def test_guess_rate_of_no_fills_or_a_failed_ground_truth_is_zero():
    assert guess_rate(strict_key([(1,)]), []) == 0.0
    assert guess_rate(None, [None, None]) == 0.0
    assert guess_rate(strict_key([(1,)]), [strict_key([(1,)]), strict_key([(1.0,)]), None]) == pytest.approx(
        1 / 3
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([(1,)], [(1,)]),
        ([(1,)], [(1.0,)]),
        ([(1, "x"), (2, "y")], [(2, "y"), (1, "x")]),
        ([], []),
        (None, [(1,)]),
        ([(7,)], [("7",)]),
        ([(1,), (1,)], [(1,)]),
    ],
)
def test_strict_key_agrees_with_strict_equal(a, b):
    assert strict_equal(a, b) == (strict_key(a) is not None and strict_key(a) == strict_key(b))
