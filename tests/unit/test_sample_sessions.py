"""Sample runs: a deterministic, stratified sample of whole sessions."""

from __future__ import annotations

from collections import Counter

import pytest

from memsql_assets.lib.benchmark.sample import (
    SampleSizeError,
    allowed_range,
    sample_sessions,
    sample_turns,
    strata,
)
from memsql_assets.lib.vocabulary import REPORT_SOURCES


def _turns(sizes):
    """Benchmark-shaped turns: sizes[(source, tier)] sessions of two turns each."""
    return [
        {"session_id": f"{src}-{tier}-{i:03d}", "source": src, "tier": tier, "turn_index": k}
        for (src, tier), n in sizes.items()
        for i in range(n)
        for k in (1, 2)
    ]


SIZES = {
    (s, t): n for s, n0 in (("NW", 30), ("SEC", 20), ("BIRD", 10)) for t, n in ((1, n0), (2, n0 // 2), (3, 2))
}


def test_every_stratum_once_and_the_rest_in_proportion():
    turns = _turns(SIZES)
    low, high = allowed_range(turns)
    assert (low, high) == (9, sum(SIZES.values()))
    for n in (low, 10, 30, 57, high):
        chosen = sample_sessions(turns, n)
        assert len(chosen) == len(set(chosen)) == n
        per = Counter(tuple(sid.split("-")[:2]) for sid in chosen)
        assert len(per) == 9, f"n={n}: every source x tier stratum"
    big = Counter(tuple(sid.split("-")[:2]) for sid in sample_sessions(turns, 57))
    assert big[("NW", "1")] > big[("BIRD", "1")] > 1, "larger strata get more sessions"


def test_deterministic_and_nested_in_no_particular_session_order():
    turns = _turns(SIZES)
    assert sample_sessions(turns, 30) == sample_sessions(list(reversed(turns)), 30)
    first = strata(turns)[("NW", 1)]
    assert first != sorted(first), "inside a stratum the order is the seed's, not session numbering"


def test_sample_turns_keeps_whole_sessions():
    turns = _turns(SIZES)
    kept = sample_turns(turns, 12)
    assert len(kept) == 24 and Counter(t["session_id"] for t in kept).most_common()[-1][1] == 2
    assert sample_turns(turns, None) == turns


@pytest.mark.parametrize("n", [0, 8, -1, sum(SIZES.values()) + 1])
def test_sizes_outside_the_range_name_it(n):
    with pytest.raises(SampleSizeError, match=rf"sessions {n}: expected 9 to {sum(SIZES.values())}"):
        sample_sessions(_turns(SIZES), n)


def test_an_analysts_history_is_sampled_whole():
    """Extended-shaped turns: per source, 40 sessions, of which 7 analysts have a history of four (8 apart,
    as extended/layout.py lays them out) and the rest an analyst of their own. Every sample takes a history
    with all its sessions or none, and holds at most three sessions per stratum more than asked."""
    turns = []
    for src in REPORT_SOURCES:
        for i in range(40):
            h = i - 4
            analyst = f"{src}-A{5 + h % 8:03d}" if 0 <= h < 32 and h % 8 < 7 else f"{src}-A{i + 1:03d}"
            turns += [{"session_id": f"{src}-X-{i + 1:03d}", "source": src, "tier": 3, "turn_index": k, "analyst": analyst}
                      for k in (1, 2)]
    analyst_of = {t["session_id"]: t["analyst"] for t in turns}
    history = Counter(analyst_of.values())
    assert sorted(Counter(history.values()).items()) == [(1, 3 * 12), (4, 3 * 7)]
    for n in (3, 6, 10, 31, 60, 120):
        chosen = sample_sessions(turns, n)
        assert n <= len(chosen) <= n + 3 * 3
        per_analyst = Counter(analyst_of[sid] for sid in chosen)
        assert all(count == history[a] for a, count in per_analyst.items()), n
        assert {sid.split("-")[0] for sid in chosen} == set(REPORT_SOURCES)
    assert any(history[a] == 4 for a in map(analyst_of.get, sample_sessions(turns, 10)))
