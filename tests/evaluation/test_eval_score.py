"""score_turn on a tiny read-only SQLite database: every taxonomy class, cache, GT failures,
contamination, summaries."""

from __future__ import annotations

import sqlite3
from dataclasses import FrozenInstanceError

import pytest

from memsql_assets.lib.evaluation.contamination import equals_other_answer
from memsql_assets.lib.evaluation.extract import extract_sql
from memsql_assets.lib.evaluation.score import TurnInputError, TurnScore, score_turn
from memsql_assets.lib.evaluation.taxonomy import ERROR_CLASSES, ErrorClass, classify, is_syntax_error
from memsql_assets.lib.sql.execute import QueryResult
from memsql_assets.lib.sql.result_cache import NotCached
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.summary import SUMMARY_MAX_CHARS, summarize_result

GT = "SELECT year, ROUND(SUM(amount), 2) AS total FROM sales WHERE region = 'North' GROUP BY year"
FALLBACK = "SELECT year, ROUND(SUM(amount), 2) AS total FROM sales WHERE region = 'South' GROUP BY year"


@pytest.fixture
def conn(tmp_path):
    path = tmp_path / "tiny.sqlite"
    w = sqlite3.connect(path)
    w.execute("CREATE TABLE sales (region TEXT, year INTEGER, amount REAL, units INTEGER)")
    w.executemany(
        "INSERT INTO sales VALUES (?, ?, ?, ?)",
        [
            ("North", 2022, 10.0, 3),
            ("North", 2023, 12.5, 4),
            ("South", 2022, 7.0, 2),
            ("South", 2023, 7.0, 2),
        ],
    )
    w.commit()
    w.close()
    c = open_readonly(path)
    yield c
    c.close()


def turn(gt_sql: str = GT, fallback_sql: str | None = FALLBACK, **extra) -> dict:
    return {"session_id": "T-2-001", "turn_index": 2, "gt_sql": gt_sql, "fallback_sql": fallback_sql, **extra}


def cls(conn, raw, t=None, **kw) -> TurnScore:
    return score_turn(t or turn(), raw, conn, **kw)


# --- the six classes, each at least twice -------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        GT,
        GT + ";",
        f"```sql\n{GT} ORDER BY year DESC;\n```",  # row order does not matter
        "SELECT year, ROUND(SUM(amount), 2) AS t2 FROM sales WHERE region = 'North' GROUP BY 1",  # names do not
        f"Here is the query: {GT}",  # a correct query after prose is correct (taxonomy rule 1)
    ],
)
def test_correct(conn, raw):
    s = cls(conn, raw)
    assert s.error_class == "correct" and s.ex_strict and s.ex_bag and s.ex_set
    assert s.error_message is None and not s.contaminated and not s.fallback_match and s.gt_error is None
    assert s.generated_row_count == 2


def test_wrong_result_rows(conn):
    s = cls(
        conn,
        "SELECT year, ROUND(SUM(amount), 2) FROM sales WHERE region = 'North' AND year = 2023 GROUP BY year",
    )
    assert s.error_class == "wrong_result" and not (s.ex_strict or s.ex_bag or s.ex_set)
    assert "1 rows x 2 cols vs 2 rows x 2 cols" in s.error_message


def test_wrong_result_strict_only_int_vs_float(conn):
    t = turn("SELECT SUM(units) FROM sales WHERE region = 'North'", None)
    s = cls(conn, "SELECT CAST(SUM(units) AS REAL) FROM sales WHERE region = 'North'", t)
    assert s.error_class == "wrong_result" and not s.ex_strict and s.ex_bag and s.ex_set


def test_wrong_result_duplicates_set_only(conn):
    t = turn("SELECT DISTINCT region FROM sales", None)
    s = cls(conn, "SELECT region FROM sales", t)
    assert s.error_class == "wrong_result" and not s.ex_strict and not s.ex_bag and s.ex_set


