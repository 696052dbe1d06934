"""SQL extraction from model text: plain, fenced, preamble, prose only, empty, trimming."""

from __future__ import annotations

import pytest

from memsql_assets.lib.evaluation.extract import (
    AFTER_PROSE,
    EMPTY,
    FENCED,
    FENCED_AFTER_PROSE,
    PLAIN,
    PROSE_ONLY,
    extract_sql,
)


@pytest.mark.parametrize("text", [None, "", "   ", "\n\t\n"])
def test_empty(text):
    e = extract_sql(text)
    assert (e.sql, e.preamble, e.reason) == (None, False, EMPTY)


@pytest.mark.parametrize(
    ("text", "sql"),
    [
        ("SELECT 1", "SELECT 1"),
        ("SELECT a FROM t;", "SELECT a FROM t"),
        ("SELECT a FROM t;;  \n", "SELECT a FROM t"),
        ("select a from t", "select a from t"),
        ("  SELECT a\n  FROM t\n  WHERE b = 1", "SELECT a\n  FROM t\n  WHERE b = 1"),
        ("-- total\nSELECT SUM(x) FROM t", "SELECT SUM(x) FROM t"),
        ("WITH x AS (SELECT 1 AS a) SELECT a FROM x;", "WITH x AS (SELECT 1 AS a) SELECT a FROM x"),
        (
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c LIMIT 3) SELECT n FROM c",
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c LIMIT 3) SELECT n FROM c",
        ),
        (
            "SELECT SUM(UnitPrice * Quantity) FROM [Order Details]",
            "SELECT SUM(UnitPrice * Quantity) FROM [Order Details]",
        ),
        ("SELECT a FROM t WHERE name = 'It. Is; here'", "SELECT a FROM t WHERE name = 'It. Is; here'"),
        ("SELECT a FROM t WHERE n = 'O''Brien';", "SELECT a FROM t WHERE n = 'O''Brien'"),
        ("SELECT 1.", "SELECT 1."),
    ],
)
def test_plain_sql(text, sql):
    e = extract_sql(text)
    assert (e.sql, e.preamble, e.reason) == (sql, False, PLAIN)


@pytest.mark.parametrize(
    "text",
    [
        "```sql\nSELECT a FROM t;\n```",
        "```SQL\nSELECT a FROM t\n```\n",
        "```\nSELECT a FROM t\n```",
        "```sql SELECT a FROM t```",
        "```sqlite\nSELECT a FROM t;\n```\n\nThis returns every a.",
        "```sql\nSELECT a FROM t",  # truncated answer: unclosed fence
    ],
)
def test_fenced(text):
    e = extract_sql(text)
    assert (e.sql, e.preamble, e.reason) == ("SELECT a FROM t", False, FENCED)


def test_first_sql_block_wins():
    e = extract_sql("```sql\nSELECT 1\n```\nor\n```sql\nSELECT 2\n```")
    assert e.sql == "SELECT 1" and not e.preamble
    # A non-SQL block is skipped, and counts as content before the SQL.
    e = extract_sql("```python\nprint(1)\n```\n```sql\nSELECT a FROM t\n```")
    assert (e.sql, e.preamble, e.reason) == ("SELECT a FROM t", True, FENCED_AFTER_PROSE)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Here is the query: SELECT a FROM t", AFTER_PROSE),
        ("Here is the query:\nSELECT a FROM t;", AFTER_PROSE),
        ("Sure! SELECT a FROM t", AFTER_PROSE),
        ("Query: `SELECT a FROM t`", AFTER_PROSE),
        ("You can use SELECT a FROM t. This returns all a values.", AFTER_PROSE),
        ("Here is the SQL:\n\n```sql\nSELECT a FROM t\n```", FENCED_AFTER_PROSE),
        ("```sql\n-- fine\nSELECT a FROM t\n```", FENCED),
    ],
)
def test_preamble(text, reason):
    e = extract_sql(text)
    assert e.sql == "SELECT a FROM t"
    assert e.reason == reason
    assert e.preamble is (reason != FENCED)


@pytest.mark.parametrize(
    "text",
    [
        "I cannot answer this without knowing which company you mean.",
        "I would select the rows from the orders table, then sum them.",
        "Which year do you mean?",
        "```\nno sql here\n```",
    ],
)
def test_prose_only(text):
    e = extract_sql(text)
    assert (e.sql, e.preamble, e.reason) == (None, True, PROSE_ONLY)


@pytest.mark.parametrize(
    "text",
    [
        "SELECT a FROM t;\nThis query returns every a.",
        "SELECT a FROM t\n\nThis query returns every a.",
        "SELECT a\nFROM t\nThis query returns every a.",
        "SELECT a FROM t;\n\n**Explanation:** the table t holds a.",
        "SELECT a FROM t; -- done\n\nNote: a is unique.",
        "SELECT a FROM t;  That is all.",
    ],
)
def test_trailing_prose_trimmed(text):
    e = extract_sql(text)
    assert e.sql is not None and e.sql.replace("\n", " ").startswith("SELECT a")
    assert e.sql.replace("\n", " ") == "SELECT a FROM t" and not e.preamble


def test_sql_continuation_lines_are_not_prose():
    text = "SELECT SUM(UnitPrice\n  * Quantity\n  - Discount) AS total\nFROM t\nHAVING total\n  > 5"
    assert extract_sql(text).sql == text
    e = extract_sql(text + "\n\n- This sums the sales of every order.")
    assert e.sql == text and not e.preamble


def test_multiple_statements_kept_as_written():
    assert extract_sql("SELECT 1; SELECT 2;").sql == "SELECT 1; SELECT 2"
    assert extract_sql("SELECT a FROM t;\nDROP TABLE t;").sql == "SELECT a FROM t;\nDROP TABLE t"


def test_write_statements_are_extracted_for_the_sandbox_to_refuse():
    assert extract_sql("DELETE FROM t").sql == "DELETE FROM t"
    assert extract_sql("```sql\nUPDATE t SET a = 1\n```").sql == "UPDATE t SET a = 1"
