"""Read-only execution with a time limit and a row cap."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from memsql_assets.lib.sql import execute
from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import MAX_SQL_BYTES, MAX_SQLITE_HEAP_BYTES, open_readonly


def _db(tmp_path):
    path = tmp_path / "t.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(50)])
    conn.commit()
    conn.close()
    return path


def test_rows_and_columns(tmp_path):
    conn = open_readonly(_db(tmp_path))
    r = run_query(conn, "SELECT x, x * 2 AS y FROM t WHERE x < 3 ORDER BY x")
    assert r.ok and r.columns == ["x", "y"] and r.rows == [(0, 0), (1, 2), (2, 4)]


def test_row_cap_truncates(tmp_path):
    r = run_query(open_readonly(_db(tmp_path)), "SELECT x FROM t", row_cap=10)
    assert r.ok and r.truncated and len(r.rows) == 10


def test_runaway_query_times_out(tmp_path):
    bomb = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c"
    r = run_query(open_readonly(_db(tmp_path)), bomb, timeout_s=0.3)
    assert not r.ok and r.error.startswith("timeout")


def test_writes_are_refused_and_file_unchanged(tmp_path):
    path = _db(tmp_path)
    before = path.read_bytes()
    conn = open_readonly(path)
    for sql in ("DELETE FROM t", "DROP TABLE t", "INSERT INTO t VALUES (1)"):
        r = run_query(conn, sql)
        assert not r.ok and "readonly" in r.error.replace(" ", "").lower() or "read-only" in (r.error or "")
    assert path.read_bytes() == before


def test_syntax_error_is_reported(tmp_path):
    r = run_query(open_readonly(_db(tmp_path)), "SELEC x FROM t")
    assert not r.ok and "syntax error" in r.error


# --- hard bounds --------------------------------------------------------------------
# Hostile statements (docs/hardening.md, test 15): each row costs ~0.3 s inside one instr() call, and
# json_group_array grows without the value-length check until the aggregate finishes.
INSTR_BOMB = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c "
    "WHERE instr(hex(zeroblob(131000)) || x, hex(zeroblob(65000)) || 'y') > 0"
)
JSON_BOMB = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
    "SELECT json_group_array(hex(randomblob(100))) FROM c"
)
# The same with 200 KB values: before, ~2 GB and an uncaught MemoryError 12.8 s into a 10 s limit.
JSON_BOMB_FAST = JSON_BOMB.replace("randomblob(100)", "randomblob(100000)")
# A sort of ~300-byte keys: ~1 GB within seconds, in memory or, with temp_store=FILE, on disk.
SORT_BOMB = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
    "SELECT x FROM c ORDER BY hex(randomblob(150))"
)


def _bounded_run(conn, sql: str, timeout_s: float, grace_s: float = 1.0):
    """run_query in a thread, joined at the bound; a statement still running then is interrupted
    from here (so that a failing test ends) and reported as a missed bound."""
    box: dict = {}
    worker = threading.Thread(target=lambda: box.update(result=run_query(conn, sql, timeout_s=timeout_s)))
    started = time.monotonic()
    worker.start()
    worker.join(timeout_s + grace_s)
    elapsed = time.monotonic() - started
    if worker.is_alive():
        conn.interrupt()
        worker.join()
        raise AssertionError(f"still running {elapsed:.1f} s after a {timeout_s} s limit: {sql[:60]}")
    return box["result"], elapsed


def test_instr_per_row_ends_within_limit_plus_one_second(tmp_path):
    conn = open_readonly(_db(tmp_path))
    r, elapsed = _bounded_run(conn, INSTR_BOMB, timeout_s=1.0)
    assert not r.ok and r.error == "timeout: query exceeded 1 s", r.error
    assert elapsed < 2.0
    assert run_query(conn, "SELECT count(*) FROM t").rows == [(50,)]  # the connection still works


@pytest.mark.slow
@pytest.mark.parametrize("sql", [JSON_BOMB, JSON_BOMB_FAST], ids=["issue", "fast"])
def test_json_group_array_is_a_typed_error_not_a_crash(tmp_path, sql):
    conn = open_readonly(_db(tmp_path))
    r, _ = _bounded_run(conn, sql, timeout_s=execute.DEFAULT_TIMEOUT_S)
    assert not r.ok and r.error.startswith(("timeout:", "memory limit:")), r.error
    if sql is JSON_BOMB_FAST:  # 512 MiB is reached in ~2 s, long before the limit
        assert r.error.startswith("memory limit:"), r.error
    assert run_query(conn, "SELECT count(*) FROM t").rows == [(50,)]


def _sqlite_temp_files() -> int:
    """Open SQLite temporary files of this process (they are unlinked at once: 'etilqs_… (deleted)')."""
    count = 0
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            count += "etilqs_" in os.readlink(fd)
    return count


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see temporary files")
def test_memory_limit_bounds_sorts_in_memory_and_nothing_spills_to_disk(tmp_path):
    conn = open_readonly(_db(tmp_path))
    assert conn.execute("PRAGMA temp_store").fetchone() == (2,)  # MEMORY
    process_wide = sqlite3.connect(":memory:")  # the heap limit is SQLite's, for the whole process
    assert process_wide.execute("PRAGMA hard_heap_limit").fetchone() == (MAX_SQLITE_HEAP_BYTES,)
    seen, done = [0], threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen[0] = max(seen[0], _sqlite_temp_files())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        r, _ = _bounded_run(conn, SORT_BOMB, timeout_s=60.0)
    finally:
        done.set()
        watcher.join()
    assert not r.ok and r.error.startswith("memory limit:") and "512 MiB" in r.error, r.error
    assert seen[0] == 0, "a temporary file was opened"
    assert run_query(conn, "SELECT x FROM t ORDER BY x DESC LIMIT 1").rows == [(49,)]


def test_deadlines_are_per_connection_and_never_reach_a_later_statement(tmp_path):
    path = _db(tmp_path)
    slow, quick = open_readonly(path), open_readonly(path)
    bomb = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c"
    box: dict = {}
    worker = threading.Thread(target=lambda: box.update(r=run_query(slow, bomb, timeout_s=1.0)))
    worker.start()
    for _ in range(20):  # queries on another connection meanwhile are not interrupted
        assert run_query(quick, "SELECT count(*) FROM t", timeout_s=0.05).ok
    worker.join()
    assert box["r"].error.startswith("timeout")
    # a statement that ended before its deadline: the deadline passing later interrupts nothing
    assert run_query(quick, "SELECT 1", timeout_s=0.1).ok
    time.sleep(0.3)
    assert run_query(quick, "SELECT count(*) FROM t a, t b, t c", timeout_s=5.0).rows == [(125_000,)]


def test_text_over_the_sql_length_limit_is_refused_before_splitting(tmp_path, monkeypatch):
    conn = open_readonly(_db(tmp_path))

    def never(sql):
        raise AssertionError("split_statements called on over-long text")

    monkeypatch.setattr(execute, "split_statements", never)
    r = run_query(conn, "SELECT " + "''" * MAX_SQL_BYTES)
    assert not r.ok and r.error.startswith("statement too long:") and str(MAX_SQL_BYTES) in r.error
    non_ascii = run_query(conn, "SELECT '" + "é" * (MAX_SQL_BYTES // 2) + "'")  # 2 bytes a character
    assert not non_ascii.ok and non_ascii.error.startswith("statement too long:")


@pytest.mark.parametrize(
    "text",
    [
        "SELECT " + "''" * 400_000,  # one literal of doubled quotes: 100x the input before
        'SELECT "' + '""' * 400_000 + '"',
        "SELECT 1" + ";" * 800_000,
        "SELECT " + "a, " * 300_000 + "1",
        "/*" + "x" * 800_000,
        "SELECT 1 -- " + "x" * 800_000,
    ],
)
def test_splitter_memory_is_linear_in_the_text(text):
    tracemalloc.start()
    try:
        execute.split_statements(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(text) + (1 << 20), f"{peak / len(text):.1f} bytes per character"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM pragma_user_version",
        "SELECT count(*) FROM dbstat",
        "SELECT sql FROM sqlite_stmt",
        "SELECT page_count FROM pragma_page_count",
        "SELECT name FROM pragma_table_info('t')",
    ],
)
def test_harmless_table_valued_reads_run(tmp_path, sql):
    r = run_query(open_readonly(_db(tmp_path)), sql)
    assert r.ok and r.rows, r.error


@pytest.mark.parametrize("sql", ["SELECT * FROM pragma_journal_mode", "SELECT * FROM pragma_cache_size"])
def test_other_table_valued_functions_are_refused_with_the_real_reason(tmp_path, sql):
    r = run_query(open_readonly(_db(tmp_path)), sql)
    assert not r.ok and "table-valued function or virtual table" in r.error, r.error
    assert "UPDATE sqlite_master" not in r.error
