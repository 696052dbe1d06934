"""SEC EDGAR annual financials: `companies` + `annual_financials` (source `sec_edgar`, prefix SEC).

The benchmark asks questions such as "Show Apple revenue for 2022 and 2023" against two tables:
`companies` (one row per ticker) and `annual_financials` (ticker, fiscal_year, metric,
value_billions) with five metrics spelled exactly `revenue`, `net_income`, `cash`,
`total_assets` and `total_liabilities`; `value_billions` is USD / 1e9 at full precision (the
ground-truth SQL rounds).

Two ways to build it:

* `build_real` reads a folder of SEC XBRL `companyfacts` payloads (the JSON served by
  data.sec.gov/api/xbrl/companyfacts, optionally gzipped) and derives one value per
  (ticker, metric, fiscal year) from 10-K filings. The exact rule lives in
  docs/sec_edgar_mapping.md; in short: us-gaap USD facts from 10-K / 10-K/A with fp 'FY',
  flows must span 330-380 days, balances must fall on a fiscal-year-end date, the fiscal year is
  the calendar year of the period end (a period ending 1-7 January belongs to the year before),
  the latest filing wins, and among several concepts for one metric the first in
  `CONCEPTS[metric]` that has a value for that year wins.

* `build_embedded` writes 20 fictional companies (invented names and four-letter tickers that
  are not real listings) with fiscal years 2009-2026. Realism choices:
  - scales and shapes follow the kinds of firms the paper's 20 tickers cover: a software major
    growing from ~60 B to ~250 B revenue, a chip designer that explodes late, hypermarket and
    warehouse-club retailers with thin margins and 300-600 B revenue, banks whose total assets
    are ~20x revenue and whose liabilities are ~90 % of assets, an oil major with the 2015/16 and
    2020 slumps (negative net income), a pharma with a patent cliff, an aerospace maker whose
    liabilities exceed its assets after years of losses;
  - every series is a noisy trend (random-walk growth, margins drifting between two levels, asset
    base blending last year's level with a revenue-driven target) plus dated shocks, and moves both
    ways: in about DOWN_YEAR_SHARE of the years a company contracts (revenue falls by part of its
    usual growth, and the asset base with it), so that "which year was higher?" is the older year
    about as often as the newer one and no answer follows from "companies grow";
  - values are rounded to whole USD millions, as 10-K tables are;
  - realistic gaps: three companies listed later (first 10-K for FY2010, FY2012, FY2016), three
    companies tag total liabilities only from a later year (as NVIDIA and Microsoft did in their
    real filings), a utility's cash starts in FY2011, and the synthetic snapshot is dated
    2026-11-30, so FY2026 exists only for companies whose fiscal year ends January-September
    (ended and filed by then); December year-end companies stop at FY2025.
  The paper states 1,897 annual records for 20 tickers over FY2009-2026, but 20 x 18 x 5 = 1,800
  is the maximum with unique (ticker, fiscal_year, metric) keys, so that count is unreachable;
  the gaps above give 1,668 rows for 20 companies for every seed (the gaps are fixed, only the
  values depend on the seed). Each (ticker, metric) pair has at least 11 fiscal years.
"""

from __future__ import annotations

import ast
import datetime as dt
import gzip
import json
import math
import random
import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources.sqlite_db import new_database, require_tables, write_meta

SOURCE = "sec_edgar"
BUILDER_VERSION = 2
# Share of a company's years in which it contracts (see the module docstring).
DOWN_YEAR_SHARE = 0.45

METRICS: tuple[str, ...] = ("revenue", "net_income", "cash", "total_assets", "total_liabilities")
FLOW_METRICS = frozenset({"revenue", "net_income"})

# Order matters: for one fiscal year the first concept with a value wins. `Revenues` first because
# it is the total (incl. non-contract revenue) where a filer reports it; the ASC 606 concept took
# over from SalesRevenueNet in 2018.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "revenue": (
        "Revenues",
        "RevenueFromContractWithCustomerExcludingAssessedTax",
        "SalesRevenueNet",
        "RevenueFromContractWithCustomerIncludingAssessedTax",
        "SalesRevenueGoodsNet",
    ),
    "net_income": ("NetIncomeLoss",),
    "cash": (
        "CashAndCashEquivalentsAtCarryingValue",
        "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
    ),
    "total_assets": ("Assets",),
    "total_liabilities": ("Liabilities",),
}

