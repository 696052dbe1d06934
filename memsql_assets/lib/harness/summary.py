"""Partition summaries: the numbers a person reads in the Dagster UI and `memsql eval --json`."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from memsql_assets.lib.evaluation.interval import ex_interval
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


def reasoning_warning(rows: list[Mapping[str, Any]], model: str, condition: str, expected: bool) -> str | None:
    """A warning when an entry configured to reason answered without a single reasoning token over
    the whole partition: the provider's default may be no reasoning at all."""
    answered = [r for r in rows if not r["model_error_type"]]
    if not expected or not answered or any(r.get("reasoning_tokens") for r in answered):
        return None
    return (
        f"{model} is configured to reason, but its {len(answered)} answered turns under {condition} "
        "report 0 reasoning tokens: the provider may not be reasoning (GPT-5.1 and later do not "
        "unless a reasoning effort is sent; see docs/reference_models.md)"
    )


def summarize(
    rows: Iterable[Mapping[str, Any]], model: str, condition: str, wall_s: float, reasoning_expected: bool = False
) -> dict[str, Any]:
    """The partition's numbers; `reasoning_expected`: the registry entry is configured to reason."""
    rows = list(rows)
    warning = reasoning_warning(rows, model, condition, reasoning_expected)
    n = len(rows)
    turns = len({(r["session_id"], r["turn_index"]) for r in rows})
    classes = Counter(r["error_class"] for r in rows)
    critical = [r for r in rows if r["memory_critical"]]
    correct = sum(bool(r["ex_strict"]) for r in rows)
    sessions = len({r["session_id"] for r in rows})
    return {
        "model": model,
        "condition": condition,
        "turns": turns,  # distinct benchmark turns
        "epochs": len({int(r.get("epoch") or 1) for r in rows}),
        # Scored rows, what EX and its interval rest on (the marts' n_turns): turns x epochs.
        "n_turns": n,
        "sessions": sessions,
        "ex_strict": _pct(correct, n),
        # Wilson over sessions (lib/evaluation/interval.py), what the marts' ex_ci_lo/ex_ci_hi return.
        "ex_strict_ci95": None if not n else list(ex_interval(correct, n, sessions)),
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
        "reasoning_tokens": sum(int(r.get("reasoning_tokens") or 0) for r in rows),
        "warnings": [warning] if warning else [],
        "cost_usd": round(sum(float(r["cost_usd"] or 0.0) for r in rows), 6),
        "wall_s": round(wall_s, 2),
    }
