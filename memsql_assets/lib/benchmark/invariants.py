"""Phase 3 of generation: the SPEC §1 invariants, checked on generated sessions (fail fast).

`violations()` returns every broken invariant as a sentence naming what broke; generation raises
if the list is non-empty. The Great Expectations suites check the same facts on the written files.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from memsql_assets.lib.benchmark.sample import Stratum, check_in_range, stratum_takes
from memsql_assets.lib.errors import BenchmarkInvariantError
from memsql_assets.lib.vocabulary import REPORT_SOURCES

# Sessions per (source prefix, tier): 30/40/30 % of each source's sessions.
SESSIONS_BY_STRATUM: dict[Stratum, int] = {
    ("NW", 1): 30, ("NW", 2): 40, ("NW", 3): 30,
    ("SEC", 1): 36, ("SEC", 2): 48, ("SEC", 3): 36,
    ("BIRD", 1): 24, ("BIRD", 2): 32, ("BIRD", 3): 24,
}  # fmt: skip
TOTAL_SESSIONS = sum(SESSIONS_BY_STRATUM.values())  # 300
TOTAL_TURNS = 1400
SESSIONS_BY_TIER = {t: sum(n for (_, tier), n in SESSIONS_BY_STRATUM.items() if tier == t) for t in (1, 2, 3)}
SESSIONS_BY_SOURCE = {p: sum(n for (src, _), n in SESSIONS_BY_STRATUM.items() if src == p) for p in REPORT_SOURCES}
TEN_TURN_BY_SOURCE = {"NW": 7, "SEC": 9, "BIRD": 4}
MEMORY_CRITICAL_TURNS = 1100
PAPER_SESSION_ID = re.compile(r"^(NW|SEC|BIRD)-([123])-(\d{3})$")


def expected_counts(sessions: int | None = None) -> dict[str, int]:
    """The counts the GX suites expect (their count `$PARAMETER`s, expectations/benchmark_*.json).
    The whole benchmark's by default. For a benchmark built at a size (`sessions`: the size setting,
    sample.py's sample of the whole one) the session counts that sample takes from each source x tier,
    and no turn count: which tier-3 sessions have ten turns depends on which sessions are drawn."""
    if sessions is None:
        strata = SESSIONS_BY_STRATUM
    else:
        check_in_range(sessions, len(SESSIONS_BY_STRATUM), TOTAL_SESSIONS, name="benchmark sessions")
        strata = stratum_takes(SESSIONS_BY_STRATUM, sessions)
    counts = {"sessions": sum(strata.values())}
    for tier in (1, 2, 3):
        counts[f"tier_{tier}_sessions"] = sum(n for (_, t), n in strata.items() if t == tier)
    for prefix in SESSIONS_BY_SOURCE:
        counts[f"{prefix.lower()}_sessions"] = sum(n for (p, _), n in strata.items() if p == prefix)
        counts.update({f"{prefix.lower()}_t{t}_sessions": strata[(prefix, t)] for t in (1, 2, 3)})
    if sessions is None:
        counts |= {"turns": TOTAL_TURNS, "memory_critical_turns": MEMORY_CRITICAL_TURNS}
        counts |= {f"{p.lower()}_ten_turn_sessions": n for p, n in TEN_TURN_BY_SOURCE.items()}
    return counts


# The counts only the whole benchmark has: a sized build's suites leave their expectations out.
WHOLE_BENCHMARK_COUNTS = frozenset(expected_counts()) - frozenset(expected_counts(TOTAL_SESSIONS - 1))


def violations(turns: Iterable[Mapping[str, Any]]) -> list[str]:
    rows = list(turns)
    problems: list[str] = []
    by_session: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_session.setdefault(r["session_id"], []).append(r)

    if len(by_session) != TOTAL_SESSIONS:
        problems.append(f"session count is {len(by_session)}, expected {TOTAL_SESSIONS}")
    if len(rows) != TOTAL_TURNS:
        problems.append(f"turn count is {len(rows)}, expected {TOTAL_TURNS}")

    tiers: Counter[int] = Counter()
    sources: Counter[str] = Counter()
    ten_turn: Counter[str] = Counter()
    for sid, ts in by_session.items():
        m = PAPER_SESSION_ID.match(sid)
        if not m:
            problems.append(f"session id {sid!r} does not match PREFIX-TIER-NNN")
            continue
        prefix, tier = m.group(1), int(m.group(2))
        tiers[tier] += 1
        sources[prefix] += 1
        for t in ts:
            if t["source"] != prefix or t["tier"] != tier:
                problems.append(
                    f"{sid} turn {t['turn_index']}: source/tier {t['source']}/{t['tier']} disagree with id"
                )
        indices = sorted(t["turn_index"] for t in ts)
        if indices != list(range(1, len(ts) + 1)):
            problems.append(f"{sid}: turn indices {indices} are not 1..{len(ts)}")
        allowed = {1: {1}, 2: {4}, 3: {9, 10}}[tier]
        if len(ts) not in allowed:
            problems.append(f"{sid}: {len(ts)} turns, tier {tier} allows {sorted(allowed)}")
        if tier == 3 and len(ts) == 10:
            ten_turn[prefix] += 1
        problems.extend(session_memory_problems(sid, sorted(ts, key=lambda t: t["turn_index"])))

    if dict(tiers) != SESSIONS_BY_TIER:
        problems.append(f"sessions by tier {dict(sorted(tiers.items()))}, expected {SESSIONS_BY_TIER}")
    if dict(sources) != SESSIONS_BY_SOURCE:
        problems.append(f"sessions by source {dict(sorted(sources.items()))}, expected {SESSIONS_BY_SOURCE}")
    if dict(ten_turn) != TEN_TURN_BY_SOURCE:
        problems.append(
            f"ten-turn tier-3 sessions by source {dict(sorted(ten_turn.items()))}, expected {TEN_TURN_BY_SOURCE}"
        )
    critical = sum(1 for r in rows if r["memory_critical"])
    if critical != MEMORY_CRITICAL_TURNS:
        problems.append(f"memory-critical turns: {critical}, expected {MEMORY_CRITICAL_TURNS}")
    return problems


def session_memory_problems(
    sid: str, turns: list[Mapping[str, Any]], carried: frozenset[str] = frozenset()
) -> list[str]:
    """`carried`: the keys bound by the earlier session this one continues (extended benchmark)."""
    problems = []
    bound: set[str] = set(carried)
    for t in turns:
        where = f"{sid} turn {t['turn_index']}"
        refs = list(t["referenced_context_keys"])
        expected_critical = bool(refs) and all(k in bound for k in refs)
        if t["turn_index"] == 1 and t["memory_critical"] and not carried:
            problems.append(f"{where}: turn 1 is flagged memory-critical")
        unbound = [k for k in refs if k not in bound]
        if unbound:
            problems.append(
                f"{where}: referenced keys {unbound} are not bound by an earlier turn's state_updates"
            )
        if bool(t["memory_critical"]) != expected_critical:
            problems.append(
                f"{where}: memory_critical={t['memory_critical']} but the rule gives {expected_critical}"
            )
        if t["memory_critical"] and not t.get("fallback_sql"):
            problems.append(f"{where}: memory-critical turn has no fallback_sql")
        if not t.get("gt_sql"):
            problems.append(f"{where}: empty gt_sql")
        if not (t.get("output_requirements") or "").strip():
            problems.append(f"{where}: no output_requirements")
        if not t.get("paraphrase_sql"):
            problems.append(f"{where}: no paraphrase_sql")
        bound |= set(t["state_updates"])
    return problems


def verify(turns: Iterable[Mapping[str, Any]]) -> None:
    problems = violations(turns)
    if problems:
        shown = "; ".join(problems[:20])
        more = f" (+{len(problems) - 20} more)" if len(problems) > 20 else ""
        raise BenchmarkInvariantError(f"benchmark violates {len(problems)} invariant(s): {shown}{more}")
