"""Result-set comparators: the paper's strict EX, and bag / set variants for sensitivity analysis.

All three take the `rows` of two QueryResults (lists of tuples or lists of the values sqlite3
returns: int, float, str, bytes, None; None for the result = the query did not run) and answer
whether they are the same result. A None result on either side is never equal: EX requires both
queries to execute. Column names never matter; column order always does (rows are compared
position by position). Semantics, each tested against a brute-force reference
(tests/evaluation/test_compare_properties.py):

- Two values *match* when (1) their str() are equal, or (2) both are numbers, at least one of them a
  float, and |x - y| <= max(REL_TOL * max(|x|, |y|), ABS_TOL) (an infinity matches only itself). So integers compare exactly
  (1000000 vs 1000001 differ), tolerance applies only where a float is involved (1 vs 1.0 and
  2.5 vs 2.5000000001 match), and a string matches a number only when it is that number's str()
  ('7' vs 7). Two rows match when they have the same width and match value by value.
- strict: the multisets of rows are equal after str() of every value (None -> "None"): the paper's
  EX. 1 and 1.0 differ ("1" vs "1.0"); 7 and '7' do not.
- bag: the rows of one side can be paired one to one with the rows of the other so that every pair
  matches (a perfect matching). Each row is used once, so tolerance never chains through a third row.
- set: every row of each side matches some row of the other side (duplicates ignored). Each row
  needs a direct partner, so tolerance never chains: set([1.0, 1.0000009], [1.0000018]) is False.
Every strict-equal pair is bag-equal (rule 1 pairs the equal strings), and every bag-equal pair is
set-equal (a pairing gives each row a partner): ex_strict <= ex_bag <= ex_set on every turn.

Speed: both relaxations first try hash-based exact answers (linear). Otherwise rows are grouped by
what must agree exactly (width, non-numeric values), and partners are looked up in a sorted index
of one numeric column, within the tolerance window, so that candidate pairs stay few; bag then
finds a perfect matching by augmenting paths. A degenerate input (many rows equal in the indexed
column but different elsewhere) makes candidate lists long: quadratic, never wrong.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
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


def strict_key(rows: Rows | None) -> frozenset | None:
    """What strict EX compares, as a hashable value: strict_equal(a, b) holds exactly when
    strict_key(a) == strict_key(b) is not None. Many results against one: hash them once."""
    return None if rows is None else frozenset(_stringified(rows).items())


def _stringified(rows: Rows) -> Counter:
    return Counter(map(tuple, map(partial(map, str), rows)))  # C-level loops: no per-row frame


def bag_equal(a: Rows | None, b: Rows | None) -> bool:
    """A one-to-one pairing of matching rows exists (see the module doc)."""
    if a is None or b is None or len(a) != len(b):
        return False
    if len(a) == 1:  # the benchmark's median result
        return rows_match(a[0], b[0])
    # Python-equal rows match (1 == 1.0 is within tolerance), and so do str-equal ones.
    if Counter(map(tuple, a)) == Counter(map(tuple, b)) or _stringified(a) == _stringified(b):
        return True
    blocks_a, blocks_b = _blocks(a), _blocks(b)
    if {k: len(v) for k, v in blocks_a.items()} != {k: len(v) for k, v in blocks_b.items()}:
        return False
    return all(_perfect_matching(key, rows, blocks_b[key]) for key, rows in blocks_a.items())


def set_equal(a: Rows | None, b: Rows | None) -> bool:
    """Every row of each side matches some row of the other (see the module doc)."""
    if a is None or b is None:
        return False
    if len(a) == 1 and len(b) == 1:
        return rows_match(a[0], b[0])
    if set(map(tuple, a)) == set(map(tuple, b)) or set(_stringified(a)) == set(_stringified(b)):
        return True
    blocks_a, blocks_b = _blocks(_distinct(a)), _blocks(_distinct(b))
    if blocks_a.keys() != blocks_b.keys():
        return False
    return all(
        _all_have_partners(key, blocks_a[key], blocks_b[key])
        and _all_have_partners(key, blocks_b[key], blocks_a[key])
        for key in blocks_a
    )


COMPARATORS: dict[str, Comparator] = {"strict": strict_equal, "bag": bag_equal, "set": set_equal}


# --- matching values and rows -------------------------------------------------------------------


def _is_number(v: Any) -> bool:
    t = type(v)
    if t is int or t is float:  # the fast path: what sqlite returns
        return True
    return t is not bool and t is not str and isinstance(v, int | float)


def values_match(x: Any, y: Any) -> bool:
    """Rule (1) or (2) of the module doc."""
    if (type(x) is float or type(y) is float) and _is_number(x) and _is_number(y):
        if math.isclose(x, y, rel_tol=REL_TOL, abs_tol=ABS_TOL):
            return True
    elif type(x) is type(y) and x == y:  # same type and equal: the same str()
        return True
    return str(x) == str(y)


def rows_match(r: Row, s: Row) -> bool:
    return len(r) == len(s) and all(map(values_match, r, s))


# --- candidate partners -------------------------------------------------------------------------

_NUMERIC = None  # the block key of a value that may match by tolerance or as a number's str()


def _block_key(v: Any) -> str | None:
    """Equal for any two matching values: numbers and numeric strings share one key; any other
    value matches only values with its str(), which is its key."""
    if _is_number(v):
        return _NUMERIC
    if isinstance(v, str):
        try:
            float(v)
        except ValueError:
            return v
        return _NUMERIC
    return str(v)


def _blocks(rows: Rows) -> dict[tuple, list[Row]]:
    """Rows grouped by width and non-numeric values: rows in different groups never match."""
    out: dict[tuple, list[Row]] = defaultdict(list)
    for row in rows:
        out[(len(row), *map(_block_key, row))].append(row)
    return out


def _distinct(rows: Rows) -> list[Row]:
    """Rows without exact repeats (type and str() of every value: 1 and 1.0 stay apart)."""
    seen: dict[tuple, Row] = {}
    for row in rows:
        seen.setdefault((tuple(map(type, row)), tuple(map(str, row))), row)
    return list(seen.values())


def _as_float(v: Any) -> float:
    try:
        return float(v)
    except OverflowError:  # an int beyond the float range
        return math.copysign(math.inf, v)


class _Index:
    """The rows of one block, sorted by one numeric column, to look up partners within tolerance."""

    def __init__(self, key: tuple, rows: list[Row]):
        self.rows = rows
        numeric = [i for i, k in enumerate(key[1:]) if k is _NUMERIC]
        # the column with the most distinct values keeps candidate lists shortest
        self.col = max(numeric, key=lambda i: len({_as_float(r[i]) for r in rows}), default=None)
        self.values: list[float] = []
        self.order: list[int] = []
        self.special: dict[str, list[int]] = defaultdict(list)  # inf, -inf, nan: by str()
        if self.col is None:
            return
        finite = []
        for j, row in enumerate(rows):
            f = _as_float(row[self.col])
            if math.isfinite(f):
                finite.append((f, j))
            else:
                self.special[str(f)].append(j)
        finite.sort()
        self.values = [f for f, _ in finite]
        self.order = [j for _, j in finite]

    def candidates(self, row: Row) -> list[int]:
        """Indices of the rows that may match `row` (a superset of those that do)."""
        if self.col is None:  # equal keys, no numbers: every row of the block matches
            return list(range(len(self.rows)))
        f = _as_float(row[self.col])
        if not math.isfinite(f):
            return self.special.get(str(f), [])
        # |x - y| <= REL_TOL * max(|x|, |y|) implies |x - y| <= REL_TOL * |x| / (1 - REL_TOL)
        w = (REL_TOL * abs(f) / (1 - REL_TOL) + ABS_TOL) * 1.01  # 1 %: room for float rounding
        return self.order[bisect_left(self.values, f - w) : bisect_right(self.values, f + w)]


def _all_have_partners(key: tuple, rows: list[Row], others: list[Row]) -> bool:
    index = _Index(key, others)
    return all(any(rows_match(row, others[j]) for j in index.candidates(row)) for row in rows)


def _perfect_matching(key: tuple, left: list[Row], right: list[Row]) -> bool:
    """Whether matching rows can pair all of `left` with all of `right` (equal sizes)."""
    if Counter(map(tuple, left)) == Counter(map(tuple, right)):
        return True
    index = _Index(key, right)
    if index.col is None:
        return True  # every row matches every other; the sizes are equal
    adjacency = [[j for j in index.candidates(row) if rows_match(row, right[j])] for row in left]
    partner = [-1] * len(right)  # right row -> left row
    return all(edges and _augment(u, adjacency, partner) for u, edges in enumerate(adjacency))


def _augment(root: int, adjacency: list[list[int]], partner: list[int]) -> bool:
    """Kuhn's augmenting path from left row `root`, iteratively (no recursion limit)."""
    for j in adjacency[root]:  # a free partner first: the common case, no search
        if partner[j] == -1:
            partner[j] = root
            return True
    visited: set[int] = set()
    stack: list[tuple[int, int]] = [(root, 0)]  # (left row, next edge to try)
    path: list[int] = []  # right rows taken on the way down
    while stack:
        u, k = stack[-1]
        if k == len(adjacency[u]):
            stack.pop()
            if path:
                path.pop()
            continue
        stack[-1] = (u, k + 1)
        j = adjacency[u][k]
        if j in visited:
            continue
        visited.add(j)
        if partner[j] == -1:  # augment: flip every edge on the path
            path.append(j)
            for (v, _), r in zip(stack, path, strict=True):
                partner[r] = v
            return True
        path.append(j)
        stack.append((partner[j], 0))
    return False
