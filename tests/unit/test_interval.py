"""The EX interval (lib/evaluation/interval.py): Wilson over sessions, in Python and in DuckDB."""

from __future__ import annotations

import duckdb
import pytest

from memsql_assets.lib.evaluation.duckdb_plugin import register
from memsql_assets.lib.evaluation.interval import ex_interval, interval_text


def test_an_all_correct_sample_of_30_sessions_stays_open_below_100():
    lo, hi = ex_interval(136, 136, 30)
    assert interval_text(lo, hi) == "88.6–100.0"
    assert ex_interval(0, 136, 30) == (0.0, round(100 - lo, 4)), "symmetric at 0 %"


def test_the_unit_is_the_session_not_the_turn():
    by_session = ex_interval(68, 136, 30)
    by_turn = ex_interval(68, 136, 136)
    assert by_session[0] < 50 < by_session[1]
    assert by_session[1] - by_session[0] > by_turn[1] - by_turn[0]
    # Wilson at p = 0.5, n = 30: 50 ± 17.0 (the closed form).
    assert by_session == pytest.approx((33.1, 66.9), abs=0.1)


def test_no_turns_is_no_interval_and_bad_counts_are_errors():
    assert ex_interval(0, 0, 0) is None
    with pytest.raises(ValueError, match="correct turns must be within 0..turns, got 5 of 4"):
        ex_interval(5, 4, 2)
    with pytest.raises(ValueError, match=r"sessions must be within 1..turns \(4\), got 0"):
        ex_interval(2, 4, 0)


def test_the_duckdb_functions_are_the_python_ones():
    con = duckdb.connect()
    register(con)
    got = con.execute(
        "select ex_ci_lo(c, n, s), ex_ci_hi(c, n, s) from (values (136, 136, 30), (7, 20, 5), (0, 0, 0)) as t(c, n, s)"
    ).fetchall()
    assert got == [ex_interval(136, 136, 30), ex_interval(7, 20, 5), (None, None)]