REQUIRED: dict[str, list[str]] = {
    "companies": ["ticker", "company_name", "sector", "fiscal_year_end", "cik"],
    "annual_financials": ["ticker", "fiscal_year", "metric", "value_billions"],
}

SCHEMA = (
    "CREATE TABLE companies (ticker TEXT PRIMARY KEY, company_name TEXT NOT NULL, sector TEXT, "
    "fiscal_year_end TEXT, cik TEXT)",
    "CREATE TABLE annual_financials (ticker TEXT NOT NULL, fiscal_year INTEGER NOT NULL, "
    "metric TEXT NOT NULL, value_billions REAL NOT NULL, PRIMARY KEY (ticker, fiscal_year, metric))",
)

ANNUAL_FORMS = frozenset({"10-K", "10-K/A"})
FLOW_MIN_DAYS, FLOW_MAX_DAYS = 330, 380
# 52/53-week years drift up to a week around their nominal year end.
YEAR_END_TOLERANCE_DAYS = 7

PAYLOAD_SUFFIXES = (".json.gz", ".json", ".pyrepr.txt")
INPUT_FORMAT = "sec-xbrl-companyfacts"
# The benchmark names Alphabet GOOGL; payload files are often saved under GOOG.
TICKER_ALIASES = {"GOOG": "GOOGL"}
# companyfacts carries no industry code; sectors (GICS) of the tickers the paper names.
KNOWN_SECTORS = {
    "AAPL": "Information Technology",
    "MSFT": "Information Technology",
    "NVDA": "Information Technology",
    "GOOGL": "Communication Services",
    "META": "Communication Services",
    "AMZN": "Consumer Discretionary",
    "TSLA": "Consumer Discretionary",
    "JPM": "Financials",
    "V": "Financials",
    "XOM": "Energy",
}


def _create_schema(conn: sqlite3.Connection) -> None:
    for statement in SCHEMA:
        conn.execute(statement)


# --------------------------------------------------------------------------------------------
# Embedded builder
# --------------------------------------------------------------------------------------------

FIRST_FY, LAST_FY = 2009, 2026
SNAPSHOT_DATE = "2026-11-30"
# A fiscal year ending January-September 2026 has its 10-K filed by the snapshot date.
LAST_REPORTED_MONTH_OF_FY2026 = 9
DEFAULT_COMPANIES = 20
ALLOWED_OPTIONS = frozenset({"companies"})
NOTICE = (
    "SYNTHETIC DATA: fictional companies, tickers and values generated by memsql's embedded "
    "builder; they are not real SEC filings and describe no real company."
)


@dataclass(frozen=True)
class _Profile:
    ticker: str
    name: str
    sector: str
    fye: str  # "MM-DD"
    cik: str
    revenue0: float  # revenue in the first fiscal year, USD billions
    growth: float  # mean yearly revenue growth
    volatility: float  # sd of yearly growth
    margin_first: float  # net margin drifts linearly from first to last year
    margin_last: float
    assets_to_revenue: float
    cash_share: float  # cash / total assets
    liab_share: float  # total liabilities / total assets
    first_fy: int = FIRST_FY
    # year -> (revenue factor, margin change, liabilities-share change)
    shocks: Mapping[int, tuple[float, float, float]] = field(default_factory=dict)
    # metric -> first fiscal year it is reported
    metric_from: Mapping[str, int] = field(default_factory=dict)

    @property
    def last_fy(self) -> int:
        return LAST_FY if int(self.fye[:2]) <= LAST_REPORTED_MONTH_OF_FY2026 else LAST_FY - 1


