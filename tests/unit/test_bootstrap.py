"""The session cluster bootstrap (lib/evaluation/bootstrap.py)."""

from __future__ import annotations

import hashlib

from memsql_assets.lib.evaluation.bootstrap import draws, quantile, session_interval


def test_interval_contains_the_estimate_and_is_deterministic():
    sessions = [(i % 3, 3) for i in range(40)]  # EX = 33.3 %
    a = session_interval(sessions)
    assert a == session_interval(sessions)
    ex = 100 * sum(c for c, _ in sessions) / sum(t for _, t in sessions)
    assert a.n == 120 and a.lo < ex < a.hi and 0 < a.se < 15


def test_degenerate_inputs():
    assert session_interval([]).se is None
    same = session_interval([(2, 2)] * 10)
    assert (same.se, same.lo, same.hi) == (0.0, 100.0, 100.0)


def test_more_sessions_narrow_the_interval():
    small = session_interval([(i % 2, 1) for i in range(20)])
    large = session_interval([(i % 2, 1) for i in range(200)])
    assert large.hi - large.lo < small.hi - small.lo


def test_draws_are_in_range_and_quantile_interpolates():
    rows = draws(7, replicates=50)
    assert len(rows) == 50 and all(len(r) == 7 and all(0 <= i < 7 for i in r) for r in rows)
    assert quantile([0, 10], 0.25) == 2.5 and quantile(list(range(10)), 0.025) == 0.225


def test_draws_follow_the_documented_md5_formula():
    """Session floor(u(b, i) * S), u = the first 8 hex digits of md5("memsql|b|i") / 2^32: the dbt
    macro computes the same draws, so the formula is the contract, whatever computes it."""
    size = 300
    rows = draws(size)
    for b, i in [(1, 0), (1, 299), (17, 42), (1000, 123)]:
        u = int(hashlib.md5(f"memsql|{b}|{i}".encode()).hexdigest()[:8], 16) / 2**32
        assert rows[b - 1][i] == int(u * size)


def test_epochs_are_resampled_inside_each_drawn_session():
    flat = [(i % 3, 3) for i in range(40)]
    one = session_interval(flat)
    assert session_interval([[s] for s in flat]) == one, "one epoch: the one-stage bootstrap"
    same = session_interval([[s, s] for s in flat])
    assert same.n == 240 and (same.se, same.lo, same.hi) == (one.se, one.lo, one.hi), "equal epochs add nothing"
    mixed = session_interval([[s, (3, 3)] for s in flat])  # epoch 2 answers every turn correctly
    ex = 100 * (sum(c for c, _ in flat) + 120) / 240
    assert mixed.lo < ex < mixed.hi and mixed != one
