"""BIRD `financial`: the embedded builder.

The embedded builder (`build_embedded`) makes a synthetic bank shaped like the real one, so that
benchmark templates written against it also make sense on the real data:
- districts: the 77 Czech districts (okresy) of the 1990s, grouped under the 8 regions of `A3`
  with the real per-region counts and ids in the same region order; the demographic columns
  A4..A16 are invented but follow the real patterns (city districts have no small municipalities
  and 100 % urban share; north Bohemia and north Moravia have the highest unemployment). One
  district (Jesenik) has NULL A12/A15, like the `?` entries of the raw data.
- row counts are the real ones as quotas, not expectations, so every seed has the same shape:
  4,500 accounts, 5,369 clients, 4,500 OWNER + 869 DISPONENT dispositions, 682 loans
  (A 203 / B 31 / C 403 / D 45), 892 cards (classic 659 / junior 145 / gold 88), 6,471 orders.
- loans respect the real semantics of the status codes: A/B are finished contracts (date plus
  duration ends before 1999), C/D are still running; a loan is granted at least 102 days after
  the account was opened (the real minimum), `amount = duration * payments`, amounts span
  4,980..590,820 (both ends are pinned to the real extremes), durations 12..60 months.
- every (region, status) pair has at least one loan through the benchmark's join
  loan -> account -> disp(OWNER) -> client -> district, because sessions are parameterised by that
  pair; the real data lacks two of the 32 pairs (east Bohemia/B, north Bohemia/D). Beyond one
  seed loan per pair, loans fall on random accounts, so regions get loans in proportion to their
  clients, as in the real data.
- clients live mostly (91 %) in their account's district, disponents are mostly spouses of the
  owner (other gender, similar age); birth years follow the real decade mix within 1911..1987;
  junior cards go to owners born 1974 or later; every loan account has one UVER permanent order
  for its monthly payment.
- `trans` has `trans_rows` rows (BIRD's has ~1.06 M; the benchmark never reads it): per account a
  chronological ledger starting with the opening cash deposit, with a running balance that never
  goes negative; older accounts get proportionally more transactions.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources.bird.schema import (
    BIRD_BUILDER_VERSION,
    BIRD_REQUIRED,
    OPTION_DEFAULTS,
    SOURCE_NAME,
    create_schema,
    insert_rows,
)
from memsql_assets.lib.sources.sqlite_db import new_database, require_tables, write_meta

# Region order and district names as in PKDD'99 (district ids 1..77 follow this order).
BIRD_REGIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Prague", ("Hl.m. Praha",)),
    (
        "central Bohemia",
        (
            "Benesov", "Beroun", "Kladno", "Kolin", "Kutna Hora", "Melnik", "Mlada Boleslav",
            "Nymburk", "Praha - vychod", "Praha - zapad", "Pribram", "Rakovnik",
        ),
    ),
    (
        "south Bohemia",
        (
            "Ceske Budejovice", "Cesky Krumlov", "Jindrichuv Hradec", "Pelhrimov", "Pisek",
            "Prachatice", "Strakonice", "Tabor",
        ),
    ),
    (
        "west Bohemia",
        (
            "Domazlice", "Cheb", "Karlovy Vary", "Klatovy", "Plzen - mesto", "Plzen - jih",
            "Plzen - sever", "Rokycany", "Sokolov", "Tachov",
        ),
    ),
    (
        "north Bohemia",
        (
            "Ceska Lipa", "Decin", "Chomutov", "Jablonec n. Nisou", "Liberec", "Litomerice",
            "Louny", "Most", "Teplice", "Usti nad Labem",
        ),
    ),
    (
        "east Bohemia",
        (
            "Havlickuv Brod", "Hradec Kralove", "Chrudim", "Jicin", "Nachod", "Pardubice",
            "Rychnov nad Kneznou", "Semily", "Svitavy", "Trutnov", "Usti nad Orlici",
        ),
    ),
    (
        "south Moravia",
        (
            "Blansko", "Brno - mesto", "Brno - venkov", "Breclav", "Hodonin", "Jihlava", "Kromeriz",
            "Prostejov", "Trebic", "Uherske Hradiste", "Vyskov", "Zlin", "Znojmo", "Zdar nad Sazavou",
        ),
    ),
    (
        "north Moravia",
        (
            "Bruntal", "Frydek - Mistek", "Jesenik", "Karvina", "Novy Jicin", "Olomouc", "Opava",
            "Ostrava - mesto", "Prerov", "Sumperk", "Vsetin",
        ),
    ),
)  # fmt: skip
LOAN_STATUSES = ("A", "B", "C", "D")

# Real quotas (PROVENANCE.md); the builder reproduces them exactly for every seed.
N_ACCOUNTS = 4500
N_DISPONENTS = 869
LOAN_QUOTA = {"A": 203, "B": 31, "C": 403, "D": 45}
CARD_QUOTA = {"classic": 659, "junior": 145, "gold": 88}
# accounts with 1..5 permanent orders: 3,758 accounts, 6,471 orders
ORDERS_PER_ACCOUNT = {1: 2103, 2: 949, 3: 416, 4: 228, 5: 62}
FREQUENCIES = (("POPLATEK MESICNE", 4167), ("POPLATEK TYDNE", 240), ("POPLATEK PO OBRATU", 93))
ACCOUNT_YEARS = ((1993, 1139), (1994, 439), (1995, 661), (1996, 1363), (1997, 898))
BIRTH_DECADES = (
    (1910, 114),
    (1920, 487),
    (1930, 653),
    (1940, 992),
    (1950, 976),
    (1960, 959),
    (1970, 1022),
    (1980, 166),
)
BANKS = ("AB", "CD", "EF", "GH", "IJ", "KL", "MN", "OP", "QR", "ST", "UV", "WX", "YZ")
CITY_DISTRICTS = ("Hl.m. Praha", "Plzen - mesto", "Brno - mesto", "Ostrava - mesto")
# the bank's accounts per region (real counts): its branch network was not spread like the population
REGION_ACCOUNTS = (
    ("Prague", 554),
    ("central Bohemia", 574),
    ("south Bohemia", 370),
    ("west Bohemia", 430),
    ("north Bohemia", 457),
    ("east Bohemia", 544),
    ("south Moravia", 778),
    ("north Moravia", 793),
)
# 1995 unemployment (%) around which a region's districts scatter
REGION_UNEMPLOYMENT = {
    "Prague": 0.3,
    "central Bohemia": 2.0,
    "south Bohemia": 2.0,
    "west Bohemia": 2.2,
    "north Bohemia": 4.5,
    "east Bohemia": 1.9,
    "south Moravia": 3.0,
    "north Moravia": 4.3,
}

DATA_END = dt.date(1998, 12, 31)  # the data set's horizon: loans "running" run past it
HORIZON = dt.date(1999, 1, 1)
FIRST_LOAN = dt.date(1993, 7, 5)
LAST_LOAN = dt.date(1998, 12, 8)
FIRST_CARD = dt.date(1993, 11, 7)
LAST_CARD = dt.date(1998, 12, 29)
LAST_ACCOUNT = dt.date(1997, 12, 29)
LOAN_DELAY = dt.timedelta(days=102)  # real minimum between opening an account and its loan
MIN_LOAN_AMOUNT, MAX_LOAN_AMOUNT = 4980, 590820
DURATIONS = (12, 24, 36, 48, 60)
# finished contracts (A/B) were mostly short ones, running ones (C/D) mostly long
DURATION_WEIGHTS = {"finished": (30, 28, 22, 12, 8), "running": (8, 12, 20, 27, 33)}
# monthly payment ranges (CZK) per status: defaulted loans (B/D) were larger
PAYMENT_RANGE = {
    "A": (319, 9736, 3000),
    "B": (1671, 8308, 5000),
    "C": (304, 9910, 3500),
    "D": (1728, 9698, 5500),
}


def _option_values(target: Path, options: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(OPTION_DEFAULTS))
    if unknown:
        raise SourceError(
            target,
            f"unknown option '{unknown[0]}' for source {SOURCE_NAME}",
            f"options among {sorted(OPTION_DEFAULTS)}",
        )
    values = {**OPTION_DEFAULTS, **options}
    trans_rows = values["trans_rows"]
    if isinstance(trans_rows, bool) or not isinstance(trans_rows, int) or trans_rows < 0:
        raise SourceError(target, f"option 'trans_rows' is {trans_rows!r}", "a non-negative integer")
    return values


def _rand_date(rng: random.Random, lo: dt.date, hi: dt.date) -> dt.date:
    return dt.date.fromordinal(rng.randint(lo.toordinal(), hi.toordinal()))


def _years_before(day: dt.date, years: int) -> dt.date:
    return day.replace(year=day.year - years)


def _weighted(rng: random.Random, pairs: Sequence[tuple[Any, int]]) -> Any:
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def _birth_date(rng: random.Random) -> dt.date:
    decade = _weighted(rng, BIRTH_DECADES)
    lo = dt.date(max(decade, 1911), 1, 1)
    hi = dt.date(min(decade + 9, 1987), 12, 31)
    return _rand_date(rng, lo, hi)


def _districts(rng: random.Random) -> tuple[list[tuple[object, ...]], list[int]]:
    """District rows (ids 1..77 in region order) and their populations."""
    rows: list[tuple[object, ...]] = []
    populations: list[int] = []
    district_id = 0
    for region, names in BIRD_REGIONS:
        for name in names:
            district_id += 1
            city = name in CITY_DISTRICTS
            if name == "Hl.m. Praha":
                population = rng.randint(1_150_000, 1_250_000)
            elif city:
                population = rng.randint(160_000, 400_000)
            else:
                population = min(290_000, max(40_000, int(rng.lognormvariate(math.log(105_000), 0.35))))
            if city:
                small, mid, large, over_10k, cities, urban = 0, 0, 0, 1, 1, 100.0
            else:
                small, mid, large = rng.randint(0, 150), rng.randint(4, 70), rng.randint(1, 20)
                over_10k, cities = rng.randint(0, 5), rng.randint(1, 11)
                urban = round(rng.uniform(33.0, 90.0), 1)
            if name == "Hl.m. Praha":
                salary = rng.randint(12_000, 12_600)
            elif city:
                salary = rng.randint(9_800, 10_800)
            else:
                salary = rng.randint(8_100, 9_900)
            unemp95 = max(0.1, round(REGION_UNEMPLOYMENT[region] * rng.uniform(0.5, 1.6), 2))
            unemp96 = round(unemp95 * rng.uniform(1.05, 1.5), 2)
            entrepreneurs = rng.randint(81, 167)
            crime_rate = rng.uniform(0.05, 0.08) if city else rng.uniform(0.012, 0.04)
            crimes95 = int(population * crime_rate)
            crimes96 = int(crimes95 * rng.uniform(0.85, 1.15))
            populations.append(population)
            a12: float | None = unemp95
            a15: int | None = crimes95
            if name == "Jesenik":  # the raw data has '?' here: keep queries honest about NULLs
                a12, a15 = None, None
            rows.append(
                (
                    district_id, name, region, str(population), str(small), str(mid), str(large),
                    over_10k, cities, urban, salary, a12, unemp96, entrepreneurs, a15, crimes96,
                )
            )  # fmt: skip
    return rows, populations


def _loan_window(status: str, opened: dt.date, duration: int) -> tuple[dt.date, dt.date]:
    """Dates on which a loan of this status and duration can have been granted."""
    lo = max(opened + LOAN_DELAY, FIRST_LOAN)
    first_running = _years_before(HORIZON, duration // 12)  # granted from then on, it outlives the data
    if status in ("A", "B"):  # finished: the contract ended within the data
        return lo, first_running - dt.timedelta(days=1)
    return max(lo, first_running), LAST_LOAN


def _feasible(status: str, opened: dt.date) -> list[int]:
    return [d for d in DURATIONS if (w := _loan_window(status, opened, d))[0] <= w[1]]


def _make_loan(
    rng: random.Random, status: str, opened: dt.date, pinned: tuple[int, int] | None
) -> tuple[str, int, int, float]:
    if pinned is not None:
        duration, payment = pinned
    else:
        kind = "finished" if status in ("A", "B") else "running"
        weights = dict(zip(DURATIONS, DURATION_WEIGHTS[kind], strict=True))
        options = _feasible(status, opened)
        duration = rng.choices(options, weights=[weights[d] for d in options])[0]
        low, high, mode = PAYMENT_RANGE[status]
        payment = int(rng.triangular(low, high, mode))
        payment = max(payment, math.ceil(MIN_LOAN_AMOUNT / duration))
        payment = min(payment, MAX_LOAN_AMOUNT // duration)
    lo, hi = _loan_window(status, opened, duration)
    return _rand_date(rng, lo, hi).isoformat(), duration * payment, duration, float(payment)


_TRANS_KINDS = ("deposit", "income", "interest", "cash", "fee", "remit", "card", "vyber")
_TRANS_KIND_WEIGHTS = (14, 10, 16, 30, 8, 17, 2, 3)
_WITHDRAWALS = ("cash", "fee", "remit", "card", "vyber")
# (type, operation, amount, k_symbol, bank, partner account) of one transaction
_TransFields = tuple[str, str | None, int, str | None, str | None, int | None]


@dataclass(frozen=True)
class _Ledger:
    """What stays fixed across one account's transactions."""

    account_id: int
    pensioner: bool
    income: int
    income_bank: str
    income_account: int
    payment: float | None  # the monthly loan instalment, when the account has a loan
    has_card: bool