# Tickers were made up so as not to match any listing we know of; the unit tests check them
# against the large real tickers. CIKs are above the range the SEC has assigned so far.
# fmt: off
_PROFILES: tuple[_Profile, ...] = (
    _Profile("QRVX", "Quorvex Systems Corp.", "Information Technology", "06-30", "0009104417",
             58.0, 0.088, 0.035, 0.25, 0.36, 1.45, 0.12, 0.52,
             shocks={2016: (0.97, -0.09, 0.0), 2018: (1.0, -0.12, 0.03), 2023: (0.99, -0.02, 0.0)},
             metric_from={"total_liabilities": 2012}),
    _Profile("HZVM", "Halvern Microdevices Inc.", "Information Technology", "01-31", "0009104523",
             3.6, 0.10, 0.12, 0.09, 0.52, 1.7, 0.22, 0.30,
             shocks={2010: (0.82, -0.14, 0.0), 2020: (0.86, -0.07, 0.02), 2024: (2.05, 0.16, -0.04),
                     2025: (2.1, 0.08, 0.0), 2026: (1.5, 0.02, 0.0)},
             metric_from={"total_liabilities": 2015}),
    _Profile("BQMB", "Brenmoor Bancorp", "Financials", "12-31", "0009104689",
             96.0, 0.03, 0.04, 0.11, 0.27, 22.0, 0.15, 0.905,
             shocks={2009: (1.0, -0.07, 0.0), 2010: (0.95, -0.02, 0.0), 2020: (1.02, -0.06, 0.01),
                     2023: (1.12, 0.03, 0.0)}),
    _Profile("KQRE", "Kestrelmark Energy Corp.", "Energy", "12-31", "0009104751",
             285.0, 0.025, 0.10, 0.085, 0.095, 1.15, 0.04, 0.50,
             shocks={2009: (0.72, -0.04, 0.0), 2015: (0.63, -0.07, 0.02), 2016: (0.86, -0.065, 0.02),
                     2020: (0.66, -0.17, 0.04), 2021: (1.52, 0.09, -0.03), 2022: (1.42, 0.06, -0.03),
                     2023: (0.82, -0.03, 0.0)}),
    _Profile("MFQS", "Marlowe & Finch Stores Inc.", "Consumer Staples", "01-31", "0009104802",
             372.0, 0.027, 0.015, 0.034, 0.027, 0.45, 0.05, 0.61,
             shocks={2019: (1.0, -0.012, 0.0), 2021: (1.07, 0.0, 0.01), 2023: (1.0, -0.01, 0.0)}),
    _Profile("VXDH", "Veridane Health Group", "Health Care", "12-31", "0009104868",
             84.0, 0.088, 0.025, 0.048, 0.056, 0.58, 0.12, 0.62,
             shocks={2024: (1.0, -0.022, 0.01), 2025: (1.0, -0.018, 0.0)}),
    _Profile("PQXP", "Paxium Payments Inc.", "Financials", "09-30", "0009104934",
             6.9, 0.105, 0.05, 0.28, 0.53, 4.6, 0.09, 0.44,
             shocks={2012: (1.0, -0.30, 0.0), 2020: (0.95, -0.03, 0.02), 2016: (1.0, -0.06, 0.05)}),
    _Profile("SZLV", "Solvane Motors Inc.", "Consumer Discretionary", "12-31", "0009105011",
             0.21, 0.27, 0.10, -0.45, 0.05, 2.6, 0.22, 0.72, first_fy=2010,
             shocks={2013: (4.1, 0.25, 0.0), 2017: (1.6, -0.05, 0.04), 2018: (1.8, 0.04, 0.0),
                     2020: (1.0, 0.06, -0.1), 2021: (1.0, 0.12, 0.0), 2022: (1.0, 0.15, 0.0),
                     2023: (1.0, 0.08, 0.0), 2024: (0.86, 0.03, 0.0)}),
    _Profile("OQBL", "Orbelle Social Inc.", "Communication Services", "12-31", "0009105077",
             5.1, 0.23, 0.06, 0.01, 0.34, 2.3, 0.11, 0.22, first_fy=2012,
             shocks={2013: (1.0, 0.12, 0.0), 2022: (0.93, -0.12, 0.05)}),
    _Profile("CQVP", "Corvantis Pharmaceuticals Inc.", "Health Care", "12-31", "0009105143",
             44.0, 0.03, 0.05, 0.21, 0.20, 2.4, 0.08, 0.55,
             shocks={2012: (0.88, -0.05, 0.0), 2017: (1.0, -0.20, 0.03), 2021: (1.38, 0.06, 0.0),
                     2022: (1.1, 0.02, 0.0), 2023: (0.6, -0.16, 0.02)}),
    _Profile("TZWL", "Trelawny Industrial Holdings", "Industrials", "09-30", "0009105209",
             112.0, 0.016, 0.04, 0.058, 0.072, 1.7, 0.07, 0.78,
             shocks={2009: (0.86, -0.035, 0.0), 2020: (0.83, -0.05, 0.02), 2021: (1.1, 0.02, 0.0)},
             metric_from={"total_liabilities": 2015}),
    _Profile("NQMB", "Nimbrook Cloud Inc.", "Information Technology", "01-31", "0009105275",
             1.9, 0.30, 0.05, -0.32, 0.06, 2.9, 0.25, 0.55, first_fy=2016,
             shocks={2021: (1.1, -0.05, 0.0), 2023: (0.98, -0.04, 0.02)}),
    _Profile("AQGV", "Ashgrove Consumer Brands Co.", "Consumer Staples", "06-30", "0009105341",
             79.0, 0.012, 0.03, 0.135, 0.16, 1.6, 0.06, 0.60,
             shocks={2012: (1.0, -0.05, 0.0), 2015: (0.9, -0.02, 0.0), 2019: (1.0, -0.09, 0.02)}),
    _Profile("RXVM", "Ravensmoor Rail & Logistics Corp.", "Industrials", "12-31", "0009105407",
             14.2, 0.04, 0.05, 0.14, 0.27, 3.6, 0.03, 0.62,
             shocks={2009: (0.8, -0.03, 0.0), 2016: (0.92, -0.01, 0.0), 2017: (1.0, 0.2, -0.04),
                     2020: (0.88, -0.02, 0.0)}),
    _Profile("CXDW", "Calderwyn Utilities Inc.", "Utilities", "12-31", "0009105473",
             15.3, 0.025, 0.05, 0.085, 0.10, 4.2, 0.012, 0.72,
             shocks={2022: (1.18, -0.02, 0.0), 2023: (0.92, 0.0, 0.0)},
             metric_from={"cash": 2011}),
    _Profile("WQYC", "Westquay Capital Group Inc.", "Financials", "12-31", "0009105539",
             45.0, 0.03, 0.08, 0.19, 0.27, 19.0, 0.12, 0.92,
             shocks={2011: (0.8, -0.08, 0.0), 2016: (0.94, -0.02, 0.0), 2021: (1.3, 0.08, 0.0),
                     2022: (0.8, -0.06, 0.0)}),
    _Profile("ZPXA", "Zephyrine Aerospace Co.", "Industrials", "12-31", "0009105605",
             68.0, 0.05, 0.03, 0.055, 0.06, 1.3, 0.08, 0.93,
             shocks={2019: (0.76, -0.085, 0.04), 2020: (0.75, -0.22, 0.06), 2021: (1.0, -0.04, 0.01),
                     2024: (0.86, -0.14, 0.03)}),
    _Profile("OXVT", "Oakvane Telecom Inc.", "Communication Services", "12-31", "0009105671",
             108.0, 0.012, 0.02, 0.08, 0.10, 2.4, 0.03, 0.66,
             shocks={2012: (1.0, -0.07, 0.0), 2017: (1.0, 0.12, -0.03), 2022: (1.0, -0.13, 0.03)}),
    _Profile("GQVM", "Gravelin Materials Corp.", "Materials", "12-31", "0009105737",
             45.0, 0.02, 0.09, 0.06, 0.07, 1.5, 0.06, 0.55,
             shocks={2009: (0.75, -0.07, 0.0), 2015: (0.82, -0.05, 0.0), 2019: (0.9, -0.07, 0.02),
                     2021: (1.3, 0.04, 0.0)}),
    _Profile("LQWC", "Larkwell Wholesale Club Inc.", "Consumer Staples", "08-31", "0009105803",
             71.0, 0.075, 0.02, 0.019, 0.029, 0.33, 0.18, 0.66,
             shocks={2021: (1.12, 0.0, 0.0)}),
)
# fmt: on


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def _company_series(profile: _Profile, seed: int) -> list[tuple[int, str, float]]:
    """(fiscal_year, metric, value_billions) rows for one company, in year then metric order."""
    # One stream per company: the first N companies come out the same whatever `companies` is.
    rng = random.Random(f"{SOURCE}:{seed}:{profile.ticker}")
    years = list(range(profile.first_fy, profile.last_fy + 1))
    rows: list[tuple[int, str, float]] = []
    revenue = profile.revenue0 * math.exp(rng.gauss(0.0, 0.03))
    asset_ratio = profile.assets_to_revenue * math.exp(rng.gauss(0.0, 0.05))
    cash_share = profile.cash_share
    liab_share = profile.liab_share
    assets = revenue * asset_ratio
    for i, year in enumerate(years):
        rev_factor, margin_delta, liab_delta = profile.shocks.get(year, (1.0, 0.0, 0.0))
        down = i > 0 and rng.random() < DOWN_YEAR_SHARE
        if i > 0:
            growth = max(-0.5, profile.growth + rng.gauss(0.0, profile.volatility))
            if down:  # a contraction of about half the usual growth (a mild recession year)
                growth = -0.5 * abs(growth) - abs(rng.gauss(0.0, 0.01))
            revenue *= (1.0 + growth) * rev_factor
        frac = i / (len(years) - 1)
        margin = (
            profile.margin_first
            + (profile.margin_last - profile.margin_first) * frac
            # Thin-margin retailers barely move; software and energy margins swing by points.
            + rng.gauss(0.0, 0.004 + 0.1 * abs(profile.margin_first + profile.margin_last) / 2)
            + margin_delta
        )
        # Balance sheets move slower than income statements: blend last year's assets with the
        # level revenue would imply, so a revenue dip shows only partly in total assets.
        asset_ratio = _clamp(
            asset_ratio * math.exp(rng.gauss(0.0, 0.035)),
            0.7 * profile.assets_to_revenue,
            1.4 * profile.assets_to_revenue,
        )
        if i > 0:
            drift = -0.015 if down else 0.012  # a contracting company also shrinks its balance sheet
            assets = assets**0.6 * (revenue * asset_ratio) ** 0.4 * math.exp(rng.gauss(drift, 0.02))
        cash_share = _clamp(
            cash_share * math.exp(rng.gauss(0.0, 0.12)),
            0.4 * profile.cash_share,
            min(0.45, 2.0 * profile.cash_share),
        )
        liab_share = _clamp(
            liab_share + 0.25 * (profile.liab_share - liab_share) + rng.gauss(0.0, 0.012) + liab_delta,
            0.12,
            1.12,
        )
        values = {
            "revenue": revenue,
            "net_income": revenue * margin,
            "cash": assets * cash_share,
            "total_assets": assets,
            "total_liabilities": assets * liab_share,
        }
        for metric in METRICS:
            if year < profile.metric_from.get(metric, profile.first_fy):
                continue
            # 10-K tables are in USD millions.
            rows.append((year, metric, round(values[metric] * 1000.0) / 1000.0))
    return rows


