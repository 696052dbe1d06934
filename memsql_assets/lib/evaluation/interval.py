"""The 95 % interval of an unpaired EX figure: a Wilson score interval with the session as the unit.

Turns of one session are not independent (a miss on turn 2 propagates to turn 3), so the interval
takes the figure's own estimate, the turn proportion p = correct / turns (over every epoch), with
the effective sample size n = the number of distinct sessions, not turns. That is the most
conservative design effect (turns of a session as one observation); it keeps the interval centred
on the EX the tables print, which a session-level mean proportion would not be when sessions have
unequal turn counts. Wilson, unlike a percentile bootstrap or the normal approximation, does not
collapse at 0 % and 100 %: 30 all-correct sessions give [88.6 %, 100 %].

    lo, hi = (p + z²/2n ∓ z · sqrt(p(1 − p)/n + z²/4n²)) / (1 + z²/n),   z = 1.959964

This module is the one implementation: `memsql eval --json` calls it, and the dbt marts call it as
the DuckDB functions ex_ci_lo(correct, turns, sessions) and ex_ci_hi(…), which the dbt-duckdb
plugin `memsql_assets.lib.evaluation.duckdb_plugin` registers on every dbt connection.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile
DECIMALS = 4


def _check(correct: int, turns: int, sessions: int) -> None:
    if not 0 <= correct <= turns:
        raise ValueError(f"EX interval: correct turns must be within 0..turns, got {correct} of {turns}")
    if not 0 < sessions <= turns:
        raise ValueError(f"EX interval: sessions must be within 1..turns ({turns}), got {sessions}")


def ex_interval(correct: int, turns: int, sessions: int) -> tuple[float, float] | None:
    """(lo, hi) in percent for `correct` of `turns` turns over `sessions` sessions; None with no turns."""
    if not turns:
        return None
    _check(correct, turns, sessions)
    p, n = correct / turns, sessions
    centre = p + Z95**2 / (2 * n)
    spread = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n**2))
    scale = 1 + Z95**2 / n
    return (
        round(max(0.0, 100 * (centre - spread) / scale), DECIMALS),
        round(min(100.0, 100 * (centre + spread) / scale), DECIMALS),
    )


def ex_ci_lo(correct: int | None, turns: int | None, sessions: int | None) -> float | None:
    """The lower end of `ex_interval`; null (no interval) when there are no turns."""
    bounds = ex_interval(correct or 0, turns or 0, sessions or 0)
    return None if bounds is None else bounds[0]


def ex_ci_hi(correct: int | None, turns: int | None, sessions: int | None) -> float | None:
    """The upper end of `ex_interval`; null (no interval) when there are no turns."""
    bounds = ex_interval(correct or 0, turns or 0, sessions or 0)
    return None if bounds is None else bounds[1]


def interval_text(lo: float, hi: float) -> str:
    """An interval as every surface prints it (CLI, Dagster metadata, report): 88.6–100.0."""
    return f"{lo:.1f}–{hi:.1f}"
