"""The synthetic-question budget (Algorithm 1): AgentSM spends more synthetic questions on larger /
more complex schemas because that is where an agent explores most (statistics: lib/sql/schema.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from memsql_assets.lib.sql.schema import SchemaStats, complexity_weight


def allocate_budget(stats: Mapping[str, SchemaStats], total: int) -> dict[str, int]:
    """Split `total` questions over the databases in proportion to their complexity weight.

    Largest-remainder rounding (ties broken by larger weight, then name) makes the sum exactly
    `total`. When total ≥ number of databases every database gets at least one question; the
    question is taken from the largest allocation (the lightest among equals), which keeps the
    allocation monotone in weight.
    """
    if total < 0:
        raise ValueError(f"total budget must be ≥ 0, got {total}")
    if not stats:
        if total:
            raise ValueError("cannot allocate a positive budget over no databases")
        return {}
    weights = {db: max(complexity_weight(s), 0.0) for db, s in stats.items()}
    wsum = sum(weights.values())
    quotas = {db: (total * w / wsum if wsum else total / len(weights)) for db, w in weights.items()}
    alloc = {db: math.floor(q) for db, q in quotas.items()}
    order = sorted(quotas, key=lambda db: (-(quotas[db] - alloc[db]), -weights[db], db))
    for db in order[: total - sum(alloc.values())]:
        alloc[db] += 1
    if total >= len(alloc):
        for db in sorted(alloc, key=lambda d: (weights[d], d)):
            if alloc[db] == 0:
                donor = max(alloc, key=lambda d: (alloc[d], -weights[d], d))
                alloc[donor] -= 1
                alloc[db] += 1
    return dict(sorted(alloc.items()))