def _embedded_options(options: Mapping[str, Any]) -> dict[str, int]:
    unknown = sorted(set(options) - ALLOWED_OPTIONS)
    if unknown:
        raise SourceError(
            f"sources option {SOURCE}.options.{unknown[0]}",
            f"unknown option '{unknown[0]}'",
            f"only {sorted(ALLOWED_OPTIONS)}",
        )
    companies = options.get("companies", DEFAULT_COMPANIES)
    if isinstance(companies, bool) or not isinstance(companies, int) or not 1 <= companies <= len(_PROFILES):
        raise SourceError(
            f"sources option {SOURCE}.options.companies",
            f"got {companies!r}",
            f"an integer from 1 to {len(_PROFILES)}",
        )
    return {"companies": companies}


def build_embedded(target: Path, *, seed: int, options: Mapping[str, Any]) -> None:
    """Write the synthetic SEC database (fictional companies) to `target`, deterministically."""
    used = _embedded_options(options)
    profiles = _PROFILES[: used["companies"]]
    company_rows = [(p.ticker, p.name, p.sector, p.fye, p.cik) for p in profiles]
    fin_rows: list[tuple[str, int, str, float]] = []
    per_ticker: dict[str, int] = {}
    for profile in profiles:
        series = _company_series(profile, seed)
        per_ticker[profile.ticker] = len(series)
        fin_rows.extend((profile.ticker, year, metric, value) for year, metric, value in series)
    with new_database(target) as conn:
        _create_schema(conn)
        conn.executemany("INSERT INTO companies VALUES (?, ?, ?, ?, ?)", company_rows)
        conn.executemany("INSERT INTO annual_financials VALUES (?, ?, ?, ?)", fin_rows)
        write_meta(
            conn,
            {
                "kind": "embedded",
                "synthetic": True,
                "source": SOURCE,
                "builder_version": BUILDER_VERSION,
                "seed": seed,
                "options": used,
                "notice": NOTICE,
                "snapshot_date": SNAPSHOT_DATE,
                "fiscal_years": [FIRST_FY, LAST_FY],
                "rows_per_ticker": per_ticker,
            },
        )


