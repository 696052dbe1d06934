"""Every turn's answer is stated and unambiguous on the built databases.

Per turn: the output requirement and the paraphrase SQL are present; the paraphrase returns the
ground truth's result (strict EX); the ground truth's shape agrees with the source guidance
(guidance_check.py); and no `ORDER BY ... LIMIT 1` ground truth (or fallback) ties on
its ranking key, so no answer rests on an unstated tie-break. A failure names the turn, the template
file and variant, and shows both results.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot

from memsql_assets.lib.benchmark.guidance_check import guidance_problems
from memsql_assets.lib.benchmark.templates import template_path
from memsql_assets.lib.benchmark.ties import tie_probe_sql, tied
from memsql_assets.lib.sql.compare import strict_equal
from memsql_assets.lib.sql.result_cache import RESULTS, ResultMemo, run_cached
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.summary import summarize_result
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, SOURCE_BY_PREFIX

REPO_ROOT = Path(__file__).resolve().parents[3]


@dataclass
class AnswerReport:
    checked: int = 0
    limit_one: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def _template_file(turn: Mapping[str, Any]) -> str:
    from memsql_assets.lib.benchmark.extended.template import (
        extended_template_path,  # it imports this module's neighbours
    )

    source = SOURCE_BY_PREFIX[turn["source"]]
    extended = turn.get("benchmark") == EXTENDED_BENCHMARK
    path = extended_template_path(source) if extended else template_path(source, int(turn["tier"]))
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


Problem = tuple[str, dict[str, str]]  # (what is wrong, result previews)


def _turn_problems(
    t: Mapping[str, Any], conn: sqlite3.Connection, memo: ResultMemo
) -> tuple[list[Problem], int]:
    """The problems of one turn, and how many of its ground-truth and fallback queries are LIMIT 1."""
    problems: list[Problem] = []
    if not (t.get("output_requirements") or "").strip():
        problems.append(("no output_requirements", {}))
    gold = run_cached(conn, t["gt_sql"], memo)
    problems += [(problem, {}) for problem in guidance_problems(t, gold)]
    if not (t.get("paraphrase_sql") or "").strip():
        problems.append(("no paraphrase SQL", {}))
    else:
        para = run_cached(conn, t["paraphrase_sql"], memo)
        if not strict_equal(gold.rows, para.rows):
            previews = {
                "gt_sql_result": summarize_result(gold),
                "paraphrase_sql_result": summarize_result(para),
            }
            problems.append(("paraphrase result differs from the ground truth", previews))
    limit_one = 0
    # The fallback is the contamination probe and the stale ground truth (extended turns) the stale-state
    # probe: as unambiguous as the ground truth.
    for kind in ("gt_sql", "fallback_sql", "stale_gt_sql"):
        sql = t.get(kind)
        if not sql:
            continue
        try:
            probe = tie_probe_sql(sql)
        except sqlglot.errors.ParseError as exc:
            problems.append((f"cannot parse {kind} to probe it for ties: {exc}", {}))
            continue
        if probe is None:
            continue
        limit_one += 1
        ranked = run_cached(conn, probe, memo)
        if not ranked.ok:
            problems.append((f"tie probe of the LIMIT 1 {kind} failed: {ranked.error}", {}))
        elif tied(ranked.rows or []):
            answer = gold if kind == "gt_sql" else run_cached(conn, sql, memo)
            previews = {f"{kind}_result": summarize_result(answer), "tied_rows": summarize_result(ranked)}
            problems.append(
                (
                    f"LIMIT 1 {kind}: the top two rows tie on the first ORDER BY key, so the unstated "
                    "tie-break decides the answer",
                    previews,
                )
            )
    return problems, limit_one


def check_answers(
    turns: Iterable[Mapping[str, Any]], db_paths: Mapping[str, Path], cache: Path | None = None
) -> AnswerReport:
    turns = list(turns)
    by_source: dict[str, list[int]] = {}
    for i, t in enumerate(turns):
        by_source.setdefault(SOURCE_BY_PREFIX[t["source"]], []).append(i)

    def check_source(name: str) -> list[tuple[int, list[Problem], int]]:
        memo = RESULTS.for_database(db_paths[name], store=cache)
        with contextlib.closing(open_readonly(db_paths[name])) as conn:
            return [(i, *_turn_problems(turns[i], conn, memo)) for i in by_source[name]]

    # A thread per database: SQLite runs a query without holding the GIL, so they use every core.
    with ThreadPoolExecutor(max(1, len(by_source))) as pool:
        checked = sorted((r for rs in pool.map(check_source, by_source) for r in rs), key=lambda r: r[0])
    report = AnswerReport()
    for i, problems, limit_one in checked:
        t = turns[i]
        report.checked += 1
        report.limit_one += limit_one
        for problem, previews in problems:
            report.failures.append(
                {
                    "turn": f"{t['session_id']}#{t['turn_index']}",
                    "template": _template_file(t),
                    "variant": str(t.get("variant_id")),
                    "problem": problem,
                    **previews,
                }
            )
    return report