def test_wrong_result_column_order(conn):
    s = cls(conn, "SELECT ROUND(SUM(amount), 2), year FROM sales WHERE region = 'North' GROUP BY year")
    assert s.error_class == "wrong_result" and not (s.ex_strict or s.ex_bag or s.ex_set)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("I need to know which region you mean before I can write the query.", "prose instead of SQL"),
        (
            "Here is the query: SELECT year FROM sales WHERE",
            "prose before SQL; OperationalError: incomplete input",
        ),
        ("Sure! SELECT year FROM sales", "prose before SQL; result differs"),
        (
            "Here you go:\n```sql\nSELECT * FROM nowhere\n```",
            "prose before SQL; OperationalError: no such table",
        ),
    ],
)
def test_preamble(conn, raw, message):
    s = cls(conn, raw)
    assert s.error_class == "preamble" and not s.ex_strict
    assert s.error_message.startswith(message)


@pytest.mark.parametrize(
    "raw",
    [
        "SELECT year FROM FROM sales",
        "SELECT year FROM sales WHERE year = = 2022",
        "SELECT year FROM sales WHERE (",
        "SELECT 'abc FROM sales",
        "SELECT 1; SELECT 2;",  # several statements: the sandbox refuses, counted as malformed SQL
    ],
)
def test_syntax_error(conn, raw):
    s = cls(conn, raw)
    assert s.error_class == "syntax_error", s
    assert s.extracted_sql and s.error_message and s.generated_row_count is None
    assert not s.contaminated


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("SELECT * FROM nowhere", "no such table"),
        ("SELECT nope FROM sales", "no such column"),
        ("DELETE FROM sales", "readonly"),
        ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c", "timeout"),
    ],
)
def test_runtime_error(conn, raw, needle):
    s = cls(conn, raw, timeout_s=0.3)
    assert s.error_class == "runtime_error"
    assert needle.replace(" ", "") in s.error_message.replace(" ", "")


@pytest.mark.parametrize("raw", [None, "", "   \n  "])
def test_empty(conn, raw):
    s = cls(conn, raw)
    assert s.error_class == "empty" and s.extracted_sql is None and s.generated_row_count is None
    assert s.error_message == "model returned no text" and s.result_summary == "no output"


def test_classes_are_the_six_of_the_spec_model_error_and_memory_error():
    # The names themselves are lib/vocabulary.py's: SPEC §3's six, model_error (a failed model call) and
    # memory_error (the condition's memory raised during the turn).
    assert len(set(ERROR_CLASSES)) == 8 and ERROR_CLASSES[-2:] == (ErrorClass.MODEL_ERROR, ErrorClass.MEMORY_ERROR)
    assert ErrorClass.CORRECT == "correct"


def test_classify_precedence_without_a_database():
    ok = QueryResult(rows=[(1,)], columns=["x"])
    bad = QueryResult(rows=None, columns=[], error='OperationalError: near "FROM": syntax error')
    assert classify(extract_sql("Here: SELECT 1"), ok, True) == "correct"
    assert classify(extract_sql("Here: SELECT 1"), ok, False) == "preamble"
    assert classify(extract_sql("Here: SELECT FROM"), bad, False) == "preamble"
    assert classify(extract_sql("SELECT FROM"), bad, False) == "syntax_error"
    assert classify(extract_sql(""), None, False) == "empty"
    assert classify(extract_sql("no idea"), None, False) == "preamble"
    with pytest.raises(ValueError):
        classify(extract_sql("SELECT 1"), None, False)
    assert is_syntax_error("ProgrammingError: You can only execute one statement at a time.")
    assert not is_syntax_error("timeout: query exceeded 10 s")


# --- contamination ------------------------------------------------------------------------------


def test_fallback_match_when_result_equals_fallback(conn):
    s = cls(conn, FALLBACK)
    assert s.error_class == "wrong_result" and s.fallback_match
    assert not s.contaminated and s.contamination_source is None  # no session supplied a key


