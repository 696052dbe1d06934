"""SEC EDGAR annual financials: the real-data adapter.

* `build_real` reads a folder of SEC XBRL `companyfacts` payloads (the JSON served by
  data.sec.gov/api/xbrl/companyfacts, optionally gzipped) and derives one value per
  (ticker, metric, fiscal year) from 10-K filings. The exact rule lives in
  docs/sec_edgar_mapping.md; in short: us-gaap USD facts from 10-K / 10-K/A with fp 'FY',
  flows must span 330-380 days, balances must fall on a fiscal-year-end date, the fiscal year is
  the calendar year of the period end (a period ending 1-7 January belongs to the year before),
  the latest filing wins, and among several concepts for one metric the first in
  `CONCEPTS[metric]` that has a value for that year wins.
"""

from __future__ import annotations

import ast
import datetime as dt
import gzip
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources.sec.schema import (
    METRICS,
    SEC_REQUIRED,
    fill_database,
)
from memsql_assets.lib.sources.sqlite_db import new_database, require_tables

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
        fill_database(
            conn,
            company_rows,
            fin_rows,
            True,
            {
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
        require_tables(conn, target, SEC_REQUIRED)
