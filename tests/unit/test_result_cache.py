"""The process-wide SQL result cache: keyed by file identity and row cap, bounded, never caching
nondeterministic SQL or timeouts."""

from __future__ import annotations

import os
import sqlite3
import time

import pytest

from memsql_assets.lib.sql.execute import QueryResult
from memsql_assets.lib.sql.result_cache import (
    MAX_CACHED_ROWS,
    DiskResults,
    NotCached,
    ResultCache,
    cacheable,
    run_cached,
)
from memsql_assets.lib.sql.sandbox import open_readonly

Q = "SELECT COUNT(*) FROM t"


def _db(path, n: int):
    tmp = path.with_suffix(".tmp")
    w = sqlite3.connect(tmp)
    w.execute("CREATE TABLE t (x INTEGER)")
    w.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(n)])
    w.commit()
    w.close()
    os.replace(tmp, path)  # how sources are published: a new inode
    return path


def test_same_file_same_sql_runs_once(tmp_path):
    path = _db(tmp_path / "a.sqlite", 3)
    cache = ResultCache()
    memo = cache.for_database(path)
    conn = open_readonly(path)
    assert run_cached(conn, Q, memo).rows == [(3,)]
    assert run_cached(conn, Q, cache.for_database(path)).rows == [(3,)]
    assert (cache.hits, cache.misses) == (1, 1)


def test_without_execute_only_cached_results_answer(tmp_path):
    """What the runner scores on its event loop: a miss (or SQL never cached) raises, runs nothing."""
    path = _db(tmp_path / "a.sqlite", 3)
    memo, conn = ResultCache().for_database(path), open_readonly(path)
    with pytest.raises(NotCached):
        run_cached(conn, Q, memo, execute=False)
    assert run_cached(conn, Q, memo).rows == [(3,)]
    assert run_cached(conn, Q + ";", memo, execute=False).rows == [(3,)]
    with pytest.raises(NotCached):
        run_cached(conn, "SELECT random()", memo, execute=False)


def test_a_rebuilt_file_is_another_database(tmp_path):
    path = _db(tmp_path / "a.sqlite", 3)
    cache = ResultCache()
    run_cached(open_readonly(path), Q, cache.for_database(path))
    _db(path, 5)
    assert run_cached(open_readonly(path), Q, cache.for_database(path)).rows == [(5,)]


def test_row_cap_is_part_of_the_key(tmp_path):
    path = _db(tmp_path / "a.sqlite", 5)
    cache = ResultCache()
    conn = open_readonly(path)
    full = run_cached(conn, "SELECT x FROM t", cache.for_database(path, 100), row_cap=100)
    capped = run_cached(conn, "SELECT x FROM t", cache.for_database(path, 2), row_cap=2)
    assert len(full.rows) == 5 and not full.truncated
    assert len(capped.rows) == 2 and capped.truncated


def test_lru_bound(tmp_path):
    path = _db(tmp_path / "a.sqlite", 1)
    cache = ResultCache(max_entries=2)
    memo = cache.for_database(path)
    for sql in ("SELECT 1", "SELECT 2", "SELECT 3"):
        memo[sql] = QueryResult(rows=[(0,)], columns=["x"])
    assert memo.get("SELECT 1") is None and memo.get("SELECT 3") is not None


@pytest.mark.parametrize(
    "sql", ["SELECT random()", "SELECT datetime('now')", "SELECT CURRENT_TIMESTAMP", "SELECT julianday()"]
)
def test_nondeterministic_sql_is_not_cacheable(sql):
    assert not cacheable(sql)


def test_timeouts_are_not_cached(tmp_path):
    path = _db(tmp_path / "a.sqlite", 1)
    cache = ResultCache()
    memo = cache.for_database(path)
    bomb = (
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c LIMIT 100000000) SELECT SUM(i) FROM c"
    )
    result = run_cached(open_readonly(path), bomb, memo, timeout_s=0.2)
    assert result.error and result.error.startswith("timeout")
    assert memo.get(bomb) is None