# --------------------------------------------------------------------------------------------
# Real adapter: SEC XBRL companyfacts payloads
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fact:
    fiscal_year: int
    end: dt.date
    filed: str
    accn: str
    start: str
    value: float

    @property
    def rank(self) -> tuple[str, str, dt.date, str, float]:
        # Latest filing wins; the accession number breaks ties between same-day filings; the rest
        # only makes the choice independent of the order facts appear in the payload.
        return (self.filed, self.accn, self.end, self.start, self.value)


@dataclass
class _Company:
    ticker: str
    name: str
    cik: str | None
    fiscal_year_end: str | None
    values: dict[str, dict[int, tuple[float, str]]]  # metric -> fiscal year -> (USD, concept)
    missing: dict[str, str]
    latest_filed: str | None


def fiscal_year_of(end: dt.date) -> int:
    """The fiscal year a period ending on `end` belongs to (see docs/sec_edgar_mapping.md)."""
    # A 52/53-week year that ends in the first days of January is named after the year before
    # (e.g. a "fiscal 2020" ending 2021-01-02); late-January year ends (NVIDIA, retailers) keep the
    # end year, which is how those companies name them.
    if end.month == 1 and end.day <= YEAR_END_TOLERANCE_DAYS:
        return end.year - 1
    return end.year


