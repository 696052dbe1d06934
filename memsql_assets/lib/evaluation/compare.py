"""Result-set comparators: the paper's strict EX, and bag / set variants for sensitivity analysis.

All three take the `rows` of two QueryResults (lists of tuples; None = the query did not run)
and answer whether they are the same result. None on either side is never equal: EX requires
both queries to execute. Column names never matter; column order always does (rows are
compared positionally).

- strict: multisets of rows equal after stringifying every value with str() (None -> "None").
  Equivalent to "sort rows, compare": a Counter gives the same answer in linear time. 1 and 1.0
  differ here ("1" vs "1.0"), as in the paper.
- bag: multisets equal after normalising numbers: an int and a float are equal when they agree
  within 1e-6 relative (abs 1e-12 near zero); strings stay strings ('1' != 1); None == None.
- set: like bag, duplicates ignored.

Speed on 100k-row results: exact matching first (hash-based, linear: 1 == 1.0 hash alike);
only when that fails are rows sorted, with each sort key computed once. The sort orders by every
value coarsened (numbers rounded to 16 mantissa bits, ~1.5e-5 relative, coarser than the
tolerance), then by the exact numbers, so rows that differ by float noise sort next to each other
even when they tie on their first columns. bag matches the leftover rows pairwise in that order;
set groups the sorted rows of both sides into runs of mutually close neighbours and requires a row
of each side in every run. Sorting is a heuristic for tolerance matching (exact matching is a
bipartite problem): it errs only towards "not equal", and only when values within tolerance
straddle a rounding boundary while their rows tie on everything else.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import partial
from typing import Any, Protocol

Row = Sequence[Any]
Rows = Sequence[Row]

REL_TOL = 1e-6
ABS_TOL = 1e-12


class Comparator(Protocol):
    def __call__(self, a: Rows | None, b: Rows | None) -> bool: ...


def strict_equal(a: Rows | None, b: Rows | None) -> bool:
    """The paper's EX: equal as multisets of stringified rows."""
    if a is None or b is None or len(a) != len(b):
        return False
    return _stringified(a) == _stringified(b)


def _stringified(rows: Rows) -> Counter:
    return Counter(map(tuple, map(partial(map, str), rows)))  # C-level loops: no per-row frame


def bag_equal(a: Rows | None, b: Rows | None) -> bool:
    """Equal as multisets of rows, numbers compared within tolerance."""
    if a is None or b is None or len(a) != len(b):
        return False
    ca, cb = Counter(map(tuple, a)), Counter(map(tuple, b))  # 1 == 1.0 and hash alike
    if ca == cb:
        return True
    left = sorted((ca - cb).elements(), key=_sort_key)
    right = sorted((cb - ca).elements(), key=_sort_key)
    return len(left) == len(right) and all(map(_rows_close, left, right))


def set_equal(a: Rows | None, b: Rows | None) -> bool:
    """Equal as sets of rows (duplicates ignored), numbers compared within tolerance."""
    if a is None or b is None:
        return False
    sa, sb = set(map(tuple, a)), set(map(tuple, b))
    if sa == sb:
        return True
    # Rows in both sets need no partner. The others are sorted together with the shared rows and
    # grouped into runs of rows close to their predecessor; every run must hold a row of each set.
    ra, rb = sa - sb, sb - sa
    tagged = [(r, 1) for r in ra] + [(r, 2) for r in rb] + [(r, 3) for r in sa & sb]
    tagged.sort(key=lambda item: _sort_key(item[0]))
    seen, prev = 0, None
    for row, tag in tagged:
        if prev is not None and not _rows_close(prev, row):
            if seen != 3:
                return False
            seen = 0
        seen |= tag
        prev = row
    return seen == 3


COMPARATORS: dict[str, Comparator] = {"strict": strict_equal, "bag": bag_equal, "set": set_equal}


def _is_number(v: Any) -> bool:
    t = type(v)
    if t is int or t is float:  # the fast path: what sqlite returns
        return True
    return t is not bool and t is not str and isinstance(v, int | float)


def _values_close(x: Any, y: Any) -> bool:
    if x == y:  # 1 == 1.0; never true across str / bytes / None / numbers
        return True
    return _is_number(x) and _is_number(y) and math.isclose(x, y, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _rows_close(r: Row, s: Row) -> bool:
    return len(r) == len(s) and all(map(_values_close, r, s))


def _sort_key(row: Row) -> tuple:
    """Total order over mixed-type rows: every value coarsened first, exact numbers last.

    Coarse value = type rank then value, numbers rounded to 16 mantissa bits (~1.5e-5 relative);
    one flat tuple per row, because nested tuples make the sort several times slower.
    """
    key: list[Any] = [len(row)]
    exact: list[float] = []
    for v in row:
        if _is_number(v):
            f = float(v)
            if math.isfinite(f):
                m, e = math.frexp(f)
                f = math.ldexp(math.floor(m * 65536.0 + 0.5), e - 16)
            key += (1, f)
            exact.append(float(v))
        elif v is None:
            key += (0, 0)
            exact.append(0.0)
        elif isinstance(v, str):
            key += (2, v)
            exact.append(0.0)
        else:
            key += (3, repr(v))
            exact.append(0.0)
    key += exact
    return tuple(key)
