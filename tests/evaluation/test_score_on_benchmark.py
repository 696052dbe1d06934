"""The scorer against the embedded benchmark: gold answers score 100 %, fallback answers are
flagged as a fallback match whenever they differ from the ground truth."""

from __future__ import annotations

from collections import Counter

import pytest

from memsql_assets.lib.evaluation.score import score_turn, turn_label
from memsql_assets.lib.sql.compare import strict_equal
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX


@pytest.fixture(scope="module")
def conns(embedded_dbs):
    opened = {prefix: open_readonly(embedded_dbs[name]) for prefix, name in SOURCE_BY_PREFIX.items()}
    yield opened
    for c in opened.values():
        c.close()


@pytest.fixture(scope="module")
def caches():
    """One ground-truth cache per source database, shared by both tests."""
    return {prefix: {} for prefix in SOURCE_BY_PREFIX}


@pytest.mark.slow
def test_gold_answers_score_100_percent(embedded_turns, conns, caches):
    failures = []
    classes: Counter[str] = Counter()
    for t in embedded_turns:
        s = score_turn(t, t["gt_sql"], conns[t["source"]], caches[t["source"]])
        classes[s.error_class] += 1
        if not (s.ex_strict and s.ex_bag and s.ex_set) or s.gt_error or s.contaminated or s.fallback_match:
            failures.append((turn_label(t), s.error_class, s.error_message, s.gt_error))
    assert not failures, failures[:10]
    assert classes == {"correct": len(embedded_turns)}


@pytest.mark.slow
def test_fallback_answers_are_fallback_matches(embedded_turns, conns, caches):
    critical = [t for t in embedded_turns if t["memory_critical"]]
    assert critical and all(t["fallback_sql"] for t in critical)
    contaminated = 0
    for t in critical:
        cache = caches[t["source"]]
        s = score_turn(t, t["fallback_sql"], conns[t["source"]], cache)
        gt, fb = cache[t["gt_sql"]], cache.get(t["fallback_sql"])
        if fb is None:  # the fallback ran as the generated SQL only when the turn was correct
            assert s.ex_strict, turn_label(t)
            continue
        if strict_equal(fb.rows, gt.rows):
            assert s.ex_strict and not s.fallback_match, turn_label(t)
        else:
            assert s.fallback_match and s.error_class == "wrong_result", turn_label(t)
            contaminated += 1
    assert contaminated > len(critical) // 2  # the probe is not vacuous
