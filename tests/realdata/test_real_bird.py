"""The BIRD adapter on the real PKDD'99 files, in both public layouts (skipped when absent)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memsql_assets.lib.sources import bird
from memsql_assets.lib.sources.sqlite_db import read_meta

LAYOUTS = {"berka_raw": "pkdd99_raw", "ctu_relational": "ctu_relational"}

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def data(shared_data) -> Path:
    return shared_data("bird_financial")

OWNER_REGION_STATUS = """
    SELECT d.A3, l.status, COUNT(*)
    FROM loan l
    JOIN account a ON a.account_id = l.account_id
    JOIN disp p ON p.account_id = a.account_id AND p.type = 'OWNER'
    JOIN client c ON c.client_id = p.client_id
    JOIN district d ON d.district_id = c.district_id
    GROUP BY d.A3, l.status
"""


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, data: Path):
    folder = data / request.param
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    target = tmp_path_factory.mktemp(request.param) / "bird_financial.sqlite"
    bird.build_real(target, folder)
    conn = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
    yield request.param, conn
    conn.close()


def rows(conn: sqlite3.Connection, sql: str) -> dict[object, object]:
    return dict(conn.execute(sql).fetchall())


def test_verified_counts(built) -> None:
    layout, conn = built
    assert rows(conn, "SELECT status, COUNT(*) FROM loan GROUP BY status") == {
        "A": 203,
        "B": 31,
        "C": 403,
        "D": 45,
    }
    assert conn.execute("SELECT COUNT(*) FROM district").fetchone() == (77,)
    assert conn.execute("SELECT COUNT(DISTINCT A3) FROM district").fetchone() == (8,)
    assert conn.execute("SELECT COUNT(*) FROM account").fetchone() == (4500,)
    assert conn.execute("SELECT COUNT(*) FROM disp WHERE type = 'OWNER'").fetchone() == (4500,)
    assert conn.execute("SELECT COUNT(DISTINCT account_id) FROM disp WHERE type = 'OWNER'").fetchone() == (
        4500,
    )
    counts = {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in bird.BIRD_SCHEMA}
    assert counts == {
        "district": 77,
        "account": 4500,
        "client": 5369,
        "disp": 5369,
        "card": 892,
        "loan": 682,
        "order": 6471,
        "trans": 0,
    }
    meta = read_meta(conn)
    assert meta["input_format"] == LAYOUTS[layout]
    assert meta["missing_tables"] == ["trans"]
    assert meta["kind"] == "real" and meta["synthetic"] is False


def test_regions_and_loan_facts(built) -> None:
    _layout, conn = built
    assert rows(conn, "SELECT A3, COUNT(*) FROM district GROUP BY A3") == {
        "Prague": 1,
        "central Bohemia": 12,
        "south Bohemia": 8,
        "west Bohemia": 10,
        "north Bohemia": 10,
        "east Bohemia": 11,
        "south Moravia": 14,
        "north Moravia": 11,
    }
    by_branch = rows(
        conn,
        "SELECT d.A3, COUNT(*) FROM loan l JOIN account a USING (account_id) JOIN district d USING (district_id) GROUP BY 1",
    )
    assert by_branch == {
        "Prague": 84,
        "central Bohemia": 90,
        "east Bohemia": 84,
        "north Bohemia": 61,
        "north Moravia": 117,
        "south Bohemia": 60,
        "south Moravia": 129,
        "west Bohemia": 57,
    }
    assert conn.execute(
        "SELECT MIN(date), MAX(date), MIN(amount), MAX(amount), SUM(amount) FROM loan"
    ).fetchone() == (
        "1993-07-05",
        "1998-12-08",
        4980,
        590820,
        103261740,
    )
    assert rows(conn, "SELECT frequency, COUNT(*) FROM account GROUP BY 1") == {
        "POPLATEK MESICNE": 4167,
        "POPLATEK TYDNE": 240,
        "POPLATEK PO OBRATU": 93,
    }
    assert rows(conn, "SELECT type, COUNT(*) FROM card GROUP BY 1") == {
        "classic": 659,
        "junior": 145,
        "gold": 88,
    }


def test_owner_join_covers_30_of_32_region_status_pairs(built) -> None:
    """The real data has no B loan owned in east Bohemia and no D loan owned in north Bohemia.

    The embedded builder guarantees all 32 pairs; templates must therefore draw (region, status)
    from the live profile, never from a fixed list.
    """
    _layout, conn = built
    pairs = {(r[0], r[1]) for r in conn.execute(OWNER_REGION_STATUS)}
    assert len(pairs) == 30
    assert ("east Bohemia", "B") not in pairs and ("north Bohemia", "D") not in pairs


def test_conversions(built) -> None:
    layout, conn = built
    assert conn.execute("SELECT * FROM client WHERE client_id IN (1, 2) ORDER BY 1").fetchall() == [
        (1, "F", "1970-12-13", 18),
        (2, "M", "1945-02-04", 1),
    ]
    assert conn.execute("SELECT COUNT(*) FROM client WHERE gender NOT IN ('M', 'F')").fetchone() == (0,)
    iso = "'[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]'"
    for table, column in [
        ("account", "date"),
        ("client", "birth_date"),
        ("loan", "date"),
        ("card", "issued"),
    ]:
        assert conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} NOT GLOB {iso}").fetchone() == (
            0,
        ), table
    jesenik = conn.execute("SELECT A2, A12, A15 FROM district WHERE district_id = 69").fetchone()
    benesov = conn.execute("SELECT A10, A12, A13 FROM district WHERE district_id = 2").fetchone()
    if layout == "berka_raw":  # authoritative values: decimals kept, '?' -> NULL
        assert jesenik == ("Jesenik", None, None)
        assert benesov == (46.7, 1.67, 1.85)
    else:  # the CTU export truncated decimals and wrote the unknowns as 0
        assert jesenik == ("Jesenik", 0.0, 0)
        assert benesov == (46.0, 1.0, 1.0)


def test_raw_and_ctu_agree_on_the_benchmark_tables(tmp_path: Path, data: Path) -> None:
    folders = {name: data / name for name in LAYOUTS}
    if not all(f.is_dir() for f in folders.values()):
        pytest.skip("both layouts are needed")
    conns = {}
    for name, folder in folders.items():
        bird.build_real(tmp_path / f"{name}.sqlite", folder)
        conns[name] = sqlite3.connect(tmp_path / f"{name}.sqlite")
    try:
        for sql in [
            "SELECT * FROM loan ORDER BY 1",
            "SELECT * FROM account ORDER BY 1",
            "SELECT * FROM client ORDER BY 1",
            "SELECT * FROM disp ORDER BY 1",
            "SELECT * FROM card ORDER BY 1",
            "SELECT district_id, A2, A3 FROM district ORDER BY 1",
        ]:
            assert (
                conns["berka_raw"].execute(sql).fetchall() == conns["ctu_relational"].execute(sql).fetchall()
            ), sql
    finally:
        for conn in conns.values():
            conn.close()


def test_round_trip_through_bird_sqlite(built, tmp_path: Path) -> None:
    """A database in BIRD's layout (as BIRD ships it) is copied table by table."""
    _layout, conn = built
    source = tmp_path / "financial.sqlite"
    conn.execute("VACUUM INTO ?", (str(source),))
    target = tmp_path / "copy.sqlite"
    bird.build_real(target, source)
    copy = sqlite3.connect(target)
    try:
        for table in bird.BIRD_SCHEMA:
            sql = f'SELECT * FROM "{table}" ORDER BY 1'
            assert copy.execute(sql).fetchall() == conn.execute(sql).fetchall(), table
        assert read_meta(copy)["missing_tables"] == []
    finally:
        copy.close()