def test_no_fallback_match_when_wrong_differently(conn):
    s = cls(conn, "SELECT year, 0 FROM sales GROUP BY year")
    assert s.error_class == "wrong_result" and not s.fallback_match and not s.contaminated


def test_no_fallback_match_without_fallback(conn):
    s = cls(conn, FALLBACK, turn(fallback_sql=None))
    assert s.error_class == "wrong_result" and not s.fallback_match


def test_contaminated_when_result_equals_a_supplying_sessions_ground_truth(conn):
    east = "SELECT year, ROUND(SUM(amount), 2) AS total FROM sales WHERE region = 'East' GROUP BY year"
    provenance = {"T-2-007": east, "T-2-009": FALLBACK}
    s = cls(conn, FALLBACK, turn(fallback_sql=None), provenance=provenance)
    assert s.error_class == "wrong_result" and s.contaminated and s.contamination_source == "T-2-009"
    assert not s.fallback_match
    # The same answer is not contaminated when no supplying session's ground truth gives it ...
    assert not cls(conn, FALLBACK, turn(fallback_sql=None), provenance={"T-2-007": east}).contaminated
    # ... nor when it is correct.
    assert not cls(conn, GT, provenance={"T-2-001": GT}).contaminated


def test_provenance_is_computed_only_for_a_wrong_answer_that_ran(conn):
    """The runner passes a function (its first call reads the benchmark's sessions file)."""
    asked = []

    def provenance():
        asked.append(1)
        return {"T-2-009": FALLBACK}

    assert not cls(conn, GT, provenance=provenance).contaminated  # correct: never asked
    assert not cls(conn, "SELECT nope FROM nowhere", provenance=provenance).contaminated  # did not run
    assert asked == []
    s = cls(conn, FALLBACK, turn(fallback_sql=None), provenance=provenance)
    assert s.contaminated and s.contamination_source == "T-2-009" and asked == [1]


def test_scoring_from_cached_results_only_equals_scoring_with_execution(conn):
    cache: dict = {}
    with pytest.raises(NotCached):  # the ground truth has not run yet
        score_turn(turn(), GT, conn, cache, execute=False)
    for raw in (GT, FALLBACK, "SELECT nope FROM nowhere", "no sql here"):
        full = score_turn(turn(), raw, conn, cache)
        assert score_turn(turn(), raw, conn, cache, execute=False) == full
    with pytest.raises(NotCached):  # new SQL of the model: it must run
        score_turn(turn(), "SELECT 1", conn, cache, execute=False)


def test_equals_other_answer_rules():
    assert equals_other_answer(False, [(1, "a")], [("a", 1)]) is False  # column order counts
    assert equals_other_answer(False, [(1, "a")], [(1, "a")]) is True
    assert equals_other_answer(True, [(1, "a")], [(1, "a")]) is False  # a correct turn is never contaminated
    assert equals_other_answer(False, None, [(1,)]) is False
    assert equals_other_answer(False, [(1,)], None) is False


# --- caching, ground-truth failures, input errors, summaries ------------------------------------


SAME_AS_GT = GT.replace("SELECT year", "SELECT  year")  # other text, same rows


def test_gt_cache_is_filled_and_read(conn):
    cache: dict[str, QueryResult] = {}
    first = cls(conn, GT, gt_cache=cache)
    assert first.ex_strict and set(cache) == {GT}  # correct: the fallback never ran
    # A poisoned entry proves the next call reads the cache instead of re-running the GT.
    cache[GT] = QueryResult(rows=[(1999, 0.0)], columns=["year", "total"])
    assert not cls(conn, SAME_AS_GT, gt_cache=cache).ex_strict