def _file_ticker(path: Path) -> str:
    """`AAPL_companyfacts.json.gz` -> AAPL; `BRK-B.json` -> BRK-B (aliases not yet applied)."""
    name = path.name
    stem = name.split("_", 1)[0] if "_" in name else name.split(".", 1)[0]
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9.\-]{0,9}", stem):
        raise SourceError(
            path,
            f"file name does not start with a ticker (got {stem!r})",
            "<TICKER>_<anything>.json[.gz] or <TICKER>.json",
        )
    return stem.upper()


def _payload_files(input_path: Path) -> list[Path]:
    if not input_path.exists():
        raise SourceError(input_path, "does not exist", "a folder of SEC companyfacts payloads")
    if input_path.is_file():
        candidates = [input_path]
    else:
        candidates = sorted(p for p in input_path.iterdir() if p.is_file())
    files = [p for p in candidates if p.name.lower().endswith(PAYLOAD_SUFFIXES)]
    if not files:
        raise SourceError(
            input_path,
            "no companyfacts payloads found",
            f"files named <TICKER>_*.json / .json.gz / .pyrepr.txt ({', '.join(PAYLOAD_SUFFIXES)})",
        )
    return files


def _load_payload(path: Path) -> Any:
    name = path.name.lower()
    try:
        if name.endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                return json.loads(fh.read().decode("utf-8"))
        text = path.read_text(encoding="utf-8")
        if name.endswith(".pyrepr.txt"):
            # Some public copies were saved with Python's repr (single quotes), not as JSON.
            return ast.literal_eval(text)
        return json.loads(text)
    except (OSError, EOFError, UnicodeDecodeError, ValueError, SyntaxError, MemoryError) as exc:
        kind = "Python dict literal" if name.endswith(".pyrepr.txt") else "JSON"
        raise SourceError(
            path, f"cannot be parsed: {type(exc).__name__}: {exc}", f"a companyfacts {kind}"
        ) from exc


def _require_payload_fields(path: Path, payload: Any) -> tuple[str, str | None, dict[str, Any]]:
    expected = "an SEC XBRL companyfacts payload {cik, entityName, facts: {us-gaap: {...}}}"
    if not isinstance(payload, dict):
        raise SourceError(path, f"top level is a {type(payload).__name__}, not an object", expected)
    facts = payload.get("facts")
    if not isinstance(facts, dict):
        raise SourceError(path, "field 'facts' is missing or not an object", expected)
    usgaap = facts.get("us-gaap")
    if not isinstance(usgaap, dict):
        raise SourceError(path, "field 'facts.us-gaap' is missing or not an object", expected)
    name = payload.get("entityName")
    if not isinstance(name, str) or not name.strip():
        raise SourceError(path, "field 'entityName' is missing or empty", expected)
    raw_cik = payload.get("cik")
    cik: str | None = None
    if raw_cik is not None:
        if isinstance(raw_cik, bool) or not re.fullmatch(r"\d{1,10}", str(raw_cik).strip()):
            raise SourceError(path, f"field 'cik' is {raw_cik!r}", "a number of at most 10 digits")
        cik = str(raw_cik).strip().zfill(10)
    return name.strip(), cik, usgaap


