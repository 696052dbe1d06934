"""Run one untrusted SQL statement on a sandboxed source database, within time, row and size caps.

The connection is the sandbox's first half (sources/sqlite_db.open_readonly: read-only file,
query_only, a default-deny authorizer, value-length limits). This module is the second half,
applied per query:

- exactly one statement: several statements are refused before anything executes, with
  sqlite3's own wording ("one statement at a time"), which the taxonomy counts as syntax_error.
  The split respects string literals, quoted identifiers, comments and trigger bodies, so
  `SELECT ';'` is one statement and a trailing `;` or comment is harmless;
- statements that begin with a write / DDL / transaction keyword are refused up front (the
  authorizer would refuse them too; this also covers `DROP TABLE IF EXISTS x`, which SQLite
  treats as a no-op that never reaches the authorizer);
- a time limit enforced by a SQLite progress handler: it interrupts the statement inside the
  engine, so a runaway query cannot outlive it the way a watchdog thread could;
- a row cap (extra rows are dropped and `truncated` is set) and a result-size cap: the bytes of
  the fetched values are counted row by row, so a huge result fails as "result too large"
  instead of exhausting memory. The per-value length limit of the connection is tightened to
  the same cap for the call, so a single huge string or BLOB fails the same way.

Every failure is a QueryResult with `error` set, worded so that evaluation/taxonomy.py classifies
it: "one statement at a time" / SQLite's parse errors as syntax_error; "timeout: …", "not
authorized: …", "result too large: …" and all other engine errors as runtime_error.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_ROW_CAP = 100_000
DEFAULT_MAX_RESULT_BYTES = 16 << 20
# VM instructions between two looks at the clock (about 5 to 20 ms of engine time). Each look takes the
# GIL, so a small value makes every SQL worker thread queue behind the event loop: at 1,000 the heaviest
# GT queries ran 1.1 to 2.4 s beside one busy Python thread, against 0.6 to 0.8 s at 1,000,000.
PROGRESS_STEPS = 1_000_000

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

_TOKEN = re.compile(
    r"""
      (?P<ws>\s+)
    | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<string>'[^']*(?:''[^']*)*(?:'|\Z))
    | (?P<ident>"[^"]*(?:""[^"]*)*(?:"|\Z)|`[^`]*(?:``[^`]*)*(?:`|\Z)|\[[^\]]*(?:\]|\Z))
    | (?P<semi>;)
    | (?P<word>[^\W\d]\w*)
    | (?P<other>[^\s;'"`\[\w/-]+|.)
    """,
    re.VERBOSE | re.DOTALL,
)


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
    last = ""  # the previous significant token, upper-cased
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup
        if kind in ("ws", "comment"):
            continue
        if kind == "semi":
            if in_trigger and last != "END":
                last = ";"
                continue
            if significant:
                statements.append(sql[start : m.end()])
            start, words, significant, in_trigger, last = m.end(), [], False, False, ""
            continue
        significant = True
        last = m.group().upper()
        if kind == "word" and len(words) < 3:
            words.append(last)
            in_trigger = words[:2] == ["CREATE", "TRIGGER"] or (
                len(words) == 3
                and words[0] == "CREATE"
                and words[1] in ("TEMP", "TEMPORARY")
                and words[2] == "TRIGGER"
            )
    if significant:
        statements.append(sql[start:])
    return statements


def first_keyword(statement: str) -> str | None:
    """The first word of a statement, upper-cased (None when it starts otherwise)."""
    for m in _TOKEN.finditer(statement):
        if m.lastgroup in ("ws", "comment"):
            continue
        return m.group().upper() if m.lastgroup == "word" else None
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


def _describe_error(exc: Exception, conn: sqlite3.Connection, timeout_s: float, value_cap: int) -> str:
    text = str(exc)
    kind = type(exc).__name__
    if isinstance(exc, sqlite3.OperationalError) and "interrupted" in text:
        return f"timeout: query exceeded {timeout_s:g} s"
    denial = getattr(getattr(conn, "sandbox", None), "last_denial", None)
    if denial is not None or text == "not authorized":
        what = denial or "a write or privileged operation"
        return f"not authorized: the sandbox connection is readonly and refuses {what} ({kind}: {text})"
    if "string or blob too big" in text:
        return f"result too large: a string or BLOB exceeds the sandbox limit of {value_cap} bytes ({kind}: {text})"
    return f"{kind}: {text}"


def run_query(
    conn: sqlite3.Connection,
    sql: str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
    *,
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
) -> QueryResult:
    """Execute one statement; never raises for anything the SQL itself does (see module doc)."""
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
    deadline = time.monotonic() + timeout_s

    def _over_time() -> int:
        return 1 if time.monotonic() > deadline else 0

    value_cap = min(conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH), max(1, max_result_bytes))
    old_length_limit = conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, value_cap)
    conn.set_progress_handler(_over_time, PROGRESS_STEPS)
    cur: sqlite3.Cursor | None = None
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
    except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError) as exc:
        return _failed(_describe_error(exc, conn, timeout_s, value_cap))
    finally:
        if cur is not None:
            cur.close()  # resets the statement: no read lock or half-run query left behind
        conn.set_progress_handler(None, 0)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, old_length_limit)
