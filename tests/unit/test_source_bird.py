"""BIRD financial: the embedded builder's shape and determinism, and the real adapter's conversions."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import pytest

from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources import bird
from memsql_assets.lib.sources.sqlite_db import read_meta

# BIRD financial.sqlite: table -> [(column, declared type)], written out independently of bird.BIRD_SCHEMA
BIRD_SCHEMA = {
    "account": [
        ("account_id", "INTEGER"),
        ("district_id", "INTEGER"),
        ("frequency", "TEXT"),
        ("date", "DATE"),
    ],
    "card": [("card_id", "INTEGER"), ("disp_id", "INTEGER"), ("type", "TEXT"), ("issued", "DATE")],
    "client": [
        ("client_id", "INTEGER"),
        ("gender", "TEXT"),
        ("birth_date", "DATE"),
        ("district_id", "INTEGER"),
    ],
    "disp": [("disp_id", "INTEGER"), ("client_id", "INTEGER"), ("account_id", "INTEGER"), ("type", "TEXT")],
    "district": [("district_id", "INTEGER")]
    + [(f"A{i}", "TEXT") for i in range(2, 8)]
    + [("A8", "INTEGER"), ("A9", "INTEGER"), ("A10", "REAL"), ("A11", "INTEGER"), ("A12", "REAL")]
    + [("A13", "REAL"), ("A14", "INTEGER"), ("A15", "INTEGER"), ("A16", "INTEGER")],
    "loan": [
        ("loan_id", "INTEGER"),
        ("account_id", "INTEGER"),
        ("date", "DATE"),
        ("amount", "INTEGER"),
        ("duration", "INTEGER"),
        ("payments", "REAL"),
        ("status", "TEXT"),
    ],
    "order": [
        ("order_id", "INTEGER"),
        ("account_id", "INTEGER"),
        ("bank_to", "TEXT"),
        ("account_to", "INTEGER"),
        ("amount", "REAL"),
        ("k_symbol", "TEXT"),
    ],
    "trans": [
        ("trans_id", "INTEGER"),
        ("account_id", "INTEGER"),
        ("date", "DATE"),
        ("type", "TEXT"),
        ("operation", "TEXT"),
        ("amount", "INTEGER"),
        ("balance", "INTEGER"),
        ("k_symbol", "TEXT"),
        ("bank", "TEXT"),
        ("account", "INTEGER"),
    ],
}
REGION_DISTRICTS = {
    "Prague": 1,
    "central Bohemia": 12,
    "south Bohemia": 8,
    "west Bohemia": 10,
    "north Bohemia": 10,
    "east Bohemia": 11,
    "south Moravia": 14,
    "north Moravia": 11,
}
OWNER_REGION_STATUS = """
    SELECT d.A3, l.status, COUNT(*)
    FROM loan l
    JOIN account a ON a.account_id = l.account_id
    JOIN disp p ON p.account_id = a.account_id AND p.type = 'OWNER'
    JOIN client c ON c.client_id = p.client_id
    JOIN district d ON d.district_id = c.district_id
    GROUP BY d.A3, l.status
