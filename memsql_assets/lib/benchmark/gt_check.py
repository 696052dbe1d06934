"""Prove every ground-truth and fallback query executes and returns a non-empty, non-null result."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsql_assets.lib.sql.result_cache import RESULTS, run_cached
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX


@dataclass
class GroundTruthReport:
    executed: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def _problem(result) -> str | None:
    if not result.ok:
        return result.error
    if not result.rows:
        return "empty result"
    if all(v is None for row in result.rows for v in row):
        return "result is all NULL"
    return None


def check_ground_truth(
    turns: Iterable[Mapping[str, Any]], db_paths: Mapping[str, Path], cache: Path | None = None
) -> GroundTruthReport:
    report = GroundTruthReport()
    conns = {name: open_readonly(path) for name, path in db_paths.items()}
    # The partitions that follow in the same process find these results in the shared cache.
    memos = {name: RESULTS.for_database(path, store=cache) for name, path in db_paths.items()}
    try:
        for t in turns:
            name = SOURCE_BY_PREFIX[t["source"]]
            conn = conns[name]
            for kind in ("gt_sql", "fallback_sql", "stale_gt_sql"):  # the stale one: extended turns only
                sql = t.get(kind)
                if not sql:
                    continue
                report.executed += 1
                problem = _problem(run_cached(conn, sql, memos[name]))
                if problem:
                    report.failures.append(
                        {"turn": f"{t['session_id']}#{t['turn_index']}", "field": kind, "problem": problem}
                    )
    finally:
        for c in conns.values():
            c.close()
    return report
