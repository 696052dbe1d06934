"""DataFrames the Great Expectations suites validate, derived from the benchmark's turns.

GX expectations are per column, so the cross-row invariants (referenced keys bound by an earlier
turn, contiguous turn indices, per-source tier splits) become derived columns here and the
suites in expectations/ state the expected values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from memsql_assets.lib.benchmark.extended.build import LONG_RANGE
from memsql_assets.lib.benchmark.extended.checks import continued_keys, earlier_sessions, history_violations
from memsql_assets.lib.benchmark.extended.template import OVERWRITING_TAGS
from memsql_assets.lib.vocabulary import CROSS_SESSION_TAGS, PHENOMENA, REPORT_SOURCES


def turns_frame(turns: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    rows = []
    by_session: dict[str, list[Mapping[str, Any]]] = {}
    for t in turns:
        by_session.setdefault(t["session_id"], []).append(t)
    for sid, ts in by_session.items():
        # a session continuing earlier ones (extended benchmark) starts with what its history bound
        continued = ts[0].get("continues_session_id")
        bound = set(continued_keys(by_session, sid))
        for position, t in enumerate(sorted(ts, key=lambda r: r["turn_index"]), start=1):
            refs = list(t["referenced_context_keys"])
            unbound = [k for k in refs if k not in bound]
            rule = bool(refs) and not unbound
            critical = bool(t["memory_critical"])
            rows.append(
                {
                    "turn_id": f"{sid}#{t['turn_index']}",
                    "session_id": sid,
                    "turn_index": int(t["turn_index"]),
                    "question": t.get("question") or None,
                    "gt_sql": t.get("gt_sql") or None,
                    "output_requirements": (t.get("output_requirements") or "").strip() or None,
                    "paraphrase_sql": t.get("paraphrase_sql") or None,
                    "memory_critical_int": int(critical),
                    "turn_index_contiguous": t["turn_index"] == position,
                    "first_turn_critical": t["turn_index"] == 1 and critical and not continued,
                    "later_turn_not_critical": t["turn_index"] > 1 and not critical,
                    "unbound_reference_count": len(unbound),
                    "critical_flag_matches_rule": critical == rule,
                    "critical_without_fallback": critical and not t.get("fallback_sql"),
                }
            )
            bound |= set(t["state_updates"])
    return pd.DataFrame(rows)


def extended_turns_frame(turns: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """turns_frame's columns, and those of the extended invariants: the tag, the phenomena its source
    lacks, stale ground truths only after a correction and different from the ground truth,
    long-range turns 3 to 8 turns from their value, and distractor turns whose twin session is earlier."""
    turns = list(turns)
    frame = turns_frame(turns)
    tags_by_source: dict[str, set[str]] = {}
    corrected: dict[str, int] = {}  # session -> turn index of its first correction or knowledge update
    analysts = {t["session_id"]: t.get("analyst") for t in turns}
    by_session: dict[str, list[Mapping[str, Any]]] = {}
    for t in turns:
        by_session.setdefault(t["session_id"], []).append(t)
        tags_by_source.setdefault(t["source"], set()).add(t["tag"])
        if t["tag"] in OVERWRITING_TAGS:
            corrected[t["session_id"]] = min(t["turn_index"], corrected.get(t["session_id"], t["turn_index"]))
    for sid, ts in by_session.items():  # an update in an earlier session of its history reaches every turn
        ts.sort(key=lambda t: t["turn_index"])
        if any(e in corrected for e in earlier_sessions(by_session, sid)):
            corrected[sid] = 0
    unanswered = history_violations(by_session)
    extra = {
        f"{t['session_id']}#{t['turn_index']}": {
            "tag": t["tag"],
            "source_missing_tags": len(set(PHENOMENA) - tags_by_source[t["source"]]),
            "stale_before_correction": bool(t.get("stale_gt_sql"))
            and t["turn_index"] <= corrected.get(t["session_id"], 10**6),
            "stale_equals_gt": t.get("stale_gt_sql") == t["gt_sql"],
            "long_range_out_of_range": t["tag"] == "long_range" and t["recall_distance"] not in LONG_RANGE,
            "distractor_without_earlier_twin": t["tag"] == "distractor"
            and not (t.get("twin_session_id") or "~") < t["session_id"],
            "analyst": t.get("analyst") or None,
            "continues_later_or_other_analyst": bool(t.get("continues_session_id"))
            and not (t["continues_session_id"] < t["session_id"] and analysts.get(t["continues_session_id"]) == t.get("analyst")),
            "cross_session_tag_without_continuation": t["tag"] in CROSS_SESSION_TAGS and not t.get("continues_session_id"),
            "cross_session_int": int(t["tag"] in CROSS_SESSION_TAGS),
            "history_unanswered": (t["session_id"], t["turn_index"]) in unanswered,
        }
        for t in turns
    }
    return frame.join(pd.DataFrame.from_dict(extra, orient="index"), on="turn_id")


def sessions_frame(turns: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    sessions: dict[str, dict[str, Any]] = {}
    for t in turns:
        s = sessions.setdefault(
            t["session_id"],
            {"source": t["source"], "tier": int(t["tier"]), "n_turns": 0, "analyst": t.get("analyst") or None},
        )
        s["n_turns"] += 1
    rows = []
    allowed = {1: {1}, 2: {4}, 3: {9, 10}}
    for sid, s in sessions.items():
        parts = sid.split("-")
        src, tier, n = s["source"], s["tier"], s["n_turns"]
        row: dict[str, Any] = {
            "session_id": sid,
            "source": src,
            "tier": tier,
            "n_turns": n,
            "analyst": s["analyst"],
            "id_matches_fields": len(parts) == 3 and parts[0] == src and parts[1] == str(tier),
            "turn_count_fits_tier": n in allowed.get(tier, set()),
        }
        for t in (1, 2, 3):
            row[f"is_tier_{t}"] = int(tier == t)
        for prefix in REPORT_SOURCES:
            p = prefix.lower()
            row[f"is_{p}"] = int(src == prefix)
            for t in (1, 2, 3):
                row[f"is_{p}_t{t}"] = int(src == prefix and tier == t)
            row[f"is_ten_turn_{p}"] = int(src == prefix and tier == 3 and n == 10)
        rows.append(row)
    return pd.DataFrame(rows)