def test_generated_sql_is_answered_from_the_cache(conn):
    cache: dict[str, QueryResult] = {}
    cls(conn, SAME_AS_GT, gt_cache=cache)
    assert set(cache) == {GT, SAME_AS_GT}  # generated SQL of other text runs once, under its own text
    poisoned = QueryResult(rows=[(1999, 0.0)], columns=["year", "total"])
    cache[SAME_AS_GT] = poisoned
    assert not cls(conn, SAME_AS_GT, gt_cache=cache).ex_strict  # written again: the cached rows
    cache[GT] = poisoned
    # The GT text itself (modulo blanks and a trailing semicolon) reads the GT's cached rows...
    assert cls(conn, f"  {GT} ;\n", gt_cache=cache).ex_strict
    # ...and so does the fallback's text, whose cached rows are then compared with the GT's.
    cache[FALLBACK] = poisoned
    assert cls(conn, FALLBACK, gt_cache=cache).ex_strict


def test_nondeterministic_sql_is_never_cached(conn):
    cache: dict[str, QueryResult] = {}
    gt = "SELECT year, random() AS r FROM sales WHERE region = 'North'"
    cls(conn, gt, turn(gt, None), gt_cache=cache)
    assert cache == {}


def test_fallback_runs_only_for_failed_turns_and_is_cached(conn):
    cache: dict[str, QueryResult] = {}
    cls(conn, "SELECT 1", gt_cache=cache)
    assert set(cache) == {GT, FALLBACK, "SELECT 1"}
    cache2: dict[str, QueryResult] = {}
    cls(conn, "SELEC 1", gt_cache=cache2)  # did not run: contamination impossible, fallback skipped
    assert set(cache2) == {GT}


def test_gt_failure_is_recorded(conn):
    s = cls(conn, "SELECT 1", turn("SELECT * FROM missing_table", None))
    assert s.gt_error and "no such table" in s.gt_error
    assert not s.ex_strict and s.error_class == "wrong_result" and "ground truth failed" in s.error_message
    s2 = cls(conn, "SELECT * FROM missing_table", turn("SELECT * FROM missing_table", None))
    assert s2.gt_error and not s2.ex_strict and s2.error_class == "runtime_error"


def test_gt_over_row_cap_is_recorded(conn):
    t = turn("SELECT * FROM sales", None)
    s = cls(conn, "SELECT * FROM sales", t, row_cap=3)
    assert not s.ex_strict and "row cap" in s.gt_error


def test_generated_over_row_cap_is_never_correct(conn):
    t = turn("SELECT region FROM sales LIMIT 3", None)
    s = cls(conn, "SELECT region FROM sales", t, row_cap=3)
    assert s.gt_error is None and not s.ex_strict and s.error_class == "wrong_result"
    assert s.result_summary.startswith("3+ rows")


@pytest.mark.parametrize(("field", "value"), [("gt_sql", None), ("gt_sql", "  "), ("fallback_sql", 3)])
def test_bad_turn_names_turn_and_field(conn, field, value):
    t = turn()
    t[field] = value
    with pytest.raises(TurnInputError, match=rf"T-2-001#2: field '{field}'"):
        score_turn(t, GT, conn)


def test_score_is_frozen_and_serialisable(conn):
    s = cls(conn, GT)
    with pytest.raises(FrozenInstanceError):
        s.ex_strict = False  # type: ignore[misc]
    assert s.as_dict()["error_class"] == "correct"


def test_result_summary(conn):
    s = cls(conn, GT)
    assert s.result_summary == "2 rows [year, total]: (2022, 10.0); (2023, 12.5)"
    long = QueryResult(rows=[(i, "x" * 80) for i in range(100)], columns=["i", "s"])
    text = summarize_result(long)
    assert len(text) <= SUMMARY_MAX_CHARS and text.startswith("100 rows [i, s]: (0, xxx")
    assert summarize_result(QueryResult(rows=None, columns=[], error="boom")) == "error: boom"
    assert summarize_result(None, "I do not know") == "no SQL"