def test_large_results_are_not_cached_and_blanks_do_not_count(tmp_path):
    path = _db(tmp_path / "a.sqlite", MAX_CACHED_ROWS + 1)
    memo = ResultCache().for_database(path)
    conn = open_readonly(path)
    assert len(run_cached(conn, "SELECT x FROM t", memo).rows) == MAX_CACHED_ROWS + 1
    assert memo.get("SELECT x FROM t") is None  # a model may return this every turn: re-run, not held
    run_cached(conn, f"  {Q} ;\n", memo)
    assert memo.get(Q) is not None  # the same query: keyed without surrounding blanks and semicolons


def test_memory_limits_are_not_cached(tmp_path):
    # the heap cap is process-wide: the same query may fit when nothing else runs beside it
    path = _db(tmp_path / "a.sqlite", 1)
    memo = ResultCache().for_database(path)
    bomb = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT x FROM c ORDER BY hex(zeroblob(150)) || x"
    )
    assert cacheable(bomb)
    result = run_cached(open_readonly(path), bomb, memo, timeout_s=60.0)
    assert result.error and result.error.startswith("memory limit:"), result.error
    assert memo.get(bomb) is None


def test_the_persistent_tier_serves_another_process_exactly(tmp_path):
    path = _db(tmp_path / "a.sqlite", 3)
    store = tmp_path / "cache" / "sql_results.sqlite"
    sql = "SELECT x, x * 0.1, CAST(x AS TEXT), X'00ff', NULL FROM t ORDER BY x"
    first = run_cached(open_readonly(path), sql, ResultCache().for_database(path, store=store))
    later = ResultCache()  # another process: nothing in memory, the file answers
    memo = later.for_database(path, store=store)
    assert memo.get(sql) == first and later.hits == 1
    assert first.rows[0] == (0, 0.0, "0", b"\x00\xff", None)


def test_a_changed_database_invalidates_its_persistent_entries(tmp_path):
    path = _db(tmp_path / "a.sqlite", 3)
    store = tmp_path / "sql_results.sqlite"
    run_cached(open_readonly(path), Q, ResultCache().for_database(path, store=store))
    _db(path, 5)
    assert run_cached(open_readonly(path), Q, ResultCache().for_database(path, store=store)).rows == [(5,)]
    count = sqlite3.connect(store).execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert count == 1  # the old content's entry is gone


def test_identical_content_is_one_database(tmp_path):
    # the key is the content's sha256, not the path: a rebuild with the same seed hits
    a, b = _db(tmp_path / "a.sqlite", 3), _db(tmp_path / "b.sqlite", 3)
    store = tmp_path / "sql_results.sqlite"
    run_cached(open_readonly(a), Q, ResultCache().for_database(a, store=store))
    cache = ResultCache()
    assert cache.for_database(b, store=store).get(Q) is not None


def _write_many(args):
    path, store, start = args
    memo = ResultCache().for_database(path, store=store)
    for i in range(start, start + 200):
        memo[f"SELECT {i}"] = QueryResult(rows=[(i,)], columns=["x"])


def test_two_processes_write_one_store(tmp_path):
    import multiprocessing

    path = _db(tmp_path / "a.sqlite", 1)
    store = tmp_path / "sql_results.sqlite"
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_write_many, [(path, store, 0), (path, store, 100)])
    memo = ResultCache().for_database(path, store=store)
    assert all(memo.get(f"SELECT {i}").rows == [(i,)] for i in range(300))


def _open_at(args):
    store, go = args
    while not go.exists():  # every process opens the new store at the same moment
        time.sleep(0.001)
    DiskResults(store).put("a.sqlite", "sha", 1, "SELECT 1", QueryResult(rows=[(1,)], columns=["x"]))


def test_processes_creating_the_store_at_once_all_open_it(tmp_path):
    # Switching a new file to WAL fails at once with "database is locked" while another process
    # creates it (SQLite does not wait there): each opener retries instead of failing.
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(6) as pool:
        for i in range(10):
            store, go = tmp_path / f"{i}.sqlite", tmp_path / f"go{i}"
            opened = pool.map_async(_open_at, [(store, go)] * 6)
            time.sleep(0.05)
            go.touch()
            opened.get(timeout=60)
