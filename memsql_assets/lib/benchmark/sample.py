"""Sample runs: a deterministic sample of whole sessions, stratified by source x tier.

The sample depends only on the benchmark and its size, so every model and condition evaluates the
same sessions, and a later full run finds the sampled cells' answers in the request store. Each
stratum gets one session, the rest is shared in proportion to the strata's sizes (largest
remainder), and inside a stratum sessions are taken in the order of sha256(SEED, session_id): a
fixed, arbitrary order unrelated to session numbering. An analyst's history (the extended
benchmark's sessions of one `analyst`) is taken whole: its sessions are ordered together, by
sha256(SEED, analyst), and a stratum takes whole histories until it has its share, so a sample may
hold up to a history's length less one more sessions per stratum than asked.

The benchmark's size setting (MEMSQL_BENCHMARK_SESSIONS, defs/resources.py) builds the paper benchmark
as the sample of that many sessions that `memsql eval --sessions N` takes from the whole one.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from memsql_assets.lib.errors import MemsqlError

SEED = "memsql-sample-1"


class SampleSizeError(MemsqlError):
    """A sample size outside what the benchmark allows (names the allowed range)."""


Stratum = tuple[str, int]  # (source prefix, tier)


def _order(key: str) -> str:
    return hashlib.sha256(f"{SEED}|{key}".encode()).hexdigest()


def histories(turns: Sequence[Mapping[str, Any]]) -> dict[Stratum, list[list[str]]]:
    """(source, tier) -> the stratum's histories (an analyst's session ids in session order; a session
    without an analyst is a history of its own), in the SEED's order."""
    by_stratum: dict[Stratum, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for t in turns:
        by_stratum[(t["source"], int(t["tier"]))][t.get("analyst") or t["session_id"]].add(t["session_id"])
    return {
        k: [sorted(units[u]) for u in sorted(units, key=_order)] for k, units in sorted(by_stratum.items())
    }


def strata(turns: Sequence[Mapping[str, Any]]) -> dict[Stratum, list[str]]:
    """(source, tier) -> the stratum's session ids, history by history in the SEED's order."""
    return {k: [sid for h in hs for sid in h] for k, hs in histories(turns).items()}


def allowed_range(turns: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(one session per stratum, every session): the sample sizes this benchmark allows."""
    groups = strata(turns)
    return len(groups), sum(len(v) for v in groups.values())


def check_size(turns: Sequence[Mapping[str, Any]], n: int, name: str = "sessions") -> None:
    check_in_range(n, *allowed_range(turns), name=name)


def check_in_range(n: int, low: int, high: int, name: str = "sessions") -> None:
    """SampleSizeError naming `name` unless low <= n <= high (a benchmark's allowed_range)."""
    if not low <= n <= high:
        raise SampleSizeError(
            f"{name} {n}: expected {low} to {high} (at least one session for each of the benchmark's "
            f"{low} source x tier strata, at most its {high} sessions)"
        )


def stratum_takes(sizes: Mapping[Stratum, int], n: int) -> dict[Stratum, int]:
    """How many of n sessions each stratum of `sizes` (stratum -> its session count) gives: one each,
    the rest in proportion to what each has left (largest remainder, ties by stratum)."""
    take = dict.fromkeys(sizes, 1)
    spare = n - len(sizes)
    room = {k: v - 1 for k, v in sizes.items()}
    left = sum(room.values())
    if spare and left:
        quotas = {k: spare * room[k] / left for k in sizes}
        for k in sizes:
            take[k] += int(quotas[k])
        rest = spare - sum(int(q) for q in quotas.values())
        for k in sorted(sizes, key=lambda k: (-(quotas[k] - int(quotas[k])), k))[:rest]:
            take[k] += 1
    return take


def sample_sessions(turns: Sequence[Mapping[str, Any]], n: int, name: str = "sessions") -> list[str]:
    """The n sampled session ids, sorted; SampleSizeError (naming `name`) when n is outside allowed_range."""
    check_size(turns, n, name)
    groups = histories(turns)
    take = stratum_takes({k: sum(map(len, hs)) for k, hs in groups.items()}, n)
    chosen: list[str] = []
    for k, hs in groups.items():
        taken = 0
        for h in hs:
            if taken >= take[k]:
                break
            chosen += h
            taken += len(h)
    return sorted(chosen)


def sample_turns(turns: Sequence[Mapping[str, Any]], n: int | None) -> list[Mapping[str, Any]]:
    """Every turn of the sampled sessions (all turns when n is None)."""
    if n is None:
        return list(turns)
    chosen = set(sample_sessions(turns, n))
    return [t for t in turns if t["session_id"] in chosen]
