"""SEC EDGAR source: the embedded builder and the companyfacts adapter on hand-made payloads."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources import sec
from memsql_assets.lib.sources.sqlite_db import read_meta

# Large real listings the fictional tickers must not collide with.
_REAL_BIG_TICKERS_TEXT = (
    "AAPL MSFT JPM NVDA GOOGL GOOG AMZN META TSLA V XOM WMT UNH JNJ PG HD MA CVX KO PEP LLY MRK ABBV "
    "AVGO COST ORCL CRM CSCO ADBE ACN AMD AMAT IBM INTC INTU MCD NFLX QCOM TXN BRK-B BRK.B BAC WFC C GS "
    "MS T VZ CMCSA DIS NKE BA CAT GE F GM UPS FDX LMT RTX HON MMM PFE ABT TMO DHR BMY AMGN GILD CVS CI "
    "ELV HUM TGT LOW SBUX PYPL AXP BLK SCHW COP SLB OXY PSX MPC VLO DUK SO NEE D KR WBA DELL HPQ HPE "
    "UBER ABNB SNOW PLTR SHOP SQ XYZ NOW PANW CRWD DDOG ZS MRNA REGN VRTX ISRG MDT SYK ZTS"
)
REAL_BIG_TICKERS = set(_REAL_BIG_TICKERS_TEXT.split())


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rows(path: Path, sql: str, args: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def _meta(path: Path) -> dict[str, object]:
    conn = sqlite3.connect(path)
    try:
        return read_meta(conn)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sec") / "sec.sqlite"
    sec.build_embedded(path, seed=2026, options={})
    return path


# ---------------------------------------------------------------------------------------------
# embedded builder
# ---------------------------------------------------------------------------------------------


def test_embedded_is_deterministic(tmp_path: Path, embedded: Path) -> None:
    again = tmp_path / "again.sqlite"
    sec.build_embedded(again, seed=2026, options={"companies": 20})
    assert _sha(again) == _sha(embedded)
    other = tmp_path / "other.sqlite"
    sec.build_embedded(other, seed=2027, options={})
    assert _sha(other) != _sha(embedded)


def test_embedded_schema_is_exact(embedded: Path) -> None:
    companies = _rows(embedded, "PRAGMA table_info(companies)")
    assert [(r[1], r[2], r[3], r[5]) for r in companies] == [
        ("ticker", "TEXT", 0, 1),
        ("company_name", "TEXT", 1, 0),
        ("sector", "TEXT", 0, 0),
        ("fiscal_year_end", "TEXT", 0, 0),
        ("cik", "TEXT", 0, 0),
    ]
    fin = _rows(embedded, "PRAGMA table_info(annual_financials)")
    assert [(r[1], r[2], r[3], r[5]) for r in fin] == [
        ("ticker", "TEXT", 1, 1),
        ("fiscal_year", "INTEGER", 1, 2),
        ("metric", "TEXT", 1, 3),
        ("value_billions", "REAL", 1, 0),
    ]
    metrics = {r[0] for r in _rows(embedded, "SELECT DISTINCT metric FROM annual_financials")}
    assert metrics == {"revenue", "net_income", "cash", "total_assets", "total_liabilities"}


def test_embedded_counts_and_coverage(embedded: Path) -> None:
    (n_rows,) = _rows(embedded, "SELECT COUNT(*) FROM annual_financials")[0]
    assert 1650 <= n_rows <= 1780
    assert _rows(embedded, "SELECT COUNT(*) FROM companies") == [(20,)]
    assert _rows(embedded, "SELECT MIN(fiscal_year), MAX(fiscal_year) FROM annual_financials") == [
        (2009, 2026)
    ]
    # Every ticker has financial rows, every (ticker, metric) pair at least two years.
    pairs = _rows(embedded, "SELECT ticker, metric, COUNT(*) FROM annual_financials GROUP BY 1, 2")
    assert len(pairs) == 20 * 5
    assert min(n for _, _, n in pairs) >= 2
    # Two consecutive years with all five metrics, for every ticker (the T2/T3 session shape).
    full_years = _rows(
        embedded,
        "SELECT ticker, fiscal_year FROM annual_financials GROUP BY 1, 2 HAVING COUNT(*) = 5",
    )
    by_ticker: dict[str, set[int]] = {}
    for ticker, year in full_years:
        by_ticker.setdefault(ticker, set()).add(year)
    assert len(by_ticker) == 20
    assert all(any(y + 1 in years for y in years) for years in by_ticker.values())
    # Realistic gaps: later listings, and not every company has reported FY2026.
    first_years = dict(_rows(embedded, "SELECT ticker, MIN(fiscal_year) FROM annual_financials GROUP BY 1"))
    assert sum(1 for y in first_years.values() if y > 2009) >= 2
    last_years = dict(_rows(embedded, "SELECT ticker, MAX(fiscal_year) FROM annual_financials GROUP BY 1"))
    assert 0 < sum(1 for y in last_years.values() if y == 2026) < 20


def test_embedded_tickers_are_fictional(embedded: Path) -> None:
    tickers = [r[0] for r in _rows(embedded, "SELECT ticker FROM companies")]
    assert not set(tickers) & REAL_BIG_TICKERS
    assert all(len(t) == 4 and t.isalpha() and t.isupper() for t in tickers)
    ciks = [r[0] for r in _rows(embedded, "SELECT cik FROM companies")]
    assert all(len(c) == 10 and c.isdigit() for c in ciks)
    assert len(set(ciks)) == 20


def test_embedded_values_are_plausible(embedded: Path) -> None:
    def metric(name: str) -> dict[tuple[str, int], float]:
        rows = _rows(
            embedded,
            "SELECT ticker, fiscal_year, value_billions FROM annual_financials WHERE metric=?",
            (name,),
        )
        return {(t, y): v for t, y, v in rows}

    revenue, income, cash = metric("revenue"), metric("net_income"), metric("cash")
    assets, liabilities = metric("total_assets"), metric("total_liabilities")
    assert 3 <= max(revenue.values()) / 100 <= 8  # the largest firm: several hundred billion
    assert min(revenue.values()) < 5
    assert any(v < 0 for v in income.values())
    assert all(v > 0 for v in revenue.values())
    assert all(cash[k] < assets[k] for k in cash if k in assets)
    shared = [k for k in liabilities if k in assets]
    assert sum(liabilities[k] < assets[k] for k in shared) / len(shared) > 0.95
    # Banks: total assets far above revenue.
    sectors = dict(_rows(embedded, "SELECT ticker, sector FROM companies"))
    banks = [t for t, s in sectors.items() if s == "Financials"]
    assert any(assets[(t, 2015)] / revenue[(t, 2015)] > 10 for t in banks)
    # Whole USD millions, like 10-K tables.
    assert all(abs(v * 1000 - round(v * 1000)) < 1e-6 for v in revenue.values())


def test_embedded_meta(embedded: Path) -> None:
    meta = _meta(embedded)
    assert meta["kind"] == "embedded"
    assert meta["synthetic"] is True
    assert meta["source"] == "sec_edgar"
    assert meta["builder_version"] == 2
    assert meta["seed"] == 2026
    assert meta["options"] == {"companies": 20}
    assert "synthetic" in str(meta["notice"]).lower() and "not real" in str(meta["notice"]).lower()


def test_embedded_companies_option_keeps_first_companies_identical(tmp_path: Path, embedded: Path) -> None:
    small = tmp_path / "small.sqlite"
    sec.build_embedded(small, seed=2026, options={"companies": 5})
    tickers = [r[0] for r in _rows(small, "SELECT ticker FROM companies ORDER BY ticker")]
    assert len(tickers) == 5
    sql = "SELECT * FROM annual_financials WHERE ticker = ? ORDER BY fiscal_year, metric"
    for t in tickers:
        assert _rows(small, sql, (t,)) == _rows(embedded, sql, (t,))


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"rows": 5}, "rows"),
        ({"companies": 0}, "companies"),
        ({"companies": 21}, "companies"),
        ({"companies": "20"}, "companies"),
        ({"companies": True}, "companies"),
    ],
)
def test_embedded_rejects_bad_options(tmp_path: Path, options: dict, needle: str) -> None:
    with pytest.raises(SourceError, match=needle):
        sec.build_embedded(tmp_path / "x.sqlite", seed=1, options=options)
    assert not (tmp_path / "x.sqlite").exists()


# ---------------------------------------------------------------------------------------------
# real adapter on hand-made companyfacts payloads
# ---------------------------------------------------------------------------------------------


def _fact(
    end: str,
    val: float,
    filed: str,
    accn: str,
    start: str | None = None,
    form: str = "10-K",
    fp: str | None = "FY",
) -> dict:
    fact = {
        "end": end,
        "val": val,
        "accn": accn,
        "fy": int(filed[:4]),
        "fp": fp,
        "form": form,
        "filed": filed,
    }
    if start is not None:
        fact["start"] = start
    return fact


def _concept(*facts: dict) -> dict:
    return {"label": "x", "description": "x", "units": {"USD": list(facts)}}


A1, A2, A3 = "0000999999-24-000001", "0000999999-25-000001", "0000999999-25-000009"


def _payload() -> dict:
    usgaap = {
        "Revenues": _concept(
            _fact("2023-12-31", 100e9, "2024-02-01", A1, start="2023-01-01"),
            # A restatement in the next 10-K: the latest filing wins.
            _fact("2023-12-31", 101e9, "2025-02-01", A2, start="2023-01-01"),
            # A quarter that the 10-K also tags (fp FY): too short to be a fiscal year.
            _fact("2023-12-31", 30e9, "2024-02-01", A1, start="2023-10-01"),
            _fact("2024-12-31", 120e9, "2025-02-01", A2, start="2024-01-01"),
            # 10-Q facts never count.
            _fact("2024-06-30", 55e9, "2024-08-01", "q", start="2024-01-01", form="10-Q", fp="Q2"),
        ),
        # Second concept in the revenue order: fills only FY2022, loses FY2023 to `Revenues`.
        "RevenueFromContractWithCustomerExcludingAssessedTax": _concept(
            _fact("2022-12-31", 90e9, "2024-02-01", A1, start="2022-01-01"),
            _fact("2023-12-31", 95e9, "2024-02-01", A1, start="2023-01-01"),
        ),
        "NetIncomeLoss": _concept(
            _fact("2022-12-31", 9e9, "2024-02-01", A1, start="2021-12-25"),  # 53-week year: 371 days
            _fact("2023-12-31", -2.5e9, "2024-02-01", A1, start="2023-01-01"),
            _fact("2024-12-31", 7e9, "2025-02-01", A2, start="2023-11-15"),  # 412 days: not a year
        ),
        "Assets": _concept(
            _fact("2023-12-31", 500e9, "2024-02-01", A1),
            _fact("2024-12-31", 550e9, "2025-02-01", A2),
            # A quarterly balance in a 10-K note is not a fiscal-year-end balance.
            _fact("2024-06-30", 999e9, "2025-02-01", A2),
        ),
        "Liabilities": _concept(
            _fact("2023-12-31", 300e9, "2024-02-01", A1),
            # Same filing date, two accessions: the higher accession number wins.
            _fact("2024-12-31", 310e9, "2025-02-01", A2),
            _fact("2024-12-31", 320e9, "2025-02-01", A3),
        ),
        "Goodwill": _concept(_fact("2024-12-31", 1e9, "2025-02-01", A2)),
    }
    return {"cik": 999999, "entityName": "Testco Holdings", "facts": {"dei": {}, "us-gaap": usgaap}}


def _values(db: Path) -> dict[tuple[str, int, str], float]:
    rows = _rows(db, "SELECT ticker, fiscal_year, metric, value_billions FROM annual_financials")
    return {(t, y, m): v for t, y, m, v in rows}


def test_real_maps_a_handmade_payload(tmp_path: Path) -> None:
    folder = tmp_path / "facts"
    folder.mkdir()
    (folder / "TSTC_companyfacts.json").write_text(json.dumps(_payload()), encoding="utf-8")
    (folder / "README.md").write_text("not a payload", encoding="utf-8")
    db = tmp_path / "sec.sqlite"
    sec.build_real(db, folder)

    values = _values(db)
    assert values == pytest.approx(
        {
            ("TSTC", 2022, "revenue"): 90.0,
            ("TSTC", 2023, "revenue"): 101.0,
            ("TSTC", 2024, "revenue"): 120.0,
            ("TSTC", 2022, "net_income"): 9.0,
            ("TSTC", 2023, "net_income"): -2.5,
            ("TSTC", 2023, "total_assets"): 500.0,
            ("TSTC", 2024, "total_assets"): 550.0,
            ("TSTC", 2023, "total_liabilities"): 300.0,
            ("TSTC", 2024, "total_liabilities"): 320.0,
        },
        abs=1e-9,
    )
    assert _rows(db, "SELECT * FROM companies") == [("TSTC", "Testco Holdings", None, "12-31", "0000999999")]
    meta = _meta(db)
    assert meta["kind"] == "real"
    assert meta["synthetic"] is False
    assert meta["source"] == "sec_edgar"
    assert meta["inputs"] == ["TSTC_companyfacts.json"]
    assert meta["input_format"] == "sec-xbrl-companyfacts"
    assert meta["rows_per_ticker"] == {"TSTC": 9}
    missing = meta["missing_concepts"]
    assert isinstance(missing, dict) and list(missing["TSTC"]) == ["cash"]
    assert "CashAndCashEquivalentsAtCarryingValue" in missing["TSTC"]["cash"]


def test_real_reads_gzip_and_python_repr_and_aliases_goog(tmp_path: Path) -> None:
    folder = tmp_path / "facts"
    folder.mkdir()
    with gzip.open(folder / "GOOG_companyfacts.json.gz", "wt", encoding="utf-8") as fh:
        json.dump(_payload(), fh)
    (folder / "TSLA_tsla_facts.pyrepr.txt").write_text(repr(_payload()), encoding="utf-8")
    db = tmp_path / "sec.sqlite"
    sec.build_real(db, folder)
    assert [r[0] for r in _rows(db, "SELECT ticker FROM companies ORDER BY 1")] == ["GOOGL", "TSLA"]
    assert _values(db)[("GOOGL", 2023, "revenue")] == pytest.approx(101.0)
    assert _values(db)[("TSLA", 2024, "total_liabilities")] == pytest.approx(320.0)


def test_real_alias_yields_to_exact_ticker(tmp_path: Path) -> None:
    folder = tmp_path / "facts"
    folder.mkdir()
    (folder / "GOOG.json").write_text(json.dumps(_payload()), encoding="utf-8")
    (folder / "GOOGL.json").write_text(json.dumps(_payload()), encoding="utf-8")
    db = tmp_path / "sec.sqlite"
    sec.build_real(db, folder)
    meta = _meta(db)
    assert meta["inputs"] == ["GOOGL.json"]
    assert "GOOG.json" in str(meta["skipped_inputs"])


def test_fiscal_year_rule() -> None:
    assert sec.fiscal_year_of(dt.date(2025, 1, 26)) == 2025  # NVIDIA: FY2025 ends late January
    assert sec.fiscal_year_of(dt.date(2024, 9, 28)) == 2024
    assert sec.fiscal_year_of(dt.date(2021, 1, 2)) == 2020  # 52/53-week "fiscal 2020"


def _expect_error(tmp_path: Path, name: str, content: str | bytes, *needles: str) -> None:
    folder = tmp_path / "facts"
    folder.mkdir(exist_ok=True)
    target = folder / name
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")
    with pytest.raises(SourceError) as info:
        sec.build_real(tmp_path / "sec.sqlite", folder)
    for needle in (name, *needles):
        assert needle in str(info.value)
    assert not (tmp_path / "sec.sqlite").exists()


def test_real_rejects_payload_without_facts(tmp_path: Path) -> None:
    _expect_error(tmp_path, "AAA_x.json", json.dumps({"cik": 1, "entityName": "A"}), "'facts'")


def test_real_rejects_payload_without_us_gaap(tmp_path: Path) -> None:
    _expect_error(
        tmp_path, "AAA_x.json", json.dumps({"cik": 1, "entityName": "A", "facts": {"dei": {}}}), "us-gaap"
    )


def test_real_rejects_payload_without_entity_name(tmp_path: Path) -> None:
    payload = _payload()
    del payload["entityName"]
    _expect_error(tmp_path, "AAA_x.json", json.dumps(payload), "entityName")


def test_real_rejects_fact_without_filed(tmp_path: Path) -> None:
    payload = _payload()
    del payload["facts"]["us-gaap"]["Assets"]["units"]["USD"][0]["filed"]
    _expect_error(tmp_path, "AAA_x.json", json.dumps(payload), "Assets", "filed")


def test_real_rejects_unparseable_files(tmp_path: Path) -> None:
    _expect_error(tmp_path, "AAA_x.json", "{not json", "JSON")


def test_real_rejects_broken_gzip(tmp_path: Path) -> None:
    _expect_error(tmp_path, "AAA_x.json.gz", b"\x1f\x8b not really gzip")


def test_real_rejects_empty_or_missing_folder(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceError, match="no companyfacts payloads"):
        sec.build_real(tmp_path / "sec.sqlite", empty)
    with pytest.raises(SourceError, match="does not exist"):
        sec.build_real(tmp_path / "sec.sqlite", tmp_path / "nowhere")


def test_real_rejects_two_files_for_one_ticker(tmp_path: Path) -> None:
    folder = tmp_path / "facts"
    folder.mkdir()
    (folder / "AAA_one.json").write_text(json.dumps(_payload()), encoding="utf-8")
    (folder / "AAA_two.json").write_text(json.dumps(_payload()), encoding="utf-8")
    with pytest.raises(SourceError, match="AAA"):
        sec.build_real(tmp_path / "sec.sqlite", folder)


def test_real_rejects_payload_with_no_annual_values(tmp_path: Path) -> None:
    payload = {
        "cik": 1,
        "entityName": "A",
        "facts": {
            "us-gaap": {"Assets": _concept(_fact("2024-06-30", 1e9, "2024-08-01", "q", form="10-Q", fp="Q2"))}
        },
    }
    folder = tmp_path / "facts"
    folder.mkdir()
    (folder / "AAA_x.json").write_text(json.dumps(payload), encoding="utf-8")
    with pytest.raises(SourceError, match="no annual 10-K value"):
        sec.build_real(tmp_path / "sec.sqlite", folder)


def test_real_accepts_a_single_payload_file(tmp_path: Path) -> None:
    payload_file = tmp_path / "BRK-B.json"
    payload_file.write_text(json.dumps(_payload()), encoding="utf-8")
    db = tmp_path / "sec.sqlite"
    sec.build_real(db, payload_file)
    assert _rows(db, "SELECT ticker FROM companies") == [("BRK-B",)]


def test_real_rejects_file_name_without_ticker(tmp_path: Path) -> None:
    _expect_error(tmp_path, "_companyfacts.json", json.dumps(_payload()), "ticker")
