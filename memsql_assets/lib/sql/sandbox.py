"""The read-only sandbox every query of a source database runs in, and the check that a file is an
intact SQLite database before it is opened."""

from __future__ import annotations

import sqlite3
import weakref
from collections.abc import Callable
from pathlib import Path

from memsql_assets.lib.errors import SourceError

SQLITE_MAGIC = b"SQLite format 3\x00"


def check_sqlite_file(path: Path) -> None:
    """Raise SourceError unless `path` is an existing, intact SQLite database."""
    if not path.exists():
        raise SourceError(path, "database file does not exist", "a SQLite database built by its source asset")
    if not path.is_file():
        raise SourceError(path, "is not a file", "a SQLite database file")
    with open(path, "rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise SourceError(
            path, "is not a SQLite database (bad header)", "a file starting with 'SQLite format 3'"
        )
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("PRAGMA quick_check").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise SourceError(path, f"corrupt SQLite database: {exc}") from exc
    if row is None or row[0] != "ok":
        raise SourceError(path, f"corrupt SQLite database: quick_check says {row[0] if row else 'nothing'}")


# --- the read-only sandbox --------------------------------------------------------------------
# Generated SQL is untrusted: every connection to a source database is opened through
# open_readonly, which stacks independent guards so that no single one has to be perfect:
#   1. `mode=ro` URI: SQLite opens the file read-only (writes fail with SQLITE_READONLY);
#   2. `PRAGMA query_only=ON`: the engine refuses any change, also to the temp schema;
#   3. an authorizer (default deny) that admits only reads: SELECT, column reads, recursive CTEs,
#      function calls except a deny-list, and a short allow-list of read-only pragmas. It refuses
#      writes, DDL, transactions/savepoints, ANALYZE/REINDEX and ATTACH/DETACH. VACUUM has no
#      action code of its own: it reaches the authorizer as an ATTACH of its target ('' for a plain
#      VACUUM, the file name for VACUUM INTO), so refusing ATTACH also refuses every VACUUM before
#      any file is created;
#   4. limits: no attached databases, a cap on the length of any string/BLOB/row (huge values built
#      by randomblob / zeroblob / printf / replace fail with "string or blob too big" instead of
#      exhausting memory) and on the SQL text; extension loading disabled;
#   5. memory: temporary tables, indices and sorts stay in memory (`temp_store=MEMORY`: nothing is
#      spilled to disk), and SQLite's heap is capped (MAX_SQLITE_HEAP_BYTES), which bounds them.
# The time limit, row cap and result-size cap are per query: memsql_assets/lib/sql/execute.py.

MAX_VALUE_BYTES = 256 << 10
"""Largest string/BLOB/row a sandboxed statement may build or read (SQLITE_LIMIT_LENGTH).

Source values are far smaller (the largest, Northwind's photos, are ~12 KB). The cap also bounds
the one thing the time limit cannot interrupt: a single built-in call such as
instr() or replace() on two huge values is quadratic and runs as one VM instruction, so the
cap keeps that worst case short (docs/hardening.md, "Bounds on untrusted SQL").
"""
MAX_SQL_BYTES = 1 << 20  # SQLITE_LIMIT_SQL_LENGTH: no benchmark or model query comes near this
MAX_SQLITE_HEAP_BYTES = 512 << 20
"""The hard limit on SQLite's heap (sqlite3_hard_heap_limit64), set when a sandbox connection opens.

It is process-wide: every connection's page cache, temporary tables and sorts, and every running
statement together. A query that needs more fails with SQLITE_NOMEM ("memory limit: ..."), so
untrusted SQL adds at most 512 MiB to the process, with no temporary files. SQLite's other users
in the same process (Dagster's and Chroma's storage) share the limit; they hold a few MiB each, and
the statement that grows is the one whose allocation fails. The pragma only ever lowers a limit.
"""
MAX_LIKE_PATTERN = 1000
"""SQLITE_LIMIT_LIKE_PATTERN_LENGTH. Matching is one VM instruction whose cost grows with value
length x pattern length (a 40,000-character GLOB class against a 256 KiB string runs far past any
time limit); real patterns are a few dozen characters."""

