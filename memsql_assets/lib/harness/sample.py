"""Sample runs: a deterministic sample of whole sessions, stratified by source x tier.

The sample depends only on the benchmark and its size, so every model and condition evaluates the
same sessions, and a later full run finds the sampled cells' answers in the request store. Each
stratum gets one session, the rest is shared in proportion to the strata's sizes (largest
remainder), and inside a stratum sessions are taken in the order of sha256(SEED, session_id): a
fixed, arbitrary order unrelated to session numbering.
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


def strata(turns: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int], list[str]]:
    """(source, tier) -> the stratum's session ids, each in the SEED's order."""
    by_stratum: dict[tuple[str, int], set[str]] = defaultdict(set)
    for t in turns:
        by_stratum[(t["source"], int(t["tier"]))].add(t["session_id"])
    return {
        k: sorted(v, key=lambda sid: hashlib.sha256(f"{SEED}|{sid}".encode()).hexdigest())
        for k, v in sorted(by_stratum.items())
    }


def allowed_range(turns: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(one session per stratum, every session): the sample sizes this benchmark allows."""
    groups = strata(turns)
    return len(groups), sum(len(v) for v in groups.values())


def check_size(turns: Sequence[Mapping[str, Any]], n: int, name: str = "sessions") -> None:
    low, high = allowed_range(turns)
    if not low <= n <= high:
        raise SampleSizeError(
            f"{name} {n}: expected {low} to {high} (at least one session for each of the benchmark's "
            f"{low} source x tier strata, at most its {high} sessions)"
        )


def sample_sessions(turns: Sequence[Mapping[str, Any]], n: int) -> list[str]:
    """The n sampled session ids, sorted; SampleSizeError when n is outside allowed_range."""
    check_size(turns, n)
    groups = strata(turns)
    total = sum(len(v) for v in groups.values())
    take = dict.fromkeys(groups, 1)
    spare = n - len(groups)
    # Proportional shares of the spare sessions among what each stratum has left (largest remainder).
    room = {k: len(v) - 1 for k, v in groups.items()}
    left = total - len(groups)
    if spare and left:
        quotas = {k: spare * room[k] / left for k in groups}
        for k in groups:
            take[k] += int(quotas[k])
        rest = spare - sum(int(q) for q in quotas.values())
        for k in sorted(groups, key=lambda k: (-(quotas[k] - int(quotas[k])), k))[:rest]:
            take[k] += 1
    return sorted(sid for k, sids in groups.items() for sid in sids[: take[k]])


def sample_turns(turns: Sequence[Mapping[str, Any]], n: int | None) -> list[Mapping[str, Any]]:
    """Every turn of the sampled sessions (all turns when n is None)."""
    if n is None:
        return list(turns)
    chosen = set(sample_sessions(turns, n))
    return [t for t in turns if t["session_id"] in chosen]
