"""Strict vs bag vs set comparators: duplicates, 1 vs 1.0, column and row order, scale."""

from __future__ import annotations

import random

import pytest

from memsql_assets.lib.sql.compare import COMPARATORS, Comparator, bag_equal, set_equal, strict_equal

ALL = (strict_equal, bag_equal, set_equal)


def _verdicts(a, b) -> tuple[bool, bool, bool]:
    return strict_equal(a, b), bag_equal(a, b), set_equal(a, b)


def test_registry_and_protocol():
    assert set(COMPARATORS) == {"strict", "bag", "set"}
    fn: Comparator = COMPARATORS["strict"]
    assert fn([(1,)], [(1,)])


@pytest.mark.parametrize("fn", ALL)
def test_none_is_never_equal(fn):
    assert not fn(None, None)
    assert not fn([(1,)], None)
    assert not fn(None, [])


@pytest.mark.parametrize("fn", ALL)
def test_empty_results_are_equal(fn):
    assert fn([], [])


def test_row_order_does_not_matter():
    assert _verdicts([(1, "a"), (2, "b")], [(2, "b"), (1, "a")]) == (True, True, True)


def test_column_order_matters_names_do_not():
    assert _verdicts([(1, "a")], [("a", 1)]) == (False, False, False)
    # Names are not part of rows at all: ("x",) vs ("y",) columns compare only by value.
    assert _verdicts([(1, "a")], [(1, "a")]) == (True, True, True)


def test_int_vs_float():
    assert _verdicts([(1,)], [(1.0,)]) == (False, True, True)
    assert _verdicts([(2.5,)], [(2.5000000001,)]) == (False, True, True)
    assert _verdicts([(2.5,)], [(2.51,)]) == (False, False, False)


def test_duplicates():
    assert _verdicts([(1,), (1,), (2,)], [(1,), (2,), (2,)]) == (False, False, True)
    assert _verdicts([(1,), (1,)], [(1,)]) == (False, False, True)


def test_strings_match_numbers_only_as_their_str():
    # bag and set relax strict: what strict calls equal ("1" vs 1: str(1) == "1"), they do too
    assert _verdicts([("1",)], [(1,)]) == (True, True, True)
    assert _verdicts([(7,)], [("7",)]) == (True, True, True)
    assert _verdicts([(None,)], [("None",)]) == (True, True, True)
    assert _verdicts([(None,)], [(None,)]) == (True, True, True)
    # but a string is never within tolerance of a number
    assert _verdicts([("1",)], [(1.0,)]) == (False, False, False)
    assert _verdicts([("2.5",)], [(2.5000000001,)]) == (False, False, False)


def test_integers_compare_exactly():  # a relative tolerance would make these equal
    assert _verdicts([(1000000,)], [(1000001,)]) == (False, False, False)
    assert _verdicts([(10**15,)], [(10**15 + 7,)]) == (False, False, False)
    assert _verdicts([(1000000,)], [(1000000.5,)]) == (False, True, True)  # a float: tolerance


def test_tolerance_never_chains():
    # 1.0 ~ 1.0000009 ~ 1.0000018, but 1.0 and 1.0000018 are 1.8e-6 apart
    assert not set_equal([(1.0,), (1.0000009,)], [(1.0000018,)])
    assert not set_equal([(1.0000018,)], [(1.0,), (1.0000009,)])
    assert not bag_equal([(1.0,), (1.0000009,)], [(1.0000009,), (1.0000027,)])
    # a pairing that needs the non-greedy choice: 1.0 must go to 1.0 - 9e-7, not to 1.0
    a = [(1.0,), (1.0000009,)]
    b = [(1.0,), (0.9999991,)]
    assert bag_equal(a, b) and bag_equal(b, a)


def test_tolerance_with_ties_in_other_columns():
    a = [(1.0, "b"), (1.0000001, "a")]
    b = [(1.0000001, "b"), (1.0, "a")]
    assert bag_equal(a, b) and set_equal(a, b) and not strict_equal(a, b)


def test_tolerance_collapses_near_duplicates_for_sets_only():
    a = [(1.0,), (1.0000001,)]
    b = [(1.0,)]
    assert set_equal(a, b) and not bag_equal(a, b)


def test_mixed_types_in_one_column_sort_without_error():
    a = [(None,), (1,), ("x",), (b"\x00",), (2.0,)]
    b = [(2,), (b"\x00",), ("x",), (1.0,), (None,)]
    assert bag_equal(a, b) and set_equal(a, b) and not strict_equal(a, b)


def test_rows_of_different_width():
    assert _verdicts([(1, 2)], [(1,)]) == (False, False, False)


def test_lists_from_json_are_accepted():
    assert bag_equal([[1, "a"]], [(1, "a")]) and set_equal([[1, "a"]], [(1, "a")])


def _big(n: int, seed: int = 7):
    rng = random.Random(seed)
    a = [(i, f"name{i % 977}", rng.random() * 1000, None if i % 13 == 0 else i * 3) for i in range(n)]
    b = list(a)
    rng.shuffle(b)
    return a, b


def _noisy(rows):
    return [(r[0], r[1], r[2] * (1 + 1e-9), r[3]) for r in rows]


def _off_by_one(rows):
    last = rows[-1]
    return rows[:-1] + [(last[0], last[1], last[2] + 1.0, last[3])]


@pytest.mark.slow
def test_hundred_thousand_rows():
    a, b = _big(100_000)
    assert _verdicts(a, b) == (True, True, True)  # the exact (hash) path of every comparator
    off = _off_by_one(b)
    assert not strict_equal(a, off) and not bag_equal(a, off)


def test_tolerance_path_at_scale():
    a, b = _big(20_000, seed=3)
    noisy = _noisy(b)  # float noise on every row: the sorted tolerance path on all rows
    assert not strict_equal(a, noisy) and bag_equal(a, noisy) and set_equal(a, noisy)
    assert not set_equal(a, _off_by_one(b))