# PRAGMAs that only read, whatever their argument (table_info(t), index_list(t), ...).
READONLY_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "foreign_key_check",
        "database_list",
        "collation_list",
        "function_list",
        "module_list",
        "pragma_list",
        "compile_options",
    }
)
# PRAGMAs that read a setting when given no argument and would change it when given one.
QUERY_ONLY_PRAGMAS = frozenset(
    {
        "user_version",
        "application_id",
        "schema_version",
        "data_version",
        "encoding",
        "page_size",
        "page_count",
        "freelist_count",
        "foreign_keys",
        "query_only",
        "temp_store",
    }
)
# Functions refused even though calling functions is allowed: extension loading (native code),
# FTS3's tokenizer registration (takes a raw pointer), and the CLI's file-system helpers should
# a build ever register them.
DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", "fsdir"})
# Eponymous virtual tables (table-valued functions) that only read. SQLite asks the authorizer for
# an UPDATE of sqlite_master the first time a connection declares one; they are declared once,
# before the authorizer is installed, so that the authorizer can refuse every UPDATE. A pragma_*
# table runs its PRAGMA through the authorizer, so it can read what the PRAGMA itself may.
READONLY_VTABLES = (
    "json_each",
    "json_tree",
    "dbstat",
    "sqlite_stmt",
    *(f"pragma_{p}" for p in sorted(READONLY_PRAGMAS | QUERY_ONLY_PRAGMAS)),
)

# Authorizer action codes by name, for messages (sqlite3 also exports result codes as SQLITE_*).
_ACTION_NAMES = {
    getattr(sqlite3, f"SQLITE_{name}"): name
    for name in [
        "CREATE_INDEX",
        "CREATE_TABLE",
        "CREATE_TEMP_INDEX",
        "CREATE_TEMP_TABLE",
        "CREATE_TEMP_TRIGGER",
        "CREATE_TEMP_VIEW",
        "CREATE_TRIGGER",
        "CREATE_VIEW",
        "DELETE",
        "DROP_INDEX",
        "DROP_TABLE",
        "DROP_TEMP_INDEX",
        "DROP_TEMP_TABLE",
        "DROP_TEMP_TRIGGER",
        "DROP_TEMP_VIEW",
        "DROP_TRIGGER",
        "DROP_VIEW",
        "INSERT",
        "PRAGMA",
        "READ",
        "SELECT",
        "TRANSACTION",
        "UPDATE",
        "ATTACH",
        "DETACH",
        "ALTER_TABLE",
        "REINDEX",
        "ANALYZE",
        "CREATE_VTABLE",
        "DROP_VTABLE",
        "FUNCTION",
        "SAVEPOINT",
        "RECURSIVE",
    ]
}


class SandboxState:
    """What the authorizer refused last, so that run_query can say why "not authorized" happened."""

    __slots__ = ("last_denial",)

    def __init__(self) -> None:
        self.last_denial: str | None = None


class SandboxConnection(sqlite3.Connection):
    """A sqlite3.Connection that carries its sandbox state (plain connections take no attributes)."""

    sandbox: SandboxState


def _describe(action: int, arg1: str | None, arg2: str | None) -> str:
    name = _ACTION_NAMES.get(action, f"action {action}")
    if action == sqlite3.SQLITE_FUNCTION:
        return f"function {arg2}()"
    if action == sqlite3.SQLITE_PRAGMA:
        return f"PRAGMA {arg1}" + (f"={arg2}" if arg2 is not None else "")
    if action == sqlite3.SQLITE_ATTACH:
        return f"ATTACH {arg1!r} (also how VACUUM and VACUUM INTO reach the authorizer)"
    if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master":  # SQLite refuses real ones itself
        named = ", ".join(t for t in READONLY_VTABLES if not t.startswith("pragma_"))
        return (
            f"a table-valued function or virtual table it does not provide (it provides {named} "
            "and the pragma_* tables of the read-only PRAGMAs)"
        )
    detail = " ".join(str(a) for a in (arg1, arg2) if a)
    return f"{name} {detail}".strip()


def sandbox_authorizer(state: SandboxState):
    """The default-deny authorizer of a sandboxed connection (records each refusal in `state`)."""
    allowed = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}

    def authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, _src: str | None) -> int:
        if action in allowed:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in DENIED_FUNCTIONS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA:
            pragma = (arg1 or "").lower()
            if pragma in READONLY_PRAGMAS or (pragma in QUERY_ONLY_PRAGMAS and arg2 is None):
                return sqlite3.SQLITE_OK
        state.last_denial = _describe(action, arg1, arg2)
        return sqlite3.SQLITE_DENY

    return authorize


_PRINTF_FLAGS = frozenset("-+ #!0,")