def _parse_date(path: Path, concept: str, key: str, value: Any) -> dt.date:
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError as exc:
        raise SourceError(
            path, f"concept '{concept}': field '{key}' is {value!r}", "a YYYY-MM-DD date"
        ) from exc


def _annual_fact_list(usgaap: Mapping[str, Any], concept: str) -> list[Any]:
    entry = usgaap.get(concept)
    if not isinstance(entry, dict) or not isinstance(entry.get("units"), dict):
        return []
    facts = entry["units"].get("USD")
    return facts if isinstance(facts, list) else []


def _is_annual_filing(fact: Any) -> bool:
    return isinstance(fact, dict) and fact.get("form") in ANNUAL_FORMS and fact.get("fp") == "FY"


def _year_end_days(usgaap: Mapping[str, Any]) -> tuple[list[int], dt.date | None]:
    """Day-of-year of every annual period end the filer reported, and the latest such end.

    Taken from every us-gaap concept (any unit), so balances of years whose income statement
    used other concepts still find their year end.
    """
    days: set[int] = set()
    latest: dt.date | None = None
    for entry in usgaap.values():
        units = entry.get("units") if isinstance(entry, dict) else None
        if not isinstance(units, dict):
            continue
        for facts in units.values():
            if not isinstance(facts, list):
                continue
            for fact in facts:
                if not _is_annual_filing(fact) or "start" not in fact or "end" not in fact:
                    continue
                try:
                    start = dt.date.fromisoformat(str(fact["start"]))
                    end = dt.date.fromisoformat(str(fact["end"]))
                except ValueError:
                    continue  # malformed dates in concepts we do not map are not our concern
                if FLOW_MIN_DAYS <= (end - start).days <= FLOW_MAX_DAYS:
                    days.add(_day_of_year(end))
                    if latest is None or end > latest:
                        latest = end
    return sorted(days), latest


def _day_of_year(day: dt.date) -> int:
    # Fixed non-leap reference year so 30 Sep is the same day whatever the year.
    return dt.date(2001, day.month, min(day.day, 28) if day.month == 2 else day.day).timetuple().tm_yday


def _near_year_end(day: dt.date, year_end_days: list[int]) -> bool:
    doy = _day_of_year(day)
    for anchor in year_end_days:
        gap = abs(doy - anchor)
        if min(gap, 365 - gap) <= YEAR_END_TOLERANCE_DAYS:
            return True
    return False


