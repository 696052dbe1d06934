"""The comparators against brute-force references of their documented semantics (compare.py).

The references are written from the module doc, independently of the implementation: a value
rule, every permutation for bag, every pair for set. Values come from small pools built so that
collisions are likely: floats on a grid 0.45e-6 relative apart (two steps are within REL_TOL,
three are not, so chains are common), integers a unit apart near 1e6, numeric strings, None and
'None'.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsql_assets.lib.sql.compare import ABS_TOL, REL_TOL, bag_equal, set_equal, strict_equal

CHECKS = settings(max_examples=400, deadline=None, database=None)

BASES = (0.0, 1.0, 7.0, 2.5, 1e6, -3.0)
FLOATS = st.builds(lambda base, k: base * (1 + k * 0.45e-6), st.sampled_from(BASES), st.integers(-3, 3)) | (
    st.sampled_from((0.0, -0.0, 4e-13, -7e-13, 1.5e-12, float("inf")))
)
INTS = st.sampled_from((0, 1, 7, -3, 1_000_000, 1_000_001))
TEXT = st.sampled_from(("7", "1", "1.0", "1000000", "a", "None", "inf"))
VALUES = FLOATS | INTS | TEXT | st.sampled_from((None, b"x"))
ROWS = st.integers(1, 2).flatmap(lambda w: st.lists(st.tuples(*[VALUES] * w), max_size=5))
MIXED_WIDTH_ROWS = st.lists(st.lists(VALUES, min_size=1, max_size=2).map(tuple), max_size=5)


def ref_match(x, y) -> bool:
    if str(x) == str(y):
        return True
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y))
    if numbers and (isinstance(x, float) or isinstance(y, float)):
        if math.isinf(x) or math.isinf(y):
            return x == y
        return abs(x - y) <= max(REL_TOL * max(abs(x), abs(y)), ABS_TOL)
    return False


def ref_rows(r, s) -> bool:
    return len(r) == len(s) and all(ref_match(x, y) for x, y in zip(r, s, strict=True))


def ref_strict(a, b) -> bool:
    return sorted(tuple(map(str, r)) for r in a) == sorted(tuple(map(str, r)) for r in b)


def ref_bag(a, b) -> bool:
    return len(a) == len(b) and any(
        all(ref_rows(a[i], b[j]) for i, j in enumerate(perm))
        for perm in itertools.permutations(range(len(b)))
    )


def ref_set(a, b) -> bool:
    return all(any(ref_rows(r, s) for s in b) for r in a) and all(any(ref_rows(s, r) for r in a) for s in b)


def _near(rows, data):
    """A second result built from the first (shuffled, values nudged or swapped), so that equal
    and almost-equal pairs are frequent, not only unrelated ones."""
    out = [tuple(data.draw(st.sampled_from((v, *_neighbours(v)))) for v in r) for r in rows]
    data.draw(st.randoms()).shuffle(out)
    return out


def _neighbours(v) -> tuple:
    if isinstance(v, float):
        return (v * (1 + 0.45e-6), v * (1 - 0.45e-6), v * (1 + 1.35e-6))
    if isinstance(v, int):
        return (v + 1, float(v), str(v))
    return (str(v),)


@pytest.mark.slow
@CHECKS
@given(ROWS, ROWS)
def test_unrelated_results_match_the_references(a, b):
    assert strict_equal(a, b) == ref_strict(a, b)
    assert bag_equal(a, b) == ref_bag(a, b)
    assert set_equal(a, b) == ref_set(a, b)


@pytest.mark.slow
@CHECKS
@given(ROWS, st.data())
def test_near_results_match_the_references(a, data):
    b = _near(a, data)
    assert strict_equal(a, b) == ref_strict(a, b)
    assert bag_equal(a, b) == ref_bag(a, b)
    assert set_equal(a, b) == ref_set(a, b)


@pytest.mark.slow
@CHECKS
@given(MIXED_WIDTH_ROWS, MIXED_WIDTH_ROWS)
def test_rows_of_mixed_width_match_the_references(a, b):
    assert bag_equal(a, b) == ref_bag(a, b)
    assert set_equal(a, b) == ref_set(a, b)


@pytest.mark.slow
@CHECKS
@given(ROWS, st.data())
def test_strict_implies_bag_implies_set_and_all_are_symmetric(a, data):
    b = _near(a, data)
    strict, bag, set_ = strict_equal(a, b), bag_equal(a, b), set_equal(a, b)
    assert (not strict or bag) and (not bag or set_)
    assert (strict, bag, set_) == (strict_equal(b, a), bag_equal(b, a), set_equal(b, a))


@CHECKS
@given(st.integers(-(1 << 62), 1 << 62), st.integers(-3, 3))
def test_integers_compare_exactly(x, delta):
    y = x + delta  # a unit apart is far inside REL_TOL for large integers
    for fn in (strict_equal, bag_equal, set_equal):
        assert fn([(x,)], [(y,)]) == (x == y)
        assert fn([(x, "k")], [(y, "k")]) == (x == y)
