"""Pull the SQL out of a model's text answer.

Models are told "Return SQL only. No markdown", and mostly comply; the rest wrap the query in a
``` fence, put a sentence before it, explain it afterwards, or answer in prose only. The scorer
needs the query (to execute it) and a record of whether prose came before or instead of it (the
taxonomy's `preamble` class). Rules, in order:

1. None / empty / whitespace: no SQL, no preamble (class `empty`).
2. A fenced block whose language is SQL-like (or none) and whose body holds a statement: the
   first such block is the query; any prose before the fence is a preamble.
3. Otherwise the first statement start in the text: SELECT, a WITH … AS ( common table
   expression, VALUES, or a write/DDL statement (kept so that the read-only sandbox rejects it
   rather than the extractor hiding it). A start counts at the beginning of a line or after a
   colon; anywhere else only when it is written in capitals and a FROM follows, so that prose
   such as "I would select the rows…" is not mistaken for SQL. Anything but SQL comments before
   it is a preamble.
4. No statement at all: no SQL, preamble (prose instead of SQL). This includes an answer whose
   first keyword is misspelt ("SELEC a FROM t"): it is not recognisable as SQL.

The statement ends at trailing prose (a sentence or markdown line after the query, or after its
semicolon); trailing semicolons are dropped. Several statements separated by semicolons are kept
as written: choosing one of them would silently repair the answer, and the sandbox rejects them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# Reason codes (Extraction.reason).
EMPTY = "empty"  # None / empty / whitespace only
PLAIN = "plain"  # the text is SQL (perhaps with trailing prose or semicolons trimmed)
FENCED = "fenced"  # SQL taken from a ``` block, nothing but whitespace before it
FENCED_AFTER_PROSE = "fenced_after_prose"  # ``` block preceded by prose
AFTER_PROSE = "after_prose"  # unfenced SQL preceded by prose
PROSE_ONLY = "prose_only"  # text without any SQL statement (refusal, question, explanation)

SQL_FENCE_LANGS = frozenset(
    {"", "sql", "sqlite", "sqlite3", "postgres", "postgresql", "mysql", "plsql", "tsql"}
)


@dataclass(frozen=True)
class Extraction:
    sql: str | None
    preamble: bool
    reason: str


_START = re.compile(
    r"""
      (?P<select>\bSELECT\b)
    | (?P<cte>\bWITH\s+(?:RECURSIVE\s+)?[\w"`\[\]]+\s*(?:\([^()]*\)\s*)?AS\s+(?:(?:NOT\s+)?MATERIALIZED\s+)?\()
    | (?P<other>
          \bVALUES\s*\(
        | \b(?:INSERT|REPLACE)\s+INTO\b
        | \bUPDATE\s+[\w"`\[\].]+\s+SET\b
        | \bDELETE\s+FROM\b
        | \bCREATE\s+(?:(?:TEMP|TEMPORARY|UNIQUE|VIRTUAL)\s+)?(?:TABLE|VIEW|INDEX|TRIGGER)\b
        | \bDROP\s+(?:TABLE|VIEW|INDEX|TRIGGER)\b
        | \bALTER\s+TABLE\b
        | \bPRAGMA\s+\w
        | \bATTACH\s+(?:DATABASE\s+)?'
        | \bEXPLAIN\s+(?:QUERY\s+PLAN\s+)?SELECT\b
      )
    """,
    re.IGNORECASE | re.VERBOSE,
)
_FROM = re.compile(r"\bFROM\b", re.IGNORECASE)
_LINE_PREFIX = re.compile(r"[ \t>*_]*$")  # what may precede a statement on its own line
_COMMENTS = re.compile(r"--[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)

# Words that begin a SQL line; a line starting with anything else after the query may be prose.
_SQL_WORDS_TEXT = """
SELECT FROM WHERE GROUP ORDER HAVING LIMIT OFFSET JOIN LEFT RIGHT FULL INNER OUTER CROSS NATURAL ON
USING AND OR NOT UNION INTERSECT EXCEPT ALL WITH AS CASE WHEN THEN ELSE END BY ASC DESC IN IS NULL
LIKE GLOB BETWEEN EXISTS DISTINCT VALUES WINDOW OVER PARTITION SUM COUNT AVG MIN MAX ROUND CAST
COALESCE IFNULL STRFTIME SUBSTR TOTAL LOWER UPPER ABS LENGTH INSERT UPDATE DELETE SET INTO CREATE
DROP ALTER PRAGMA REPLACE RECURSIVE FILTER COLLATE ESCAPE NULLS FIRST LAST ROWS RANGE
"""
_SQL_WORDS = frozenset(_SQL_WORDS_TEXT.split())
_PROSE_LINE = re.compile(r"[A-Z][a-z']+\b(?:\s+\S+){2,}")
# Markdown after the query: bold, heading, fence, or a bullet / numbered item that reads as words
# (not "* Quantity" or "- Discount", which can continue an arithmetic expression).
_MARKDOWN_LINE = re.compile(r"(?:\*\*|#{1,6}\s|```|(?:[-*+]|\d+\.)\s+[A-Z][a-z]+(?:\s+[a-z]+){2})")
_SENTENCE_END = re.compile(r"\.\s+[A-Z][a-z]")


# A process scores the same answers under every condition of a model (and a replay scores them
# again): the scan's result is immutable, so it is computed once.
@functools.lru_cache(maxsize=4096)
def extract_sql(text: str | None) -> Extraction:
    """Return the SQL of a model answer and whether prose came before (or instead of) it."""
    if text is None or not text.strip():
        return Extraction(None, False, EMPTY)
    fenced = _from_fences(text)
    if fenced is not None:
        return fenced
    found = _find_start(text)
    if found is None:
        return Extraction(None, True, PROSE_ONLY)
    start, inline_end = found
    sql = _statement(text[start:inline_end])
    if not sql:
        return Extraction(None, True, PROSE_ONLY)
    preamble = _is_prose(text[:start])
    return Extraction(sql, preamble, AFTER_PROSE if preamble else PLAIN)


def _from_fences(text: str) -> Extraction | None:
    marks = [m.start() for m in re.finditer(r"```", text)]
    if not marks:
        return None
    # Pair fences in order; an unclosed last fence (a truncated answer) runs to the end.
    for i in range(0, len(marks), 2):
        open_at = marks[i]
        close_at = marks[i + 1] if i + 1 < len(marks) else len(text)
        lang, body = _split_lang(text[open_at + 3 : close_at])
        if lang.lower() not in SQL_FENCE_LANGS:
            continue
        found = _find_start(body)
        if found is None:
            continue
        start, inline_end = found
        sql = _statement(body[start:inline_end])
        if not sql:
            continue
        preamble = _is_prose(text[:open_at]) or _is_prose(body[:start])
        return Extraction(sql, preamble, FENCED_AFTER_PROSE if preamble else FENCED)
    return None


def _split_lang(block: str) -> tuple[str, str]:
    """Split "sql\\nSELECT …" into ("sql", "SELECT …"); "SELECT 1" has no language tag."""
    m = re.match(r"([A-Za-z0-9_+-]+)(?=\s|$)", block)
    if m and not _START.match(block):
        return m.group(1), block[m.end() :]
    return "", block


def _find_start(text: str) -> tuple[int, int] | None:
    """Position of the first statement start, and where an inline `code span` around it ends."""
    for m in _START.finditer(text):
        start = m.start()
        if _in_comment(text, start):
            continue
        before = text[text.rfind("\n", 0, start) + 1 : start]
        at_line_start = bool(_LINE_PREFIX.fullmatch(before))
        after_colon = before.rstrip().endswith(":") or before.rstrip().endswith(":`")
        word = m.group(0).split()[0].rstrip("(")
        anywhere = word.isupper() and _FROM.search(text, m.end())
        if not (at_line_start or after_colon or m.group("cte") or anywhere):
            continue
        end = len(text)
        if start > 0 and text[start - 1] == "`" and not text[:start].endswith("```"):
            close = text.find("`", start)
            end = close if close >= 0 else end
        return start, end
    return None


def _in_comment(text: str, pos: int) -> bool:
    return any(m.start() <= pos < m.end() for m in _COMMENTS.finditer(text, 0, pos + 1))


def _is_prose(text: str) -> bool:
    """True when text holds more than whitespace, SQL comments and markdown punctuation."""
    rest = _COMMENTS.sub("", text)
    return bool(re.sub(r"[\s`*_>#:]+", "", rest))


def _statement(text: str) -> str:
    """The statement(s) at the start of text, without trailing prose and trailing semicolons."""
    semicolons, line_starts, sentence_ends = _scan(text)
    keep = len(text)
    # Trailing prose on its own line (after the first line of the statement).
    for pos in line_starts:
        if _looks_like_prose(text, pos):
            keep = pos
            break
    # "… FROM t. This returns …": a sentence after the query on the same line.
    for pos in sentence_ends:
        if pos < keep:
            keep = pos + 1
            break
    # After a semicolon, continue only if another statement follows; otherwise it is prose.
    for pos in semicolons:
        if pos >= keep:
            break
        tail = _COMMENTS.sub("", text[pos + 1 : keep]).strip()
        if tail and not _START.match(tail):
            keep = pos
            break
    sql = text[:keep].strip()
    while sql.endswith(";") or (sql.endswith(".") and len(sql) > 1 and not sql[-2].isdigit()):
        sql = sql[:-1].rstrip()
    return sql


def _looks_like_prose(text: str, pos: int) -> bool:
    eol = text.find("\n", pos)
    line = text[pos : eol if eol >= 0 else len(text)].strip()
    if not line:
        return False
    if _MARKDOWN_LINE.match(line):
        return True
    prev_end = text.rfind("\n", 0, max(pos - 1, 0))
    prev = text[prev_end + 1 : max(pos - 1, 0)].strip()
    first = re.match(r"[A-Za-z_']+", line)
    if not first or first.group(0).upper() in _SQL_WORDS:
        return False
    return bool(_PROSE_LINE.match(line) and (line[-1] in ".:!?" or not prev or prev.endswith(";")))


def _scan(text: str) -> tuple[list[int], list[int], list[int]]:
    """One pass over text outside quotes and comments: semicolons, line starts, sentence ends."""
    semicolons: list[int] = []
    line_starts: list[int] = []
    sentence_ends: list[int] = []
    i, n = 0, len(text)
    closers = {"'": "'", '"': '"', "`": "`", "[": "]"}
    while i < n:
        c = text[i]
        if c in closers:
            j = text.find(closers[c], i + 1)
            while c in "'\"`" and j >= 0 and text.startswith(closers[c] * 2, j):
                j = text.find(closers[c], j + 2)  # doubled quote = escaped quote
            i = n if j < 0 else j + 1
            continue
        if text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == ";":
            semicolons.append(i)
        elif c == "\n":
            line_starts.append(i + 1)
        elif c == "." and _SENTENCE_END.match(text, i) and i > 0 and not text[i - 1].isdigit():
            sentence_ends.append(i)
        i += 1
    return semicolons, line_starts, sentence_ends
