"""Score one turn: extract the SQL, run it and the ground truth, compare, classify.

Everything runs on the caller's connection, which must be read-only (sql/sandbox.open_readonly):
the sandbox for generated SQL is that connection plus run_query's time limit and row cap.

Ground-truth results are cached by SQL text in `gt_cache` (one cache per source database: the
key does not name the database; sql/result_cache.py). The fallback SQL of a turn is the next
session's ground truth, and the provenance SQL (contamination.py) the ground truth of the sessions
that supplied resolved keys, so they are looked up in, and stored into, the same cache. They run
only when they can matter: the generated SQL ran and was not strictly correct. Generated SQL goes
through the same cache: text that is the GT's or the fallback's has that query's rows (gold always,
a correct model often), and a model's other SQL, written again under another condition or epoch,
runs once per database content.

A ground truth that fails, or that hits the row cap (so that a comparison would see only part of
it), is a harness bug, not a model error: the turn is scored as not correct and the problem is
recorded in `gt_error`, which the gold check reports.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.evaluation.contamination import equals_other_answer
from memsql_assets.lib.evaluation.extract import extract_sql
from memsql_assets.lib.evaluation.taxonomy import classify, error_message
from memsql_assets.lib.sql.compare import bag_equal, set_equal, strict_equal
from memsql_assets.lib.sql.execute import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S, QueryResult
from memsql_assets.lib.sql.result_cache import ResultMemo, run_cached
from memsql_assets.lib.sql.summary import summarize_result


class TurnInputError(MemsqlError):
    """A benchmark turn given to the scorer lacks a field or has one of the wrong type."""

    def __init__(self, turn: Mapping[str, Any], field: str, problem: str):
        self.turn = turn_label(turn)
        self.field = field
        super().__init__(f"turn {self.turn}: field '{field}': {problem}")


@dataclass(frozen=True)
class TurnScore:
    extracted_sql: str | None
    ex_strict: bool
    ex_bag: bool
    ex_set: bool
    error_class: str
    error_message: str | None
    contaminated: bool  # took a value from another analyst's session (contamination.py)
    contamination_source: str | None  # that session
    fallback_match: bool  # equals the next session's ground truth (the paper's check)
    # Equals the ground truth built with a correction's overwritten value (None: the turn has none).
    stale_state: bool | None
    gt_error: str | None
    generated_row_count: int | None
    result_summary: str
    gt_summary: str  # what a gold history stores of the turn (lib/history.py)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def turn_label(turn: Mapping[str, Any]) -> str:
    return f"{turn.get('session_id', '?')}#{turn.get('turn_index', '?')}"


def score_turn(
    turn: Mapping[str, Any],
    raw_output: str | None,
    conn: sqlite3.Connection,
    gt_cache: ResultMemo | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
    provenance: Mapping[str, str] | Callable[[], Mapping[str, str]] | None = None,
    execute: bool = True,
    foreign: Callable[[str], str | None] | None = None,
) -> TurnScore:
    """`provenance`: {other session that supplied a resolved key: this turn's SQL with its profile},
    or a function that returns it, called only for a turn whose SQL ran and was not correct.
    `foreign`: the other analyst's session one of whose values the given SQL uses, or None
    (contamination by value, `SessionValues.source`), called only for a failed turn with SQL.
    `execute=False`: score from cached results only; any other query raises NotCached."""
    gt_sql, fallback_sql = _turn_sql(turn, raw_output)

    def cached(sql: str) -> QueryResult:
        return run_cached(conn, sql, gt_cache, timeout_s, row_cap, execute)

    gt = cached(gt_sql)
    gt_error = gt.error
    if gt.ok and gt.truncated:
        gt_error = f"ground truth returned more than the row cap ({row_cap} rows): comparison not trusted"

    extraction = extract_sql(raw_output)
    generated = cached(extraction.sql) if extraction.sql else None
    comparable = gt_error is None and generated is not None and generated.ok and not generated.truncated
    gen_rows = generated.rows if generated is not None else None
    ex_strict = comparable and strict_equal(gen_rows, gt.rows)
    other = _other_answers(turn, fallback_sql, generated, ex_strict, cached, provenance)
    source = other.contamination_source
    if source is None and foreign is not None and extraction.sql and not ex_strict:
        source = foreign(extraction.sql)
    error_class = classify(extraction, generated, ex_strict)
    return TurnScore(
        extracted_sql=extraction.sql,
        ex_strict=ex_strict,
        ex_bag=comparable and bag_equal(gen_rows, gt.rows),
        ex_set=comparable and set_equal(gen_rows, gt.rows),
        error_class=error_class,
        error_message=error_message(error_class, extraction, generated, gt),
        contaminated=source is not None,
        contamination_source=source,
        fallback_match=other.fallback_match,
        stale_state=other.stale_state,
        gt_error=gt_error,
        generated_row_count=len(gen_rows) if generated is not None and gen_rows is not None else None,
        result_summary=summarize_result(generated, raw_output),
        gt_summary=summarize_result(gt),
    )


def _turn_sql(turn: Mapping[str, Any], raw_output: object) -> tuple[str, str | None]:
    """The turn's ground-truth and fallback SQL, after checking the fields the scorer reads."""
    gt_sql = turn.get("gt_sql")
    if not isinstance(gt_sql, str) or not gt_sql.strip():
        raise TurnInputError(turn, "gt_sql", f"expected non-empty SQL text, got {gt_sql!r}")
    fallback_sql = turn.get("fallback_sql")
    if fallback_sql is not None and not isinstance(fallback_sql, str):
        raise TurnInputError(turn, "fallback_sql", f"expected SQL text or null, got {fallback_sql!r}")
    if raw_output is not None and not isinstance(raw_output, str):
        raise TurnInputError(turn, "raw_output", f"expected text or None, got {type(raw_output).__name__}")
    return gt_sql, fallback_sql


@dataclass(frozen=True)
class _OtherAnswers:
    """Which other answer a generated result equals (TurnScore's fields of the same names)."""

    fallback_match: bool
    stale_state: bool | None
    contamination_source: str | None


def _other_answers(
    turn: Mapping[str, Any],
    fallback_sql: str | None,
    generated: QueryResult | None,
    ex_strict: bool,
    cached: Callable[[str], QueryResult],
    provenance: Mapping[str, str] | Callable[[], Mapping[str, str]] | None,
) -> _OtherAnswers:
    """Compare a result that ran but was not correct with the fallback, the stale ground truth and
    the provenance SQL, in that order; none of them runs for a correct or failed result."""
    gen_rows = generated.rows if generated is not None else None

    def matches(sql: str) -> bool:
        other = cached(sql)
        return equals_other_answer(
            ex_strict, gen_rows, other.rows if other.ok and not other.truncated else None
        )

    failed_but_ran = not ex_strict and generated is not None and generated.ok
    fallback_match = bool(failed_but_ran and fallback_sql and matches(fallback_sql))
    stale_sql = turn.get("stale_gt_sql")
    stale_state = None if not stale_sql else bool(failed_but_ran and matches(stale_sql))
    contamination_source = None
    if failed_but_ran:
        others = provenance() if callable(provenance) else provenance
        contamination_source = next((s for s, sql in (others or {}).items() if matches(sql)), None)
    return _OtherAnswers(fallback_match, stale_state, contamination_source)