def _trans_per_account(rng: random.Random, n_rows: int, opened: list[dt.date]) -> list[int]:
    """How many of the `n_rows` transactions fall on each account: older accounts get more."""
    cum: list[float] = []
    total = 0.0
    for opened_on in opened:
        total += (HORIZON - opened_on).days
        cum.append(total)
    per_account = [0] * len(opened)
    for idx in rng.choices(range(len(opened)), cum_weights=cum, k=n_rows):
        per_account[idx] += 1
    return per_account


def _withdrawal(rng: random.Random, ledger: _Ledger, kind: str, balance: int) -> tuple[str, int]:
    """The kind and amount of a withdrawal; one the balance cannot cover becomes a deposit."""
    if kind == "fee":
        amount = 15
    elif kind == "remit" and ledger.payment is not None and rng.random() < 0.4:
        amount = int(ledger.payment)
    else:
        amount = max(100, int(round(rng.lognormvariate(math.log(2_500), 0.8), -2)))
    if amount > balance:  # a refused withdrawal: model the client topping up instead
        kind = "deposit"
    return kind, amount


def _transaction(rng: random.Random, ledger: _Ledger, kind: str, balance: int) -> _TransFields:
    """The fields of one transaction of `kind` on an account holding `balance`."""
    amount = 0
    if kind == "card" and not ledger.has_card:
        kind = "cash"
    if kind in _WITHDRAWALS:
        kind, amount = _withdrawal(rng, ledger, kind, balance)
    if kind == "open":
        return "PRIJEM", "VKLAD", rng.randint(2, 10) * 100, None, None, None
    if kind == "deposit":
        amount = max(100, int(round(rng.lognormvariate(math.log(6_000), 0.8), -2)))
        return "PRIJEM", "VKLAD", amount, None, None, None
    if kind == "income":
        k_symbol = "DUCHOD" if ledger.pensioner else None
        return "PRIJEM", "PREVOD Z UCTU", ledger.income, k_symbol, ledger.income_bank, ledger.income_account
    if kind == "interest":
        return "PRIJEM", None, max(1, round(balance * rng.uniform(0.001, 0.004))), "UROK", None, None
    if kind == "cash":
        return "VYDAJ", "VYBER", amount, None, None, None
    if kind == "fee":
        return "VYDAJ", "VYBER", amount, "SLUZBY", None, None
    if kind == "remit":
        if ledger.payment is not None and amount == int(ledger.payment):
            k_symbol = "UVER"
        else:
            k_symbol = rng.choices(("SIPO", "POJISTNE", "LEASING", None), weights=(50, 15, 5, 30))[0]
        bank, partner = rng.choice(BANKS), rng.randint(10_000_000, 99_999_999)
        return "VYDAJ", "PREVOD NA UCET", amount, k_symbol, bank, partner
    if kind == "card":
        return "VYDAJ", "VYBER KARTOU", amount, None, None, None
    return "VYBER", "VYBER", amount, None, None, None


