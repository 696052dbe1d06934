"""SEC adapter on real companyfacts payloads (six tickers; skipped when absent)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memsql_assets.lib.sources import sec
from memsql_assets.lib.sources.sqlite_db import read_meta

pytestmark = pytest.mark.realdata

TICKERS = ["AAPL", "GOOGL", "META", "MSFT", "NVDA", "TSLA"]

# Rows per (ticker, metric) that the rule in docs/sec_edgar_mapping.md derives from these exact
# files. They equal PROVENANCE.md's table except META assets/liabilities (15, not 18): the table
# counted three quarterly balances that META's 2016 10-K tags with fp FY, which are not year ends.
EXPECTED_COUNTS = {
    "AAPL": {"revenue": 19, "net_income": 19, "cash": 20, "total_assets": 18, "total_liabilities": 18},
    "MSFT": {"revenue": 18, "net_income": 18, "cash": 19, "total_assets": 17, "total_liabilities": 16},
    "GOOGL": {"revenue": 13, "net_income": 13, "cash": 14, "total_assets": 12, "total_liabilities": 11},
    "NVDA": {"revenue": 19, "net_income": 19, "cash": 20, "total_assets": 18, "total_liabilities": 12},
    "META": {"revenue": 16, "net_income": 16, "cash": 17, "total_assets": 15, "total_liabilities": 15},
    "TSLA": {"revenue": 13, "net_income": 13, "cash": 14, "total_assets": 12, "total_liabilities": 12},
}

SPOT_CHECKS = [
    ("AAPL", 2024, "revenue", 391.035),
    ("AAPL", 2024, "net_income", 93.736),
    ("AAPL", 2024, "total_assets", 364.98),
    ("AAPL", 2024, "total_liabilities", 308.03),
    ("AAPL", 2024, "cash", 29.943),
    ("MSFT", 2025, "revenue", 281.724),
    ("MSFT", 2025, "net_income", 101.832),
    ("NVDA", 2025, "revenue", 130.497),
    ("NVDA", 2025, "net_income", 72.88),
    ("META", 2024, "revenue", 164.501),
    ("GOOGL", 2024, "net_income", 100.118),
    ("TSLA", 2021, "revenue", 53.823),
]


@pytest.fixture(scope="module")
def real_db(tmp_path_factory: pytest.TempPathFactory, shared_data) -> Path:
    path = tmp_path_factory.mktemp("sec_real") / "sec_edgar.sqlite"
    sec.build_real(path, shared_data("sec_edgar", "companyfacts"))
    return path


def _query(db: Path, sql: str, args: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def test_six_tickers(real_db: Path) -> None:
    rows = _query(real_db, "SELECT ticker, company_name, cik FROM companies ORDER BY ticker")
    assert [r[0] for r in rows] == TICKERS
    names = {t: n for t, n, _ in rows}
    assert names["AAPL"] == "Apple Inc."
    assert names["GOOGL"] == "ALPHABET INC."
    assert {t: c for t, _, c in rows}["AAPL"] == "0000320193"


@pytest.mark.parametrize(("ticker", "year", "metric", "expected"), SPOT_CHECKS)
def test_spot_checks(real_db: Path, ticker: str, year: int, metric: str, expected: float) -> None:
    rows = _query(
        real_db,
        "SELECT value_billions FROM annual_financials WHERE ticker=? AND fiscal_year=? AND metric=?",
        (ticker, year, metric),
    )
    assert len(rows) == 1
    assert rows[0][0] == pytest.approx(expected, abs=1e-6)


def test_counts_per_ticker_and_metric(real_db: Path) -> None:
    rows = _query(real_db, "SELECT ticker, metric, COUNT(*) FROM annual_financials GROUP BY 1, 2")
    counts: dict[str, dict[str, int]] = {}
    for ticker, metric, n in rows:
        counts.setdefault(ticker, {})[metric] = n
    assert counts == EXPECTED_COUNTS
    assert sum(n for _, _, n in rows) == 476
    assert min(n for _, _, n in rows) >= 2  # every (ticker, metric) pair has >= 2 fiscal years


def test_nvidia_fiscal_year_is_named_by_its_end(real_db: Path) -> None:
    years = [
        r[0]
        for r in _query(
            real_db,
            "SELECT fiscal_year FROM annual_financials WHERE ticker='NVDA' AND metric='revenue' ORDER BY 1",
        )
    ]
    assert years[-1] == 2026  # the year ended 2026-01-25
    assert years == list(range(2008, 2027))


def test_meta(real_db: Path) -> None:
    conn = sqlite3.connect(real_db)
    try:
        meta = read_meta(conn)
    finally:
        conn.close()
    assert meta["kind"] == "real"
    assert meta["synthetic"] is False
    assert meta["source"] == "sec_edgar"
    assert meta["input_format"] == "sec-xbrl-companyfacts"
    assert meta["inputs"] == [
        "AAPL_companyfacts.json.gz",
        "GOOG_companyfacts.json.gz",
        "META_CIK0001326801.json",
        "MSFT_companyfacts.json.gz",
        "NVDA_companyfacts.json.gz",
        "TSLA_tsla_facts.pyrepr.txt",
    ]
    assert meta["rows_per_ticker"] == {t: sum(m.values()) for t, m in EXPECTED_COUNTS.items()}
    assert meta["missing_concepts"] == {}
