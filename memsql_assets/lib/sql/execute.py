"""Run one untrusted SQL statement on a sandboxed source database, within time, row and size caps.

The connection is the sandbox's first half (sandbox.open_readonly: read-only file,
query_only, a default-deny authorizer, value-length limits). This module is the second half,
applied per query:

- exactly one statement: several statements are refused before anything executes, with
  sqlite3's own wording ("one statement at a time"), which the taxonomy counts as syntax_error.
  The split respects string literals, quoted identifiers, comments and trigger bodies, so
  `SELECT ';'` is one statement and a trailing `;` or comment is harmless;
- statements that begin with a write / DDL / transaction keyword are refused up front (the
  authorizer would refuse them too; this also covers `DROP TABLE IF EXISTS x`, which SQLite
  treats as a no-op that never reaches the authorizer);
- a wall-clock time limit (sql/watchdog.py): a watchdog thread interrupts the statement inside
  the engine at its deadline, checked on every loop jump, so no row-by-row work outlives it by more
  than one row; splitting the text counts against the same limit, and text longer than the
  connection's SQL length limit is refused before it is split;
- a memory bound: the connection keeps temporary tables and sorts in memory, and SQLite's heap is
  capped process-wide (sandbox.MAX_SQLITE_HEAP_BYTES), so a query that would grow past
  it fails as "memory limit: ..." instead of exhausting the machine or spilling to disk;
- a row cap (extra rows are dropped and `truncated` is set) and a result-size cap: the bytes of
  the fetched values are counted row by row, so a huge result fails as "result too large"
  instead of exhausting memory. The per-value length limit of the connection is tightened to
  the same cap for the call, so a single huge string or BLOB fails the same way.

Every failure is a QueryResult with `error` set, worded so that evaluation/taxonomy.py classifies
it: "one statement at a time" / SQLite's parse errors as syntax_error; "timeout: …", "memory
limit: …", "not authorized: …", "result too large: …", "statement too long: …" and all other
engine errors as runtime_error.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from memsql_assets.lib.sql.sandbox import MAX_SQLITE_HEAP_BYTES
from memsql_assets.lib.sql.watchdog import deadline

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_ROW_CAP = 100_000
DEFAULT_MAX_RESULT_BYTES = 16 << 20

# Error prefixes that depend on the machine's load and on the other queries of the process (the heap
# cap is process-wide), not on the query alone: such a result is never reused.
TIMEOUT_ERROR = "timeout:"
MEMORY_ERROR = "memory limit:"
LOAD_DEPENDENT_ERRORS = (TIMEOUT_ERROR, MEMORY_ERROR)

# sqlite3's own message for several statements; taxonomy.is_syntax_error matches its tail.
MULTI_STATEMENT_ERROR = "ProgrammingError: You can only execute one statement at a time"

# First keywords of statements that change something or manage transactions. Everything else is
# left to SQLite, so that a misspelt query still fails as a syntax error.
REFUSED_KEYWORDS = frozenset(
    {
        "INSERT",
        "REPLACE",
        "UPDATE",
        "DELETE",
        "CREATE",
        "DROP",
        "ALTER",
        "ATTACH",
        "DETACH",
        "VACUUM",
        "REINDEX",
        "ANALYZE",
        "BEGIN",
        "COMMIT",
        "END",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
    }
)


@dataclass(frozen=True)
class QueryResult:
    rows: list[tuple[Any, ...]] | None
    columns: list[str]
    error: str | None = None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


# --- statement splitting ---------------------------------------------------------------------

# Every repetition is of a single character class: the regex engine then keeps no state per
# repeated character, so scanning is linear in time and memory. A doubled quote inside a literal
# ('it''s') scans as two adjacent literals, which splits the same way. Text outside literals and
# comments is one token per run, so long words or whitespace cost one Python step.
_TOKEN = re.compile(
    r"""
      (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<string>'[^']*(?:'|\Z))
    | (?P<ident>"[^"]*(?:"|\Z)|`[^`]*(?:`|\Z)|\[[^\]]*(?:\]|\Z))
    | (?P<semi>;)
    | (?P<text>[^;'"`\[/-]+|[/-])
    """,
    re.VERBOSE | re.DOTALL,
)
_WORD = re.compile(r"[^\W\d]\w*")


def _ends_with_end(text: str) -> bool:
    """Whether the last word of `text` is END (what closes a trigger body)."""
    text = text.rstrip()
    return text[-3:].upper() == "END" and not (len(text) > 3 and (text[-4].isalnum() or text[-4] == "_"))


def split_statements(sql: str) -> list[str]:
    """The statements of `sql`, as written (comments kept), leaving out empty ones.

    A `;` ends a statement only outside literals, quoted identifiers and comments; inside a
    CREATE TRIGGER body it ends the statement only after END (as sqlite3_complete decides).
    Unterminated literals and comments run to the end of the text, for SQLite to reject.
    """
    statements: list[str] = []
    start = 0
    words: list[str] = []  # the first words of the current statement
    significant = False
    in_trigger = False
    after_end = False  # the previous significant token is the word END
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup
        if kind == "comment":
            continue
        if kind == "semi":
            if in_trigger and not after_end:
                continue
            if significant:
                statements.append(sql[start : m.end()])
            start, words, significant, in_trigger, after_end = m.end(), [], False, False, False
            continue
        text = m.group()
        if kind == "text":
            if text.isspace():
                continue
            if len(words) < 3:
                words += [w.group().upper() for w in itertools.islice(_WORD.finditer(text), 3 - len(words))]
                in_trigger = words[:2] == ["CREATE", "TRIGGER"] or (
                    len(words) == 3
                    and words[0] == "CREATE"
                    and words[1] in ("TEMP", "TEMPORARY")
                    and words[2] == "TRIGGER"
                )
            after_end = _ends_with_end(text)
        else:
            after_end = False
        significant = True
    if significant:
        statements.append(sql[start:])
    return statements


def first_keyword(statement: str) -> str | None:
    """The first word of a statement, upper-cased (None when it starts otherwise)."""
    for m in _TOKEN.finditer(statement):
        if m.lastgroup == "comment" or m.group().isspace():
            continue
        word = _WORD.match(m.group().lstrip()) if m.lastgroup == "text" else None
        return word.group().upper() if word else None
    return None


# --- execution -------------------------------------------------------------------------------


def _failed(error: str) -> QueryResult:
    return QueryResult(rows=None, columns=[], error=error)


def _value_bytes(value: object) -> int:
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes | bytearray | memoryview):
        return len(value)
    return 8  # int, float, None


def _describe_error(exc: BaseException, conn: sqlite3.Connection, timeout_s: float, value_cap: int) -> str:
    text = str(exc)
    kind = type(exc).__name__
    if isinstance(exc, sqlite3.OperationalError) and "interrupted" in text:
        return f"{TIMEOUT_ERROR} query exceeded {timeout_s:g} s"
    if isinstance(exc, MemoryError):  # SQLITE_NOMEM: the heap cap was reached
        return (
            f"{MEMORY_ERROR} the query needed more than the sandbox's {MAX_SQLITE_HEAP_BYTES >> 20} MiB "
            f"of SQLite memory ({kind})"
        )
    denial = getattr(getattr(conn, "sandbox", None), "last_denial", None)
    if denial is not None or text == "not authorized":
        what = denial or "a write or privileged operation"
        return f"not authorized: the sandbox connection is readonly and refuses {what} ({kind}: {text})"
    if "string or blob too big" in text:
        return f"result too large: a string or BLOB exceeds the sandbox limit of {value_cap} bytes ({kind}: {text})"
    return f"{kind}: {text}"


def _text_bytes(sql: str) -> int:
    return len(sql) if sql.isascii() else len(sql.encode("utf-8", "surrogatepass"))


def run_query(
    conn: sqlite3.Connection,
    sql: str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
    *,
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
) -> QueryResult:
    """Execute one statement; never raises for anything the SQL itself does (see module doc)."""
    started = time.monotonic()
    sql_cap = conn.getlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH)
    if len(sql) > sql_cap or _text_bytes(sql) > sql_cap:  # before splitting: its cost grows with the text
        return _failed(
            f"statement too long: {_text_bytes(sql)} bytes of SQL text, the sandbox runs at most {sql_cap}"
        )
    statements = split_statements(sql)
    if len(statements) > 1:
        return _failed(
            f"{MULTI_STATEMENT_ERROR} (found {len(statements)} statements; the sandbox runs exactly one)"
        )
    keyword = first_keyword(statements[0]) if statements else None
    if keyword in REFUSED_KEYWORDS:
        return _failed(
            f"not authorized: the sandbox connection is readonly and runs queries only; "
            f"it refuses {keyword} statements"
        )

    state = getattr(conn, "sandbox", None)
    if state is not None:
        state.last_denial = None
    value_cap = min(conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH), max(1, max_result_bytes))
    old_length_limit = conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, value_cap)
    cur: sqlite3.Cursor | None = None
    try:
        with deadline(conn, timeout_s - (time.monotonic() - started)):
            try:
                cur = conn.execute(statements[0] if statements else sql)
                columns = [d[0] for d in cur.description or ()]
                rows: list[tuple[Any, ...]] = []
                size = 0
                for row in cur:
                    if len(rows) == row_cap:
                        return QueryResult(rows=rows, columns=columns, truncated=True)
                    size += sum(_value_bytes(v) for v in row)
                    if size > max_result_bytes:
                        return _failed(
                            f"result too large: the fetched values exceed {max_result_bytes} bytes "
                            f"after {len(rows) + 1} rows"
                        )
                    rows.append(row)
                return QueryResult(rows=rows, columns=columns)
            finally:
                if cur is not None:
                    cur.close()  # resets the statement: no read lock or half-run query left behind
    except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError, MemoryError) as exc:
        return _failed(_describe_error(exc, conn, timeout_s, value_cap))
    finally:
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, old_length_limit)
