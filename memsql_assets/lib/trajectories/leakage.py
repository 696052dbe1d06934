"""The no-leakage rule between synthetic and benchmark questions.

A synthetic question must neither equal a benchmark question nor be a near copy of one: after
normalisation (case, punctuation, spacing) their edit distance must exceed a fifth of the longer
text (at least 4 edits), so swapping a value or a preposition never slips a benchmark question
into the store.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

MIN_EDITS = 4
EDIT_SHARE = 0.2


def normalize_question(text: str) -> str:
    """Case-, punctuation- and whitespace-insensitive form used for the no-overlap rule."""
    return re.sub(r"[^0-9a-z]+", " ", text.casefold()).strip()


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, or `limit + 1` as soon as it is known to exceed `limit`.

    Only the diagonal band |i - j| <= limit can stay within the limit, so only it is computed;
    the character-count difference is a cheaper lower bound checked first."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    ca, cb = Counter(a), Counter(b)
    if max(sum((ca - cb).values()), sum((cb - ca).values())) > limit:
        return limit + 1
    far = limit + 1
    prev = {j: j for j in range(min(len(b), limit) + 1)}
    for i in range(1, len(a) + 1):
        cur: dict[int, int] = {}
        for j in range(max(0, i - limit), min(len(b), i + limit) + 1):
            if j == 0:
                cur[j] = i
                continue
            cur[j] = min(
                prev.get(j, far) + 1,
                cur.get(j - 1, far) + 1,
                prev.get(j - 1, far) + (a[i - 1] != b[j - 1]),
            )
        if min(cur.values()) > limit:
            return far
        prev = cur
    return min(prev.get(len(b), far), far)


def too_close(a: str, b: str) -> bool:
    """Equal or within the near-copy edit distance (both already normalised)."""
    limit = max(MIN_EDITS, int(EDIT_SHARE * max(len(a), len(b))))
    return edit_distance(a, b, limit) <= limit


class LeakageGuard:
    """Answers 'is this text (a near copy of) one of the protected questions?'."""

    def __init__(self, protected: Iterable[str]):
        self._protected = sorted({normalize_question(q) for q in protected})

    def blocks(self, text: str) -> bool:
        key = normalize_question(text)
        return any(too_close(key, p) for p in self._protected)