"""


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bird") / "bird.sqlite"
    bird.build_embedded(path, seed=1999, options={})
    return path


@pytest.fixture()
def db(embedded: Path):
    conn = sqlite3.connect(f"file:{embedded}?mode=ro", uri=True)
    yield conn
    conn.close()


def scalar(conn: sqlite3.Connection, sql: str) -> object:
    return conn.execute(sql).fetchone()[0]


# ---------------------------------------------------------------- embedded builder


def test_same_seed_gives_identical_bytes(embedded: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.sqlite"
    bird.build_embedded(again, seed=1999, options={"trans_rows": 20000})
    assert sha256_file(again) == sha256_file(embedded)


def test_different_seed_gives_different_bytes(embedded: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    bird.build_embedded(other, seed=2000, options={})
    assert sha256_file(other) != sha256_file(embedded)


def test_schema_is_birds(db: sqlite3.Connection) -> None:
    tables = {
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE '\\_memsql%' ESCAPE '\\'"
        )
    }
    assert tables == set(BIRD_SCHEMA)
    for table, columns in BIRD_SCHEMA.items():
        info = db.execute(f'PRAGMA table_info("{table}")').fetchall()
        assert [(r[1], r[2]) for r in info] == columns, table
        assert info[0][5] == 1, f"{table}: first column is the primary key"


def test_meta(db: sqlite3.Connection) -> None:
    meta = read_meta(db)
    assert meta == {
        "kind": "embedded",
        "synthetic": True,
        "source": "bird_financial",
        "builder_version": 1,
        "seed": 1999,
        "options": {"trans_rows": 20000},
    }


def test_row_counts_match_pkdd99(db: sqlite3.Connection) -> None:
    counts = {t: scalar(db, f'SELECT COUNT(*) FROM "{t}"') for t in BIRD_SCHEMA}
    assert counts == {
        "district": 77,
        "account": 4500,
        "client": 5369,
        "disp": 5369,
        "loan": 682,
        "card": 892,
        "order": 6471,
        "trans": 20000,
    }
    assert dict(db.execute("SELECT type, COUNT(*) FROM disp GROUP BY type")) == {
        "OWNER": 4500,
        "DISPONENT": 869,
    }
    assert scalar(db, "SELECT COUNT(DISTINCT account_id) FROM disp WHERE type = 'OWNER'") == 4500
    assert dict(db.execute("SELECT status, COUNT(*) FROM loan GROUP BY status")) == {
        "A": 203,
        "B": 31,
        "C": 403,
        "D": 45,
    }
    assert dict(db.execute("SELECT type, COUNT(*) FROM card GROUP BY type")) == {
        "classic": 659,
        "junior": 145,
        "gold": 88,
    }
    freq = dict(db.execute("SELECT frequency, COUNT(*) FROM account GROUP BY frequency"))
    assert set(freq) == {"POPLATEK MESICNE", "POPLATEK TYDNE", "POPLATEK PO OBRATU"}
    assert 3900 <= freq["POPLATEK MESICNE"] <= 4400


def test_districts_and_regions(db: sqlite3.Connection) -> None:
    assert dict(db.execute("SELECT A3, COUNT(*) FROM district GROUP BY A3")) == REGION_DISTRICTS
    assert [r[0] for r in db.execute("SELECT district_id FROM district ORDER BY 1")] == list(range(1, 78))
    assert scalar(db, "SELECT COUNT(DISTINCT A2) FROM district") == 77
    assert scalar(db, "SELECT A2 FROM district WHERE district_id = 1") == "Hl.m. Praha"
    # one district keeps the raw data's unknown figures as NULL
    assert db.execute("SELECT A2 FROM district WHERE A12 IS NULL OR A15 IS NULL").fetchall() == [("Jesenik",)]
    assert scalar(db, "SELECT COUNT(*) FROM district WHERE A4 GLOB '*[^0-9]*' OR A4 = ''") == 0


def test_every_region_status_pair_has_a_loan_through_the_owner_join(db: sqlite3.Connection) -> None:
    rows = db.execute(OWNER_REGION_STATUS).fetchall()
    pairs = {(r[0], r[1]) for r in rows}
    assert pairs == {(region, status) for region in REGION_DISTRICTS for status in "ABCD"}
    per_region = {}
    for region, _status, n in rows:
        per_region[region] = per_region.get(region, 0) + n
    # loans follow the bank's clients: the big Moravian regions lead, south Bohemia is small
    assert min(per_region["south Moravia"], per_region["north Moravia"]) > per_region["south Bohemia"]


def test_loans_are_realistic(db: sqlite3.Connection) -> None:
    rows = db.execute(
        "SELECT l.date, amount, duration, payments, status, a.date FROM loan l JOIN account a USING (account_id)"
    )
    amounts = []
    for date, amount, duration, payments, status, opened in rows:
        granted = dt.date.fromisoformat(date)
        assert duration in (12, 24, 36, 48, 60)
        assert amount == duration * payments
        assert 1993 <= granted.year <= 1998
        assert (granted - dt.date.fromisoformat(opened)).days >= 102
        ends = granted.replace(year=granted.year + duration // 12)
        if status in ("A", "B"):
            assert ends <= dt.date(1998, 12, 31), "finished contracts end within the data"
        else:
            assert ends > dt.date(1998, 12, 31), "running contracts outlive the data"
        amounts.append(amount)
    assert (min(amounts), max(amounts)) == (4980, 590820)
    assert scalar(db, "SELECT COUNT(DISTINCT account_id) FROM loan") == 682
    # each loan account pays its instalment by one UVER permanent order
    assert (
        scalar(
            db,
            'SELECT COUNT(*) FROM loan l JOIN "order" o ON o.account_id = l.account_id '
            "AND o.k_symbol = 'UVER' AND o.amount = l.payments",
        )
        == 682
    )


def test_clients_cards_and_dates(db: sqlite3.Connection) -> None:
    assert set(r[0] for r in db.execute("SELECT DISTINCT gender FROM client")) == {"M", "F"}
    lo, hi = db.execute("SELECT MIN(birth_date), MAX(birth_date) FROM client").fetchone()
    assert lo >= "1911-01-01" and hi <= "1987-12-31"
    for table, column in [
        ("account", "date"),
        ("client", "birth_date"),
        ("loan", "date"),
        ("card", "issued"),
        ("trans", "date"),
    ]:
        bad = scalar(
            db,
            f"SELECT COUNT(*) FROM \"{table}\" WHERE {column} NOT GLOB '[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]'",
        )
        assert bad == 0, f"{table}.{column} is ISO text"
    # cards hang on owners' dispositions, juniors belong to young owners, none issued before opening
    assert scalar(db, "SELECT COUNT(*) FROM card JOIN disp USING (disp_id) WHERE disp.type != 'OWNER'") == 0
    assert (
        scalar(
            db,
            "SELECT COUNT(*) FROM card JOIN disp USING (disp_id) JOIN client USING (client_id) "
            "WHERE card.type = 'junior' AND client.birth_date < '1974-01-01'",
        )
        == 0
    )
    assert (
        scalar(
            db,
            "SELECT COUNT(*) FROM card JOIN disp USING (disp_id) JOIN account a USING (account_id) WHERE issued < a.date",
        )
        == 0
    )
    # foreign keys resolve
    assert scalar(db, "SELECT COUNT(*) FROM disp WHERE client_id NOT IN (SELECT client_id FROM client)") == 0
    assert (
        scalar(db, "SELECT COUNT(*) FROM account WHERE district_id NOT IN (SELECT district_id FROM district)")
        == 0
    )
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_trans_ledger(db: sqlite3.Connection) -> None:
    assert scalar(db, "SELECT COUNT(*) FROM trans WHERE balance < 0") == 0
    assert set(r[0] for r in db.execute("SELECT DISTINCT type FROM trans")) <= {"PRIJEM", "VYDAJ", "VYBER"}
    # balances chain: each row's balance is the previous balance plus or minus its amount
    rows = db.execute(
        "SELECT account_id, type, amount, balance FROM trans ORDER BY account_id, trans_id"
    ).fetchall()
    previous: dict[int, int] = {}
    for account_id, ttype, amount, balance in rows:
        before = previous.get(account_id, 0)
        assert balance == before + (amount if ttype == "PRIJEM" else -amount)
        previous[account_id] = balance


@pytest.mark.parametrize("rows", [0, 700])
def test_trans_rows_option(tmp_path: Path, rows: int) -> None:
    path = tmp_path / "b.sqlite"
    bird.build_embedded(path, seed=7, options={"trans_rows": rows})
    conn = sqlite3.connect(path)
    try:
        assert scalar(conn, "SELECT COUNT(*) FROM trans") == rows
        assert scalar(conn, "SELECT COUNT(*) FROM loan") == 682
    finally:
        conn.close()


def test_unknown_option_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="unknown option 'transactions'"):
        bird.build_embedded(tmp_path / "b.sqlite", seed=1, options={"transactions": 5})
    assert not (tmp_path / "b.sqlite").exists()


@pytest.mark.parametrize("value", [-1, "many", 2.5, True])
def test_bad_trans_rows_is_rejected(tmp_path: Path, value: object) -> None:
    with pytest.raises(SourceError, match="trans_rows"):
        bird.build_embedded(tmp_path / "b.sqlite", seed=1, options={"trans_rows": value})


# ---------------------------------------------------------------- real adapter on small folders

RAW_FILES = {
    "district.csv": [
        "A1;A2;A3;A4;A5;A6;A7;A8;A9;A10;A11;A12;A13;A14;A15;A16",
        '1;"Hl.m. Praha";"Prague";1204953;0;0;0;1;1;100.0;12541;0.29;0.43;167;85677;99107',
        '69;"Jesenik";"north Moravia";42821;4;13;5;1;3;48.4;8173;?;7.01;124;?;1358',
    ],
    "account.csv": [
        '"account_id";"district_id";"frequency";"date"',
        '576;1;"POPLATEK MESICNE";930101',
        '2;69;"POPLATEK TYDNE";930226',
    ],
    "client.csv": ['"client_id";"birth_number";"district_id"', '1;"706213";69', '2;"450204";1'],
    "disp.csv": ['"disp_id";"client_id";"account_id";"type"', '1;1;576;"OWNER"', '2;2;2;"OWNER"'],
    "loan.csv": [
        '"loan_id";"account_id";"date";"amount";"duration";"payments";"status"',
        '5314;576;930705;96396;12;8033.00;"B"',
    ],
    "card.csv": ['"card_id";"disp_id";"type";"issued"', '1005;1;"classic";931107 00:00:00'],
    "order.csv": [
        '"order_id";"account_id";"bank_to";"account_to";"amount";"k_symbol"',
        '29402;2;"ST";"89597016";3372.70;"UVER"',
        '29401;576;"YZ";"87144583";2452.00;" "',
    ],
}

CTU_FILES = {
    "district.csv": [
        '"district_id","A2","A3","A4","A5","A6","A7","A8","A9","A10","A11","A12","A13","A14","A15","A16"',
        '1,"Hl.m. Praha","Prague",1204953,0,0,0,1,1,100.0,12541,0.0,0.0,167,85677,99107',
    ],
    "account.csv": ['"account_id","district_id","frequency","date"', '1,1,"POPLATEK MESICNE","1995-03-24"'],
    "client.csv": ['"client_id","gender","birth_date","district_id"', '1,"F","1970-12-13",1'],
    "disp.csv": ['"disp_id","client_id","account_id","type"', '1,1,1,"OWNER"'],
    "loan.csv": [
        '"loan_id","account_id","date","amount","duration","payments","status"',
        '4959,1,"1995-07-05",80952,24,3373.0,"A"',
    ],
}


def write_folder(folder: Path, files: dict[str, list[str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in files.items():
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_raw_layout_is_converted(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "raw", RAW_FILES)
    target = tmp_path / "out.sqlite"
    bird.build_real(target, folder)
    conn = sqlite3.connect(target)
    try:
        assert conn.execute("SELECT * FROM client ORDER BY client_id").fetchall() == [
            (1, "F", "1970-12-13", 69),
            (2, "M", "1945-02-04", 1),
        ]
        assert conn.execute("SELECT account_id, date FROM account ORDER BY 1").fetchall() == [
            (2, "1993-02-26"),
            (576, "1993-01-01"),
        ]
        assert conn.execute("SELECT * FROM loan").fetchall() == [
            (5314, 576, "1993-07-05", 96396, 12, 8033.0, "B")
        ]
        assert conn.execute("SELECT issued FROM card").fetchall() == [("1993-11-07",)]
        assert conn.execute(
            "SELECT A4, A10, A12, A13, A15 FROM district WHERE district_id = 69"
        ).fetchall() == [("42821", 48.4, None, 7.01, None)]
        assert conn.execute('SELECT order_id, account_to, amount, k_symbol FROM "order"').fetchall() == [
            (29401, 87144583, 2452.0, " "),
            (29402, 89597016, 3372.7, "UVER"),
        ]
        assert conn.execute("SELECT COUNT(*) FROM trans").fetchone() == (0,)
        meta = read_meta(conn)
    finally:
        conn.close()
    assert meta["kind"] == "real" and meta["synthetic"] is False and meta["source"] == "bird_financial"
    assert meta["input_format"] == "pkdd99_raw"
    assert meta["missing_tables"] == ["trans"]
    assert meta["inputs"] == sorted(RAW_FILES)


def test_ctu_layout_and_asc_names(tmp_path: Path) -> None:
    files = {name.upper().replace(".CSV", ".ASC"): lines for name, lines in CTU_FILES.items()}
    folder = write_folder(tmp_path / "ctu", files)
    target = tmp_path / "out.sqlite"
    bird.build_real(target, folder)
    conn = sqlite3.connect(target)
    try:
        assert conn.execute("SELECT * FROM client").fetchall() == [(1, "F", "1970-12-13", 1)]
        assert conn.execute("SELECT date, payments FROM loan").fetchall() == [("1995-07-05", 3373.0)]
        meta = read_meta(conn)
    finally:
        conn.close()
    assert meta["input_format"] == "ctu_relational"
    assert meta["missing_tables"] == ["card", "order", "trans"]


def test_trans_file_is_loaded_when_present(tmp_path: Path) -> None:
    files = dict(RAW_FILES)
    files["trans.asc"] = [
        '"trans_id";"account_id";"date";"type";"operation";"amount";"balance";"k_symbol";"bank";"account"',
        '695247;576;930101;"PRIJEM";"VKLAD";700.0;700.0;"";"";',
        '3530438;576;930131;"PRIJEM";"";14.6;714.6;"UROK";"";',
        '171812;2;930226;"VYDAJ";"PREVOD NA UCET";3372.7;1000.0;"UVER";"ST";89597016',
    ]
    target = tmp_path / "out.sqlite"
    bird.build_real(target, write_folder(tmp_path / "raw", files))
    conn = sqlite3.connect(target)
    try:
        got = conn.execute("SELECT * FROM trans ORDER BY trans_id").fetchall()
        meta = read_meta(conn)
    finally:
        conn.close()
    # text stays verbatim; fractional amounts are kept rather than truncated
    assert got == [
        (171812, 2, "1993-02-26", "VYDAJ", "PREVOD NA UCET", 3372.7, 1000, "UVER", "ST", 89597016),
        (695247, 576, "1993-01-01", "PRIJEM", "VKLAD", 700, 700, "", "", None),
        (3530438, 576, "1993-01-31", "PRIJEM", "", 14.6, 714.6, "UROK", "", None),
    ]
    assert meta["missing_tables"] == []
    assert "trans.asc" in meta["inputs"]


def test_real_build_is_deterministic(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "raw", RAW_FILES)
    bird.build_real(tmp_path / "a.sqlite", folder)
    bird.build_real(tmp_path / "b.sqlite", folder)
    assert sha256_file(tmp_path / "a.sqlite") == sha256_file(tmp_path / "b.sqlite")


def test_loan_file_missing_a_column_names_file_and_column(tmp_path: Path) -> None:
    files = dict(RAW_FILES)
    files["loan.csv"] = [
        '"loan_id";"account_id";"date";"amount";"duration";"payments"',
        "5314;576;930705;96396;12;8033.00",
    ]
    folder = write_folder(tmp_path / "raw", files)
    with pytest.raises(SourceError) as info:
        bird.build_real(tmp_path / "out.sqlite", folder)
    assert "loan.csv" in str(info.value) and "'status'" in str(info.value)
    assert not (tmp_path / "out.sqlite").exists()


def test_missing_required_file(tmp_path: Path) -> None:
    files = {k: v for k, v in RAW_FILES.items() if k != "disp.csv"}
    folder = write_folder(tmp_path / "raw", files)
    with pytest.raises(SourceError, match="table 'disp'"):
        bird.build_real(tmp_path / "out.sqlite", folder)


def test_client_file_of_neither_layout(tmp_path: Path) -> None:
    files = dict(RAW_FILES)
    files["client.csv"] = ['"client_id";"district_id"', "1;69"]
    folder = write_folder(tmp_path / "raw", files)
    with pytest.raises(SourceError, match=r"client\.csv.*birth_number"):
        bird.build_real(tmp_path / "out.sqlite", folder)


@pytest.mark.parametrize(
    ("name", "line", "pattern"),
    [
        ("loan.csv", '5314;576;931305;96396;12;8033.00;"B"', r"loan\.csv: column 'date' line 2"),
        ("loan.csv", '5314;576;930705;lots;12;8033.00;"B"', r"loan\.csv: column 'amount' line 2"),
        ("loan.csv", '5314;576;;96396;12;8033.00;"B"', r"loan\.csv: column 'date' line 2: value is missing"),
        ("client.csv", '1;"701362";69', r"client\.csv: column 'birth_number' line 2"),
    ],
)
def test_bad_values_name_file_column_and_line(tmp_path: Path, name: str, line: str, pattern: str) -> None:
    files = dict(RAW_FILES)
    files[name] = [RAW_FILES[name][0], line]
    folder = write_folder(tmp_path / "raw", files)
    with pytest.raises(SourceError, match=pattern):
        bird.build_real(tmp_path / "out.sqlite", folder)


def test_duplicate_ids_and_ragged_rows(tmp_path: Path) -> None:
    files = dict(RAW_FILES)
    files["disp.csv"] = [RAW_FILES["disp.csv"][0], '1;1;576;"OWNER"', '1;2;2;"OWNER"']
    with pytest.raises(SourceError, match=r"disp\.csv: column 'disp_id': id 1 occurs twice"):
        bird.build_real(tmp_path / "o.sqlite", write_folder(tmp_path / "dup", files))
    files["disp.csv"] = [RAW_FILES["disp.csv"][0], '1;1;576;"OWNER";9']
    with pytest.raises(SourceError, match=r"disp\.csv: line 2 has 5 fields"):
        bird.build_real(tmp_path / "o.sqlite", write_folder(tmp_path / "ragged", files))


def test_bird_sqlite_is_copied(embedded: Path, tmp_path: Path) -> None:
    source = tmp_path / "financial.sqlite"
    source.write_bytes(embedded.read_bytes())
    target = tmp_path / "copy.sqlite"
    bird.build_real(target, source)
    a, b = sqlite3.connect(embedded), sqlite3.connect(target)
    try:
        for table in BIRD_SCHEMA:
            sql = f'SELECT * FROM "{table}" ORDER BY 1'
            assert a.execute(sql).fetchall() == b.execute(sql).fetchall(), table
        meta = read_meta(b)
    finally:
        a.close()
        b.close()
    assert meta["input_format"] == "bird_sqlite" and meta["inputs"] == ["financial.sqlite"]
    assert meta["missing_tables"] == [] and meta["synthetic"] is False


def test_bird_sqlite_lacking_a_column(tmp_path: Path) -> None:
    source = tmp_path / "financial.sqlite"
    conn = sqlite3.connect(source)
    for table, columns in BIRD_SCHEMA.items():
        cols = [c for c, _ in columns if not (table == "loan" and c == "status")]
        conn.execute(f'CREATE TABLE "{table}" ({", ".join(cols)})')
    conn.commit()
    conn.close()
    with pytest.raises(SourceError, match=r"financial\.sqlite: column 'loan\.status' is missing"):
        bird.build_real(tmp_path / "out.sqlite", source)


def test_bad_real_paths(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        bird.build_real(tmp_path / "out.sqlite", tmp_path / "nowhere")
    junk = tmp_path / "financial.sqlite"
    junk.write_text("not a database")
    with pytest.raises(SourceError, match="not a SQLite database"):
        bird.build_real(tmp_path / "out.sqlite", junk)