def _account_ledger(
    rng: random.Random,
    account_id: int,
    start: dt.date,
    count: int,
    owner_born: dt.date,
    payment: float | None,
    has_card: bool,
) -> list[tuple[int, int, int, tuple[object, ...]]]:
    """One account's `count` transactions as (day, account, sequence, row without trans_id)."""
    days = [start.toordinal()] + sorted(
        rng.randint(start.toordinal(), DATA_END.toordinal()) for _ in range(count - 1)
    )
    ledger = _Ledger(
        account_id=account_id,
        pensioner=owner_born < dt.date(1935, 1, 1),
        income=rng.randint(2_000, 30_000),
        income_bank=rng.choice(BANKS),
        income_account=rng.randint(10_000_000, 99_999_999),
        payment=payment,
        has_card=has_card,
    )
    events: list[tuple[int, int, int, tuple[object, ...]]] = []
    balance = 0
    for seq, day in enumerate(days):
        kind = "open" if seq == 0 else rng.choices(_TRANS_KINDS, weights=_TRANS_KIND_WEIGHTS)[0]
        ttype, operation, amount, k_symbol, bank, partner = _transaction(rng, ledger, kind, balance)
        balance += amount if ttype == "PRIJEM" else -amount
        row: tuple[object, ...] = (
            account_id, dt.date.fromordinal(day).isoformat(), ttype, operation, amount, balance,
            k_symbol, bank, partner,
        )  # fmt: skip
        events.append((day, account_id, seq, row))
    return events


