"""How well the trajectory store covers what the benchmark asks (a measured property of the store).

For each distinct (source, question) of the benchmark, conditions E and E_prompt would load the top-1 trajectory
of the same database. The trajectory is *relevant* when its final SQL reads every table the ground
truth reads (it shows the joins the answer needs). Reported: that share overall and per source,
the mean table Jaccard per source (how close the two table sets are), and the mean similarity of
question to retrieved question.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

import sqlglot
from sqlglot import exp

from memsql_assets.lib.errors import MemsqlError

TARGET_OVERALL = 0.8
TARGET_PER_SOURCE = 0.7


@functools.lru_cache(maxsize=8192)
def sql_tables(sql: str) -> frozenset[str]:
    """The base tables a SQLite query reads (case-folded; CTE names are not tables)."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.ParseError as exc:
        raise MemsqlError(f"cannot read the tables of SQL {sql[:120]!r}: {exc}") from exc
    ctes = {c.alias_or_name.casefold() for c in tree.find_all(exp.CTE)}
    return frozenset(t.name.casefold() for t in tree.find_all(exp.Table) if t.name.casefold() not in ctes)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


@dataclass(frozen=True)
class Asked:
    """One distinct benchmark question and the tables its ground truth reads."""

    source: str
    question: str
    tables: frozenset[str]


@dataclass(frozen=True)
class Match:
    asked: Asked
    question_id: str | None  # the retrieved synthetic question (None: the store has none for the source)
    similarity: float
    tables: frozenset[str]

    @property
    def covered(self) -> bool:
        return self.question_id is not None and self.asked.tables <= self.tables

    @property
    def jaccard(self) -> float:
        return jaccard(self.asked.tables, self.tables) if self.question_id is not None else 0.0


def distinct_questions(turns: Iterable[Mapping[str, Any]]) -> list[Asked]:
    """Distinct (source, question) pairs; a text asked with several ground truths needs all their tables."""
    tables: dict[tuple[str, str], frozenset[str]] = {}
    for i, t in enumerate(turns):
        try:
            key, sql = (str(t["source"]), str(t["question"])), str(t["gt_sql"])
        except KeyError as exc:
            raise MemsqlError(
                f"benchmark turn #{i + 1}: missing field {exc}; expected source, question, gt_sql"
            ) from exc
        tables[key] = tables.get(key, frozenset()) | sql_tables(sql)
    return [Asked(s, q, ts) for (s, q), ts in sorted(tables.items())]


# (source, questions) -> per question: (synthetic question id, similarity, final SQL), or None
Nearest = Callable[[str, Sequence[str]], Sequence[tuple[str, float, str] | None]]


def match_all(asked: Sequence[Asked], nearest: Nearest) -> list[Match]:
    out: list[Match] = []
    for source in sorted({a.source for a in asked}):
        mine = [a for a in asked if a.source == source]
        for a, hit in zip(mine, nearest(source, [a.question for a in mine]), strict=True):
            if hit is None:
                out.append(Match(a, None, 0.0, frozenset()))
            else:
                qid, sim, sql = hit
                out.append(Match(a, qid, sim, sql_tables(sql) if sql else frozenset()))
    return out


def _share(ms: Sequence[Match]) -> float:
    return round(sum(m.covered for m in ms) / len(ms), 4) if ms else 0.0


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    return round(fmean(vals), 4) if vals else 0.0


def coverage_report(matches: Sequence[Match], misses_shown: int = 10) -> dict[str, Any]:
    """coverage, by_source, mean_jaccard and mean_similarity (per source), counts, targets, examples."""
    by_source: dict[str, list[Match]] = {}
    for m in matches:
        by_source.setdefault(m.asked.source, []).append(m)
    misses = [m for m in matches if not m.covered]
    report: dict[str, Any] = {
        "questions": len(matches),
        "covered": sum(m.covered for m in matches),
        "coverage": _share(matches),
        "by_source": {s: _share(ms) for s, ms in sorted(by_source.items())},
        "mean_jaccard": {s: _mean(m.jaccard for m in ms) for s, ms in sorted(by_source.items())},
        "mean_similarity": {s: _mean(m.similarity for m in ms) for s, ms in sorted(by_source.items())},
        "mean_similarity_overall": _mean(m.similarity for m in matches),
        "questions_by_source": {s: len(ms) for s, ms in sorted(by_source.items())},
        "target": {"coverage": TARGET_OVERALL, "per_source": TARGET_PER_SOURCE},
        "misses": [
            {
                "source": m.asked.source,
                "question": m.asked.question,
                "needs": sorted(m.asked.tables),
                "retrieved": m.question_id,
                "has": sorted(m.tables),
            }
            for m in misses[:misses_shown]
        ],
    }
    report["meets_target"] = (
        bool(matches)
        and report["coverage"] >= TARGET_OVERALL
        and all(v >= TARGET_PER_SOURCE for v in report["by_source"].values())
    )
    return report
