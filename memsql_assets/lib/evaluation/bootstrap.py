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

Epochs (independent samples of every turn): a session with E > 1 epochs is a cluster of E
replicates, and each draw of it resamples its epochs too (two-stage bootstrap): draw i's epochs are
E draws with replacement, draw j being epoch floor(v(b, i, j) * E) in epoch order, where v(b, i, j)
= the first 8 hex digits of md5("<SEED>|<b>|<i>|<j>") / 2^32. With one epoch nothing is drawn: the
numbers are those of the one-stage bootstrap above.
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
    # The first 4 bytes of each digest, big-endian, are its first 8 hex digits; each replicate's hash
    # state is copied, not recomputed (a summary hashes replicates x sessions digests).
    suffixes = [str(i).encode() for i in range(size)]
    heads = []
    for b in range(1, replicates + 1):
        prefix = hashlib.md5(f"{SEED}|{b}|".encode())
        for suffix in suffixes:
            digest = prefix.copy()
            digest.update(suffix)
            heads.append(digest.digest()[:4])
    return np.frombuffer(b"".join(heads), dtype=">u4").reshape(replicates, size) / 2**32


@lru_cache(maxsize=2)
def _epoch_uniforms(replicates: int, size: int, epochs: int) -> np.ndarray:
    """v(b, i, j) for b = 1..replicates (axis 0), i < size (axis 1), j < epochs (axis 2)."""
    return np.array(
        [
            [
                [int(hashlib.md5(f"{SEED}|{b}|{i}|{j}".encode()).hexdigest()[:8], 16) / 2**32 for j in range(epochs)]
                for i in range(size)
            ]
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


Counts = tuple[int, int]  # (correct, turns)


def session_interval(sessions: Sequence[Counts | Sequence[Counts]], replicates: int = REPLICATES) -> Interval:
    """`sessions`, in session-id order: each (correct, turns), or a list of them per epoch in epoch
    order. EX in percent; `n` counts turns over every epoch."""
    by_epoch = [[s] if isinstance(s[0], int | np.integer) else list(s) for s in sessions]  # type: ignore[list-item]
    n = sum(t for epochs in by_epoch for _, t in epochs)
    if not by_epoch or not n:
        return Interval(n, None, None, None)
    rows = draws(len(by_epoch), replicates)  # (replicate, draw) -> session
    most = max(len(e) for e in by_epoch)
    if most == 1:
        correct, turns = np.array([e[0] for e in by_epoch], dtype=np.int64).T
        stats = (100.0 * correct[rows].sum(axis=1) / turns[rows].sum(axis=1)).tolist()
    else:
        # Sessions x epochs, padded; a drawn session of E epochs takes epochs floor(v * E) for j < E.
        counts = np.zeros((len(by_epoch), most, 2), dtype=np.int64)
        for s, epochs in enumerate(by_epoch):
            counts[s, : len(epochs)] = epochs
        sizes = np.array([len(e) for e in by_epoch])[rows][..., None]  # (replicate, draw, 1)
        picked = np.floor(_epoch_uniforms(replicates, len(by_epoch), most) * sizes).astype(np.intp)
        used = np.arange(most) < sizes  # (replicate, draw, j)
        chosen = counts[rows[..., None], picked] * used[..., None]  # (replicate, draw, j, [c, n])
        totals = chosen.sum(axis=(1, 2))
        stats = (100.0 * totals[:, 0] / totals[:, 1]).tolist()
    return Interval(
        n,
        round(statistics.stdev(stats), 4),
        round(quantile(stats, 0.025), 4),
        round(quantile(stats, 0.975), 4),
    )