def _trans_rows(
    rng: random.Random,
    n_rows: int,
    accounts: list[tuple[int, int, str, str]],
    owner_birth: dict[int, dt.date],
    loan_payment: dict[int, float],
    has_card: set[int],
) -> list[tuple[object, ...]]:
    if n_rows == 0:
        return []
    opened = [dt.date.fromisoformat(a[3]) for a in accounts]
    per_account = _trans_per_account(rng, n_rows, opened)
    events: list[tuple[int, int, int, tuple[object, ...]]] = []
    for (account_id, _district, _freq, _date), start, count in zip(
        accounts, opened, per_account, strict=True
    ):
        if count == 0:
            continue
        events.extend(
            _account_ledger(
                rng,
                account_id,
                start,
                count,
                owner_birth[account_id],
                loan_payment.get(account_id),
                account_id in has_card,
            )
        )
    events.sort(key=lambda e: (e[0], e[1], e[2]))  # a ledger numbers transactions in time order
    rows: list[tuple[object, ...]] = []
    trans_id = 0
    for _day, _account, _seq, row in events:
        trans_id += rng.randint(1, 4)
        rows.append((trans_id, *row))
    return rows


def _district_picker(rng: random.Random, populations: list[int]) -> Callable[[], int]:
    """Draws a district: a region by the bank's real accounts per region, then by population."""
    district_ids = list(range(1, len(populations) + 1))
    region_of = _region_of()
    region_districts = {region: [d for d in district_ids if region_of[d] == region] for region, _ in BIRD_REGIONS}

    def pick_district() -> int:
        region = _weighted(rng, REGION_ACCOUNTS)
        members = region_districts[region]
        return rng.choices(members, weights=[populations[d - 1] for d in members])[0]

    return pick_district


