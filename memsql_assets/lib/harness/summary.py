"""Partition summaries: the numbers a person reads in the Dagster UI and `memsql eval --json`."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from memsql_assets.lib.evaluation.bootstrap import session_interval
from memsql_assets.lib.vocabulary import ERROR_CLASSES


def _pct(num: int, den: int) -> float | None:
    """None when there is nothing to score: the dbt marts' `pct` macro says null, never 0."""
    return round(100.0 * num / den, 2) if den else None


def _ex_by(rows: list[Mapping[str, Any]], key: str) -> dict[Any, float | None]:
    """EX per value of `key`, in the values' own order (turn 2 before turn 10)."""
    groups: dict[Any, list[bool]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(bool(r["ex_strict"]))
    return {k: _pct(sum(v), len(v)) for k, v in sorted(groups.items())}


def _by_session(rows: list[Mapping[str, Any]]) -> list[list[tuple[int, int]]]:
    """(correct, turns) per session and epoch, sessions in id order, epochs in epoch order: the
    clusters of the bootstrap (rows without an epoch, written before epochs, are epoch 1)."""
    cells: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in rows:
        counts = cells[r["session_id"]][int(r.get("epoch") or 1)]
        counts[0] += bool(r["ex_strict"])
        counts[1] += 1
    return [[(c, t) for _, (c, t) in sorted(epochs.items())] for _, epochs in sorted(cells.items())]


def summarize(rows: Iterable[Mapping[str, Any]], model: str, condition: str, wall_s: float) -> dict[str, Any]:
    rows = list(rows)
    n = len(rows)
    turns = len({(r["session_id"], r["turn_index"]) for r in rows})
    classes = Counter(r["error_class"] for r in rows)
    critical = [r for r in rows if r["memory_critical"]]
    interval = session_interval(_by_session(rows))
    return {
        "model": model,
        "condition": condition,
        "turns": turns,  # distinct benchmark turns
        "epochs": len({int(r.get("epoch") or 1) for r in rows}),
        # Scored rows, what EX and its interval rest on (the marts' n_turns): turns x epochs.
        "n_turns": n,
        "ex_strict": _pct(sum(r["ex_strict"] for r in rows), n),
        "ex_strict_se": interval.se,
        "ex_strict_ci95": None if interval.lo is None else [interval.lo, interval.hi],
        "ex_bag": _pct(sum(r["ex_bag"] for r in rows), n),
        "ex_set": _pct(sum(r["ex_set"] for r in rows), n),
        "ex_memory_critical": _pct(sum(r["ex_strict"] for r in critical), len(critical)),
        "ex_by_tier": {str(k): v for k, v in _ex_by(rows, "tier").items()},
        "ex_by_source": _ex_by(rows, "source"),
        "ex_by_turn_index": {int(k): v for k, v in _ex_by(rows, "turn_index").items()},
        "error_classes": {c: classes.get(c, 0) for c in ERROR_CLASSES},
        "contaminated": sum(bool(r["contaminated"]) for r in rows),
        "fallback_match": sum(bool(r["fallback_match"]) for r in rows),
        # Turns after a correction (extended benchmark) and those whose result is the overwritten state's.
        "stale_turns": sum(r.get("stale_state") is not None for r in rows),
        "stale_state": sum(bool(r.get("stale_state")) for r in rows),
        "gt_errors": sum(1 for r in rows if r["gt_error"]),
        "model_errors": dict(Counter(r["model_error_type"] for r in rows if r["model_error_type"])),
        "calls": sum(int(r["attempts"] or 0) for r in rows),
        "cache_hits": sum(bool(r["cache_hit"]) for r in rows),
        "prompt_tokens": sum(int(r["prompt_tokens"] or 0) for r in rows),
        "completion_tokens": sum(int(r["completion_tokens"] or 0) for r in rows),
        "cost_usd": round(sum(float(r["cost_usd"] or 0.0) for r in rows), 6),
        "wall_s": round(wall_s, 2),
    }
