"""Cluster bootstrap over whole sessions: the standard error and 95 % interval of an EX figure.

Turns of one session are not independent (a miss on turn 2 propagates), so the unit resampled is
the session. Replicate b draws S sessions with replacement from the S sessions of the figure, draw
i being session floor(u(b, i) * S) in session-id order, where u(b, i) = the first 8 hex digits of
md5("<SEED>|<b>|<i>") / 2^32. The draws are a pure function of (b, i), so the same numbers come out
here (`memsql eval --json`) and in the dbt marts (macro session_bootstrap), on every run.

    EX*_b = 100 * sum(correct over drawn sessions) / sum(turns over drawn sessions)
    SE    = sample standard deviation of EX*_1..EX*_B
    CI95  = [2.5th, 97.5th percentile of EX*_b] (linear interpolation)

A paired difference (e.g. ablation B_wm5 - B) draws the same sessions for both sides.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

SEED = "memsql"
REPLICATES = 1000


@dataclass(frozen=True)
class Interval:
    n: int  # turns
    se: float | None
    lo: float | None
    hi: float | None


@lru_cache(maxsize=4)
def _uniforms(replicates: int, size: int) -> np.ndarray:
    return np.array(
        [
            [int(hashlib.md5(f"{SEED}|{b}|{i}".encode()).hexdigest()[:8], 16) / 2**32 for i in range(size)]
            for b in range(1, replicates + 1)
        ]
    )


def draws(n_sessions: int, replicates: int = REPLICATES) -> np.ndarray:
    """For each replicate (row), the indexes (into the sessions in id order) of its n_sessions draws."""
    return np.floor(_uniforms(replicates, n_sessions) * n_sessions).astype(np.intp)


def quantile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (DuckDB's quantile_cont, numpy's default)."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def session_interval(sessions: Sequence[tuple[int, int]], replicates: int = REPLICATES) -> Interval:
    """`sessions`: (correct, turns) per session, in session-id order. EX in percent."""
    n = sum(t for _, t in sessions)
    if not sessions or not n:
        return Interval(n, None, None, None)
    correct, turns = np.array(sessions, dtype=np.int64).T
    rows = draws(len(sessions), replicates)
    stats = (100.0 * correct[rows].sum(axis=1) / turns[rows].sum(axis=1)).tolist()
    return Interval(
        n,
        round(statistics.stdev(stats), 4),
        round(quantile(stats, 0.025), 4),
        round(quantile(stats, 0.975), 4),
    )