def _region_of() -> dict[int, str]:
    """District id -> its region."""
    regions = [region for region, names in BIRD_REGIONS for _ in names]
    return dict(zip(range(1, len(regions) + 1), regions, strict=True))


def _accounts(rng: random.Random, pick_district: Callable[[], int]) -> list[tuple[int, int, str, str]]:
    """Account rows, with sparse ids as in the real data (max id 11,382)."""
    accounts: list[tuple[int, int, str, str]] = []
    for account_id in sorted(rng.sample(range(1, 11_383), N_ACCOUNTS)):
        year = _weighted(rng, ACCOUNT_YEARS)
        opened = _rand_date(rng, dt.date(year, 1, 1), min(dt.date(year, 12, 31), LAST_ACCOUNT))
        accounts.append((account_id, pick_district(), _weighted(rng, FREQUENCIES), opened.isoformat()))
    return accounts


@dataclass
class _People:
    """Client and disp rows, and per account what its owner's rows say."""

    clients: list[tuple[object, ...]] = field(default_factory=list)
    disps: list[tuple[object, ...]] = field(default_factory=list)
    owner_disp: dict[int, int] = field(default_factory=dict)
    owner_district: dict[int, int] = field(default_factory=dict)
    owner_birth: dict[int, dt.date] = field(default_factory=dict)