def _printf_repeat_counts(fmt: str, args: tuple[object, ...]) -> list[object]:
    """The precision arguments of the `%c` conversions of a printf format (ints or raw values).

    Follows SQLite's format grammar (flags, width, .precision, l/ll, type) far enough to know
    which argument each `*` and each conversion consumes.
    """
    counts: list[object] = []
    i, n, arg = 0, len(fmt), 0
    while i < n:
        if fmt[i] != "%":
            i += 1
            continue
        i += 1
        if i < n and fmt[i] == "%":
            i += 1
            continue
        precision: object = None
        while i < n and (fmt[i] in _PRINTF_FLAGS or fmt[i].isdigit() or fmt[i] == "*"):
            if fmt[i] == "*":
                arg += 1  # a width taken from the arguments
            i += 1
        if i < n and fmt[i] == ".":
            i += 1
            if i < n and fmt[i] == "*":
                precision = args[arg] if arg < len(args) else 0
                arg += 1
                i += 1
            else:
                start = i
                while i < n and fmt[i].isdigit():
                    i += 1
                precision = int(fmt[start:i] or 0) & 0x7FFFFFFF
        while i < n and fmt[i] == "l":
            i += 1
        if i >= n:
            break
        if fmt[i] == "c" and precision is not None:
            counts.append(precision)
        arg += 1
        i += 1
    return counts


def _as_c_int(value: object, helper: sqlite3.Connection) -> int:
    """|(int) sqlite3_value_int64(value)| as SQLite computes a printf precision (generously for text)."""
    if isinstance(value, bool | int):
        wide = max(-(1 << 63), min(int(value), (1 << 63) - 1))
    elif isinstance(value, float):
        wide = max(-(1 << 63), min(int(value), (1 << 63) - 1)) if value == value else 0
    elif value is None:
        wide = 0
    else:  # text / blob: take the larger of SQLite's integer and real readings
        a, b = helper.execute(
            "SELECT CAST(?1 AS INTEGER), CAST(CAST(?1 AS REAL) AS INTEGER)", (value,)
        ).fetchone()
        return max(abs(_as_c_int(a, helper)), abs(_as_c_int(b, helper)))
    narrow = (wide + (1 << 31)) % (1 << 32) - (1 << 31)
    return abs(narrow)


def guarded_printf(conn: sqlite3.Connection):
    """printf()/format() that returns NULL at once where SQLite's would loop for a long time.

    SQLite 3.40's printf builds `%.Nc` (N copies of a character) one character at a time and
    does not stop when the result passes the length limit: `printf('%.*c', 2147483647, 'x')`
    runs for a long time in a single VM instruction, out of the time limit's reach, and then yields
    NULL. Any N above the length limit yields NULL, so this wrapper returns NULL for those
    without running them; every other call is computed by SQLite's own printf on a private
    in-memory connection with the same length limit, so results are exactly SQLite's.
    """
    try:
        target: Callable[[], sqlite3.Connection | None] = weakref.ref(conn)  # no conn <-> function cycle
    except TypeError:  # a plain sqlite3.Connection takes no weak references
        target = lambda: conn  # noqa: E731
    helper = sqlite3.connect(":memory:", check_same_thread=False)

    def printf(*args: object) -> object:
        sandboxed = target()
        limit = sandboxed.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) if sandboxed is not None else MAX_VALUE_BYTES
        if args and isinstance(args[0], str):
            for count in _printf_repeat_counts(args[0], args[1:]):
                if _as_c_int(count, helper) > limit:
                    return None
        helper.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limit)
        marks = ", ".join("?" * len(args))
        return helper.execute(f"SELECT printf({marks})", args).fetchone()[0]

    return printf


def harden(conn: sqlite3.Connection, state: SandboxState) -> None:
    """Apply guards 2-5 above to an open connection (guard 1 is the URI it was opened with)."""
    conn.execute("PRAGMA query_only=ON")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute(f"PRAGMA hard_heap_limit={MAX_SQLITE_HEAP_BYTES}")
    if hasattr(conn, "enable_load_extension"):  # absent when Python is built without it
        conn.enable_load_extension(False)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_LIKE_PATTERN)
    printf = guarded_printf(conn)
    for name in ("printf", "format"):
        conn.create_function(name, -1, printf, deterministic=True)
    for name in READONLY_VTABLES:
        conn.execute(f"SELECT 1 FROM {name} LIMIT 0").fetchall()
    conn.set_authorizer(sandbox_authorizer(state))


def open_readonly(path: Path, check: bool = True) -> sqlite3.Connection:
    """A sandboxed read-only connection to a checked source database (see the guards above).

    `check=False` skips the integrity check for callers that already checked this file (a pool).
    """
    if check:
        check_sqlite_file(path)
    conn = sqlite3.connect(
        f"file:{path}?mode=ro", uri=True, check_same_thread=False, factory=SandboxConnection
    )
    try:
        conn.sandbox = SandboxState()
        harden(conn, conn.sandbox)
    except BaseException:
        conn.close()
        raise
    return conn
