"""The SQL sandbox under hostile input.

Every statement of hostile_sql.yaml runs on a sandboxed copy of each embedded source database
(sql/sandbox.open_readonly + sql/execute.run_query, short time limit) and must be classified
as the corpus says, through evaluation/taxonomy.classify. Afterwards each database file is
byte-identical (sha256) and no file has appeared next to it or where ATTACH / VACUUM INTO pointed.
The benchmark's own ground-truth SQL must still run on the hardened connection.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import pytest
import yaml

from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.evaluation.extract import PLAIN, Extraction
from memsql_assets.lib.evaluation.taxonomy import ErrorClass, classify
from memsql_assets.lib.sql.execute import first_keyword, run_query, split_statements
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.schema import row_counts
from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX

CORPUS = yaml.safe_load((Path(__file__).with_name("hostile_sql.yaml")).read_text(encoding="utf-8"))
HOSTILE: list[dict] = CORPUS["hostile"]
BENIGN: list[str] = CORPUS["benign"]
TIMEOUT_S = 0.5
OUTSIDE_PROBE = Path("/tmp/memsql_sandbox_vacuum_probe.db")  # the corpus's absolute VACUUM INTO target
EXPECTED_CLASS = {
    "runtime_error": ErrorClass.RUNTIME_ERROR.value,
    "timeout": ErrorClass.RUNTIME_ERROR.value,
    "syntax_error": ErrorClass.SYNTAX_ERROR.value,
    "null_result": ErrorClass.WRONG_RESULT.value,
}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _placeholders(conn: sqlite3.Connection, scratch: Path) -> dict[str, str]:
    counts = row_counts(conn)
    big = max(sorted(counts), key=lambda t: counts[t])
    first_col = conn.execute(f"PRAGMA table_info({_quote(big)})").fetchone()[1]
    return {"big": _quote(big), "big_name": big, "col": _quote(first_col), "tmp": str(scratch)}


def _fill(sql: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        sql = sql.replace("{" + key + "}", value)
    return sql


def test_corpus_shape():
    assert len(HOSTILE) >= 40
    assert all(
        set(e) <= {"sql", "expect", "error_contains"} and e["expect"] in EXPECTED_CLASS for e in HOSTILE
    )
    kinds = " ".join(e["sql"].split()[0].upper() for e in HOSTILE)
    for needed in (
        "DROP",
        "DELETE",
        "UPDATE",
        "INSERT",
        "ATTACH",
        "DETACH",
        "VACUUM",
        "PRAGMA",
        "REINDEX",
        "ANALYZE",
        "SAVEPOINT",
        "BEGIN",
        "CREATE",
    ):
        assert needed in kinds, needed
    assert {e["expect"] for e in HOSTILE} == set(EXPECTED_CLASS)
    errors = [e for e in HOSTILE if e["expect"] in ("runtime_error", "timeout", "syntax_error")]
    assert len(errors) >= 40


@pytest.fixture(scope="module")
def db_copies(embedded_dbs, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("sandbox_dbs")
    copies = {}
    for name, path in embedded_dbs.items():
        (out / name).mkdir()
        copies[name] = Path(shutil.copy2(path, out / name / path.name))
    return copies


@pytest.mark.slow
@pytest.mark.parametrize("db_name", ["northwind", "sec_edgar", "bird_financial"])
def test_hostile_statements_are_classified_and_change_nothing(db_copies, tmp_path, db_name):
    db = db_copies[db_name]
    before = sha256_file(db)
    probe_existed = OUTSIDE_PROBE.exists()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    conn = open_readonly(db)
    values = _placeholders(conn, scratch)
    wrong = []
    try:
        for entry in HOSTILE:
            sql = _fill(entry["sql"], values)
            started = time.monotonic()
            result = run_query(conn, sql, timeout_s=TIMEOUT_S)
            elapsed = time.monotonic() - started
            got = classify(Extraction(sql, False, PLAIN), result, strict_verdict=False)
            timed_out = (result.error or "").startswith("timeout")
            problems = []
            if got != EXPECTED_CLASS[entry["expect"]]:
                problems.append(f"class {got}")
            if timed_out != (entry["expect"] == "timeout"):
                problems.append("timed out" if timed_out else "did not time out")
            if entry["expect"] == "null_result" and (result.rows != [(None,)] or elapsed > TIMEOUT_S):
                problems.append(f"rows {result.rows!r} after {elapsed:.2f} s")
            if entry.get("error_contains") and entry["error_contains"] not in (result.error or ""):
                problems.append(f"message lacks {entry['error_contains']!r}")
            if problems:
                wrong.append(f"{sql!r}: expected {entry['expect']}, {', '.join(problems)}: {result.error}")
        # the connection is still usable and still read-only after the whole corpus
        assert run_query(conn, f"SELECT count(*) FROM {values['big']}").ok
        assert conn.execute("PRAGMA query_only").fetchone() == (1,)
        assert not conn.in_transaction
    finally:
        conn.close()
    assert not wrong, "\n".join(wrong)
    assert sha256_file(db) == before
    assert sorted(p.name for p in db.parent.iterdir()) == [db.name]  # no journal, WAL or copy
    assert list(scratch.iterdir()) == []  # ATTACH / VACUUM INTO created nothing
    assert probe_existed or not OUTSIDE_PROBE.exists()


@pytest.mark.parametrize("db_name", ["northwind", "sec_edgar", "bird_financial"])
def test_benign_statements_still_run(db_copies, tmp_path, db_name):
    conn = open_readonly(db_copies[db_name])
    try:
        values = _placeholders(conn, tmp_path)
        failed = {}
        for sql in BENIGN:
            result = run_query(conn, _fill(sql, values), timeout_s=5.0)
            if not result.ok:
                failed[sql] = result.error
        assert not failed
    finally:
        conn.close()


def test_result_size_cap_is_configurable(db_copies):
    conn = open_readonly(db_copies["sec_edgar"])
    try:
        sql = "SELECT * FROM annual_financials"
        assert run_query(conn, sql).ok
        small = run_query(conn, sql, max_result_bytes=10_000)
        assert not small.ok and small.error.startswith("result too large")
        one_value = run_query(conn, "SELECT randomblob(20000)", max_result_bytes=10_000)
        assert not one_value.ok and one_value.error.startswith("result too large")
        # the per-call value limit is restored afterwards
        assert conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) > 10_000
        assert run_query(conn, "SELECT randomblob(20000)").ok
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT ';'", 1),
        ("SELECT 1;", 1),
        ("SELECT 1; -- trailing\n ;;", 1),
        ("SELECT 'a'';b' AS \"c;d\" FROM [e;f] /* ; */ -- ;", 1),
        ("SELECT 1; SELECT 2", 2),
        ("CREATE TRIGGER t AFTER INSERT ON x BEGIN DELETE FROM y; UPDATE z SET a = 1; END; SELECT 1", 2),
        ("SELECT 'unterminated; DROP TABLE x", 1),
        ("", 0),
        ("-- only a comment", 0),
        ("CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 'END'; END; SELECT 1", 2),
        ("CREATE TEMP TRIGGER t AFTER INSERT ON x BEGIN SELECT xEND; end ; SELECT 1", 2),
        ("SELECT 'it''s; fine', \"a\"\"b;\" FROM [c;d]", 1),
        ("SELECT 1 - 2 / 3; SELECT 4", 2),
        ("SELECT 1 -- ; comment\n; SELECT 2", 2),
    ],
)
def test_split_statements(sql, expected):
    assert len(split_statements(sql)) == expected
    assert "".join(split_statements(sql)).strip() in sql  # statements are the text as written


@pytest.mark.parametrize(
    ("sql", "keyword"),
    [
        ("  /* c */ delete FROM t", "DELETE"),
        ("-- x\nWITH a AS (SELECT 1) SELECT 1", "WITH"),
        ("(SELECT 1)", None),
        ("-1", None),
        ("'DROP'", None),
        ("", None),
    ],
)
def test_first_keyword(sql, keyword):
    assert first_keyword(sql) == keyword


@pytest.mark.slow
def test_benchmark_ground_truth_runs_in_the_sandbox(embedded_turns, embedded_dbs):
    conns = {prefix: open_readonly(embedded_dbs[name]) for prefix, name in SOURCE_BY_PREFIX.items()}
    failures = []
    executed = 0
    try:
        for turn in embedded_turns:
            result = run_query(conns[turn["source"]], turn["gt_sql"])
            executed += 1
            if not result.ok or result.truncated:
                failures.append(f"{turn['session_id']}#{turn['turn_index']}: {result.error or 'truncated'}")
    finally:
        for c in conns.values():
            c.close()
    assert executed == len(embedded_turns) >= 1000
    assert not failures, failures[:10]