def _people(
    rng: random.Random, accounts: list[tuple[int, int, str, str]], pick_district: Callable[[], int]
) -> _People:
    """An owner per account, and a disponent (mostly the owner's spouse) on `N_DISPONENTS` of them."""
    with_disponent = set(rng.sample([a[0] for a in accounts], N_DISPONENTS))
    people = _People()
    next_id = 0
    for account_id, district_id, _freq, _opened in accounts:
        next_id += rng.randint(1, 4)
        home = district_id if rng.random() < 0.91 else pick_district()
        gender = "M" if rng.random() < 0.507 else "F"
        born = _birth_date(rng)
        people.clients.append((next_id, gender, born.isoformat(), home))
        people.disps.append((next_id, next_id, account_id, "OWNER"))
        people.owner_disp[account_id], people.owner_district[account_id] = next_id, home
        people.owner_birth[account_id] = born
        if account_id in with_disponent:
            next_id += rng.randint(1, 4)
            partner_gender = {"M": "F", "F": "M"}[gender] if rng.random() < 0.8 else gender
            partner_born = born + dt.timedelta(days=rng.randint(-8 * 365, 8 * 365))
            partner_born = min(max(partner_born, dt.date(1911, 1, 1)), dt.date(1987, 12, 31))
            partner_home = home if rng.random() < 0.9 else pick_district()
            people.clients.append((next_id, partner_gender, partner_born.isoformat(), partner_home))
            people.disps.append((next_id, next_id, account_id, "DISPONENT"))
    return people


def _loan_accounts(
    rng: random.Random,
    accounts: list[tuple[int, int, str, str]],
    opened_of: dict[int, dt.date],
    owner_district: dict[int, int],
) -> list[tuple[int, str]]:
    """(account, status) per loan: one seed loan per (region, status), the rest of the quota at random."""
    region_of = _region_of()
    by_region: dict[str, list[int]] = {region: [] for region, _ in BIRD_REGIONS}
    for account_id, _d, _f, _o in accounts:
        by_region[region_of[owner_district[account_id]]].append(account_id)
    assigned: list[tuple[int, str]] = []
    used: set[int] = set()
    for region, _names in BIRD_REGIONS:
        for status in LOAN_STATUSES:
            candidates = [a for a in by_region[region] if a not in used and _feasible(status, opened_of[a])]
            account_id = rng.choice(candidates)
            used.add(account_id)
            assigned.append((account_id, status))
    remaining = [s for s in LOAN_STATUSES for _ in range(LOAN_QUOTA[s] - len(BIRD_REGIONS))]
    rng.shuffle(remaining)
    pool = [a[0] for a in accounts if a[0] not in used]
    rng.shuffle(pool)
    for status in remaining:
        idx = next(i for i, a in enumerate(pool) if _feasible(status, opened_of[a]))
        assigned.append((pool.pop(idx), status))
    return assigned