def _concept_by_year(
    path: Path, usgaap: Mapping[str, Any], concept: str, flow: bool, year_end_days: list[int]
) -> dict[int, _Fact]:
    best: dict[int, _Fact] = {}
    for fact in _annual_fact_list(usgaap, concept):
        if not _is_annual_filing(fact):
            continue
        for key in ("end", "val", "filed", "accn"):
            if key not in fact:
                raise SourceError(
                    path,
                    f"concept '{concept}': a 10-K fact lacks field '{key}'",
                    "end, val, filed and accn on every fact",
                )
        end = _parse_date(path, concept, "end", fact["end"])
        start = fact.get("start")
        if flow:
            if start is None:
                continue
            days = (end - _parse_date(path, concept, "start", start)).days
            if not FLOW_MIN_DAYS <= days <= FLOW_MAX_DAYS:
                continue  # quarters and other partial periods that 10-Ks also tag
        else:
            if start is not None:
                continue
            if not _near_year_end(end, year_end_days):
                continue  # e.g. quarterly balances in a 10-K's unaudited quarterly note
        value = fact["val"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise SourceError(
                path, f"concept '{concept}': field 'val' is {value!r}", "a finite number of USD"
            )
        candidate = _Fact(
            fiscal_year_of(end), end, str(fact["filed"]), str(fact["accn"]), str(start or ""), float(value)
        )
        held = best.get(candidate.fiscal_year)
        if held is None or candidate.rank > held.rank:
            best[candidate.fiscal_year] = candidate
    return best


def _read_company(path: Path, ticker: str) -> _Company:
    name, cik, usgaap = _require_payload_fields(path, _load_payload(path))
    year_end_days, latest_end = _year_end_days(usgaap)
    values: dict[str, dict[int, tuple[float, str]]] = {}
    missing: dict[str, str] = {}
    latest_filed: str | None = None
    for metric in METRICS:
        tags = CONCEPTS[metric]
        present = [t for t in tags if _annual_fact_list(usgaap, t)]
        if not present:
            missing[metric] = f"no us-gaap USD facts for any of {list(tags)}"
            continue
        chosen: dict[int, tuple[float, str]] = {}
        for tag in tags:  # earlier concepts win a year; later ones only fill years still empty
            for year, fact in _concept_by_year(
                path, usgaap, tag, metric in FLOW_METRICS, year_end_days
            ).items():
                if year not in chosen:
                    chosen[year] = (fact.value, tag)
                    if latest_filed is None or fact.filed > latest_filed:
                        latest_filed = fact.filed
        if not chosen:
            missing[metric] = f"{present} present but no annual 10-K value (form 10-K/10-K/A, fp FY)"
            continue
        values[metric] = dict(sorted(chosen.items()))
    fye = f"{latest_end.month:02d}-{latest_end.day:02d}" if latest_end else None
    return _Company(ticker, name, cik, fye, values, missing, latest_filed)


def _pick_inputs(files: list[Path]) -> tuple[dict[str, Path], list[str]]:
    """Ticker -> payload file; a file whose ticker is only an alias yields to an exact match."""
    exact: dict[str, Path] = {}
    aliased: dict[str, Path] = {}
    for path in files:
        raw = _file_ticker(path)
        ticker = TICKER_ALIASES.get(raw, raw)
        bucket = aliased if raw != ticker else exact
        if ticker in bucket:
            raise SourceError(
                path,
                f"ticker {ticker} is also given by {bucket[ticker].name}",
                "one companyfacts payload per ticker",
            )
        bucket[ticker] = path
    skipped = [
        f"{p.name} (alias of {t}; {exact[t].name} used)" for t, p in sorted(aliased.items()) if t in exact
    ]
    chosen = dict(exact)
    for ticker, path in aliased.items():
        chosen.setdefault(ticker, path)
    return dict(sorted(chosen.items())), skipped


def build_real(target: Path, input_path: Path) -> None:
    """Derive `companies` + `annual_financials` from SEC companyfacts payloads in `input_path`."""
    input_path = Path(input_path)
    by_ticker, skipped = _pick_inputs(_payload_files(input_path))
    companies = [_read_company(path, ticker) for ticker, path in by_ticker.items()]
    company_rows = [
        (c.ticker, c.name, KNOWN_SECTORS.get(c.ticker), c.fiscal_year_end, c.cik) for c in companies
    ]
    fin_rows: list[tuple[str, int, str, float]] = []
    per_ticker: dict[str, int] = {}
    concepts_used: dict[str, dict[str, dict[str, int]]] = {}
    short_pairs: list[str] = []
    for c in companies:
        per_ticker[c.ticker] = 0
        concepts_used[c.ticker] = {}
        for metric in METRICS:
            by_year = c.values.get(metric, {})
            if len(by_year) == 1:
                short_pairs.append(f"{c.ticker}/{metric}")
            counts: dict[str, int] = {}
            for year, (usd, tag) in by_year.items():
                fin_rows.append((c.ticker, year, metric, usd / 1e9))
                counts[tag] = counts.get(tag, 0) + 1
            if counts:
                concepts_used[c.ticker][metric] = dict(sorted(counts.items()))
            per_ticker[c.ticker] += len(by_year)
    if not fin_rows:
        raise SourceError(
            input_path,
            "no annual 10-K value for any metric in any payload",
            f"us-gaap facts for {sorted(CONCEPTS)} in 10-K filings",
        )
    fin_rows.sort()
    with new_database(target) as conn:
        _create_schema(conn)
        conn.executemany("INSERT INTO companies VALUES (?, ?, ?, ?, ?)", company_rows)
        conn.executemany("INSERT INTO annual_financials VALUES (?, ?, ?, ?)", fin_rows)
        write_meta(
            conn,
            {
                "kind": "real",
                "synthetic": False,
                "source": SOURCE,
                "builder_version": BUILDER_VERSION,
                "inputs": [p.name for p in by_ticker.values()],
                "skipped_inputs": skipped,
                "input_format": INPUT_FORMAT,
                "rows_per_ticker": per_ticker,
                "missing_concepts": {c.ticker: c.missing for c in companies if c.missing},
                "pairs_with_one_year": short_pairs,
                "concepts_used": concepts_used,
                "latest_filed": {c.ticker: c.latest_filed for c in companies},
                "concept_map": {m: list(t) for m, t in CONCEPTS.items()},
                "rule": "docs/sec_edgar_mapping.md",
            },
        )
        require_tables(conn, target, REQUIRED)
