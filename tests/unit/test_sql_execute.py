"""Read-only execution with a time limit and a row cap."""

from __future__ import annotations

import sqlite3

from memsql_assets.lib.sources.sqlite_db import open_readonly
from memsql_assets.lib.sql.execute import run_query


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