def _loans(
    rng: random.Random, assigned: list[tuple[int, str]], opened_of: dict[int, dt.date]
) -> tuple[list[tuple[object, ...]], dict[int, float]]:
    """Loan rows, and each loan account's monthly payment."""
    # pin the real extremes on the first seed loans: Prague/A is the smallest, Prague/C the largest
    pins = {0: (12, MIN_LOAN_AMOUNT // 12), 2: (60, MAX_LOAN_AMOUNT // 60)}
    loan_data = {
        account_id: (status, _make_loan(rng, status, opened_of[account_id], pins.get(i)))
        for i, (account_id, status) in enumerate(assigned)
    }
    loans: list[tuple[object, ...]] = []
    loan_id = 4958
    for account_id in sorted(loan_data):
        status, (date, amount, duration, payments) = loan_data[account_id]
        loan_id += rng.randint(1, 6)
        loans.append((loan_id, account_id, date, amount, duration, payments, status))
    loan_payment = {account_id: data[1][3] for account_id, data in loan_data.items()}
    return loans, loan_payment


def _cards(
    rng: random.Random, owners: list[int], people: _People, opened_of: dict[int, dt.date]
) -> tuple[list[tuple[object, ...]], set[int]]:
    """Card rows and the accounts with a card: on owners' dispositions only; junior cards need an
    owner born 1974 or later."""
    young = [a for a in owners if people.owner_birth[a] >= dt.date(1974, 1, 1)]
    juniors = rng.sample(young, CARD_QUOTA["junior"])
    junior_set = set(juniors)
    adults = rng.sample(
        [a for a in owners if a not in junior_set], CARD_QUOTA["gold"] + CARD_QUOTA["classic"]
    )
    card_type = {a: "junior" for a in juniors}
    card_type.update({a: ("gold" if i < CARD_QUOTA["gold"] else "classic") for i, a in enumerate(adults)})
    cards: list[tuple[object, ...]] = []
    card_id = 0
    for account_id in sorted(card_type, key=lambda a: people.owner_disp[a]):
        card_id += rng.choices((1, 2), weights=(6, 4))[0]
        issued = _rand_date(rng, max(opened_of[account_id], FIRST_CARD), LAST_CARD)
        cards.append((card_id, people.owner_disp[account_id], card_type[account_id], issued.isoformat()))
    return cards, set(card_type)


_ORDER_SYMBOLS = (("SIPO", 3502), (" ", 1379), ("POJISTNE", 532), ("LEASING", 341), ("UVER", 35))


def _order_amount(rng: random.Random, symbol: str) -> float:
    """The amount of a permanent order that is not a loan account's instalment."""
    if symbol == "LEASING":
        return round(rng.uniform(397.0, 4975.0), 1)
    if symbol == "UVER":
        return float(rng.randint(304, 9910))
    median = {"SIPO": 3000.0, "POJISTNE": 900.0, " ": 1500.0}[symbol]
    return min(14882.0, max(1.0, round(rng.lognormvariate(math.log(median), 0.7), 1)))


def _orders(
    rng: random.Random, owners: list[int], loan_payment: dict[int, float]
) -> list[tuple[object, ...]]:
    """Permanent order rows: every loan account pays its instalment by an UVER order."""
    n_order_accounts = sum(ORDERS_PER_ACCOUNT.values())
    others = [a for a in owners if a not in loan_payment]
    order_accounts = sorted([*loan_payment, *rng.sample(others, n_order_accounts - len(loan_payment))])
    counts = [n for n, k in ORDERS_PER_ACCOUNT.items() for _ in range(k)]
    rng.shuffle(counts)
    orders: list[tuple[object, ...]] = []
    order_id = 29400
    for account_id, count in zip(order_accounts, counts, strict=True):
        for k in range(count):
            order_id += rng.randint(1, 4)
            if k == 0 and account_id in loan_payment:
                symbol, order_amount = "UVER", loan_payment[account_id]
            else:
                symbol = _weighted(rng, _ORDER_SYMBOLS)
                order_amount = _order_amount(rng, symbol)
            bank_to, account_to = rng.choice(BANKS), rng.randint(10_000_000, 99_999_999)
            orders.append((order_id, account_id, bank_to, account_to, order_amount, symbol))
    return orders


def build_embedded(target: Path, *, seed: int, options: Mapping[str, Any]) -> None:
    """Write a deterministic synthetic `financial.sqlite` (same seed and options => same bytes).

    The tables are drawn in a fixed order from one random stream: reordering the steps below
    changes every database built from a given seed."""
    values = _option_values(target, options)
    rng = random.Random(seed)
    districts, populations = _districts(rng)
    pick_district = _district_picker(rng, populations)
    accounts = _accounts(rng, pick_district)
    people = _people(rng, accounts, pick_district)
    opened_of = {a[0]: dt.date.fromisoformat(a[3]) for a in accounts}
    assigned = _loan_accounts(rng, accounts, opened_of, people.owner_district)
    loans, loan_payment = _loans(rng, assigned, opened_of)
    owners = [a[0] for a in accounts]
    cards, card_accounts = _cards(rng, owners, people, opened_of)
    orders = _orders(rng, owners, loan_payment)
    trans = _trans_rows(rng, values["trans_rows"], accounts, people.owner_birth, loan_payment, card_accounts)
    tables: dict[str, Sequence[Sequence[object]]] = {
        "district": districts,
        "account": accounts,
        "client": people.clients,
        "disp": people.disps,
        "card": cards,
        "loan": loans,
        "order": orders,
        "trans": trans,
    }
    with new_database(target) as conn:
        create_schema(conn)
        for table, rows in tables.items():
            insert_rows(conn, table, rows)
        meta = {"kind": "embedded", "synthetic": True, "source": SOURCE_NAME}
        write_meta(conn, {**meta, "builder_version": BIRD_BUILDER_VERSION, "seed": seed, "options": values})
        require_tables(conn, target, BIRD_REQUIRED)
