"""Northwind (jpwhite3's SQLite edition): the seeded embedded builder.

The benchmark's database is jpwhite3/northwind-SQLite3 `dist/northwind.db`: Microsoft's classic
Northwind (830 orders, dates shifted +20 years to 2016-07-04 .. 2018-05-06 by `update.sql`) plus
~15,450 orders that upstream's `populate.py` "pumped" in with unseeded random dates from 2012-07-10
to the day it ran. That file cannot be regenerated exactly, so the embedded builder imitates its
shape, not its rows:

* Dates are TEXT 'YYYY-MM-DD', the format `update.sql` leaves behind (`date(x, '+20 year')`), so
  `strftime('%Y', OrderDate)` behaves as on the real data.
* Two order blocks, like the real file: a "classic" block (830 of 16,282 orders, scaled with the
  `orders` option) on weekdays between 2016-07-04 and 2018-05-06 with a rising order rate, and an
  "extended" block dated uniformly from 2012-07-10 to 2023-06-30 whose OrderIDs follow the classic
  ones without being in date order (as upstream's pump left them).
* Everything else follows the classic data's distributions: 1-5 lines per order with the real line
  count shares; quantities mostly multiples of 5; ~30 % of lines discounted by 5-25 % depending
  on the customer; RequiredDate = OrderDate + 28 days (sometimes 14 or 42); shipping lag 1-37
  days, NULL ShippedDate when the ship date would fall after the snapshot date; freight grows
  with the shipped quantity and the carrier; employee and carrier shares as in the real orders;
  customers are skewed (a few large accounts), and 4 of 93 customers never ordered (89 of 93
  have orders in the real dump). Orders dated before 2017 are priced from the previous price list
  (80 % of today's), as Microsoft's data has older unit prices on its older orders.
* Names are fictional (companies, people, products, carriers); countries, cities, postal-code
  and phone shapes and the country -> Region mapping of `update.sql` are realistic. They live in
  `lib/sources/northwind_names.yaml`; the weights and dates that shape the orders stay here.
  No row of the real data is copied; the real data is only read at run time by `build_real`.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources.northwind.schema import (
    NORTHWIND_BUILDER_VERSION,
    NORTHWIND_SOURCE,
    create_schema,
    insert_rows,
)
from memsql_assets.lib.sources.sqlite_db import new_database, write_meta

DEFAULT_ORDERS = 16282
# Below ~200 orders the extended block cannot give every ordering customer two distinct years.
MIN_ORDERS = 200
MAX_ORDERS = 200_000
OPTION_NAMES = ("orders",)

NAMES_FILE = Path(__file__).parents[1] / "northwind_names.yaml"
# Where the names file holds numbers (counts, RegionIDs, ReportsTo) or nulls; every other value is
# a string, so a YAML surprise (0512 read as 512, no as false) is an error, not a changed database.
_INT_AT = re.compile(
    r"(customer_countries|supplier_countries|contact_titles)\..+|categories\[\d+\]\.products"
    r"|employees\[\d+\]\.reports_to|territories\[\d+\]\[2\]"
)
_NULL_AT = re.compile(r"cities\..+\[\d+\]\[4\]|employees\[\d+\]\.reports_to")


def _check_leaves(path: Path, value: Any, where: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _check_leaves(path, item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_leaves(path, item, f"{where}[{i}]")
    elif value is None:
        if not _NULL_AT.fullmatch(where):
            raise SourceError(path, f"{where} is empty", "a value")
    elif isinstance(value, int) and not isinstance(value, bool):
        if not _INT_AT.fullmatch(where):
            raise SourceError(path, f"{where} is the number {value}", "a quoted string")
    elif not isinstance(value, str):
        raise SourceError(path, f"{where} is {value!r} ({type(value).__name__})", "a quoted string")


def read_names(path: Path = NAMES_FILE) -> dict[str, Any]:
    """The builder's name and value lists, each leaf checked against the type the builder expects."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SourceError(path, f"cannot be read: {exc}", "a UTF-8 YAML mapping of name lists") from exc
    if not isinstance(data, dict):
        raise SourceError(path, f"holds a {type(data).__name__}", "a YAML mapping of name lists")
    _check_leaves(path, data, "")
    return data


def _section(key: str, kind: type) -> Any:
    """One entry of the names file, which must be a `kind` (dict or list)."""
    value = _NAMES.get(key)
    if not isinstance(value, kind):
        found = "missing" if value is None else f"a {type(value).__name__}"
        raise SourceError(NAMES_FILE, f"'{key}' is {found}", f"a {kind.__name__} the builder reads")
    return value


def _rows(where: str, rows: Any, width: int) -> list[tuple[Any, ...]]:
    for row in rows:
        if not isinstance(row, list) or len(row) != width:
            raise SourceError(NAMES_FILE, f"{where}: {row!r} is not a row", f"a list of {width} values")
    return [tuple(row) for row in rows]


def _records(key: str, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    records = _section(key, list)
    for i, record in enumerate(records):
        if not isinstance(record, dict) or set(record) != set(fields):
            raise SourceError(NAMES_FILE, f"{key}[{i}] is {record!r}", f"a mapping of {', '.join(fields)}")
    return records


_NAMES = read_names()
# update.sql overwrites Region with a macro-region for these countries; elsewhere the original
# state/province survives.
UPDATE_REGION: dict[str, str] = _section("update_region", dict)
# country -> (city, language, postal-code shape, phone shape, native region)
CITIES: dict[str, list[tuple[str, str, str, str, str | None]]] = {
    country: _rows(f"cities.{country}", cities, 5) for country, cities in _section("cities", dict).items()
}
CUSTOMER_COUNTRIES: tuple[tuple[str, int], ...] = tuple(_section("customer_countries", dict).items())
SUPPLIER_COUNTRIES: tuple[tuple[str, int], ...] = tuple(_section("supplier_countries", dict).items())
LANGS: dict[str, dict[str, tuple[str, ...] | str]] = {
    lang: {key: value if isinstance(value, str) else tuple(value) for key, value in spec.items()}
    for lang, spec in _section("languages", dict).items()
}
CONTACT_TITLES: tuple[tuple[str, int], ...] = tuple(_section("contact_titles", dict).items())
SUPPLIER_TITLES: tuple[str, ...] = tuple(_section("supplier_titles", list))
_CATEGORY_RECORDS = _records("categories", ("name", "description", "products", "names", "packaging"))
CATEGORIES: tuple[tuple[str, str, int], ...] = tuple(
    (c["name"], c["description"], c["products"]) for c in _CATEGORY_RECORDS
)
PRODUCT_NAMES: tuple[tuple[str, ...], ...] = tuple(tuple(c["names"]) for c in _CATEGORY_RECORDS)
PACKAGING: tuple[tuple[str, ...], ...] = tuple(tuple(c["packaging"]) for c in _CATEGORY_RECORDS)
SHIPPERS: tuple[tuple[str, str], ...] = tuple(_rows("shippers", _section("shippers", list), 2))
# Employees' columns in the order of the Employees table (Photo, Notes and PhotoPath are added).
EMPLOYEE_FIELDS = ("last", "first", "title", "courtesy", "birth", "hire", "address", "city", "postal",
                   "country", "phone", "extension", "reports_to")  # fmt: skip
_EMPLOYEE_RECORDS = _records("employees", (*EMPLOYEE_FIELDS, "notes"))
EMPLOYEES: tuple[tuple[Any, ...], ...] = tuple(
    tuple(e[f] for f in EMPLOYEE_FIELDS) for e in _EMPLOYEE_RECORDS
)
EMPLOYEE_NOTES: tuple[str, ...] = tuple(e["notes"] for e in _EMPLOYEE_RECORDS)
NORTHWIND_REGIONS: tuple[str, ...] = tuple(_section("regions", list))
TERRITORIES: tuple[tuple[str, str, int], ...] = tuple(_rows("territories", _section("territories", list), 3))

# Order shares of the nine employees and three carriers in the classic orders.
EMPLOYEE_WEIGHTS = (123, 96, 127, 156, 42, 67, 72, 104, 43)
EMPLOYEE_TERRITORY_COUNTS = (2, 7, 4, 3, 7, 5, 10, 4, 7)
SHIPVIA_WEIGHTS = (249, 326, 255)
FREIGHT_RATE = {1: 0.85, 2: 1.15, 3: 1.0}  # per unit shipped, before noise
LINE_COUNT_WEIGHTS = (137, 283, 248, 125, 33)  # 1..5 lines per order, classic shares
DISCOUNTS = (0.05, 0.1, 0.15, 0.2, 0.25)


def _check_names() -> None:
    """The names file agrees with itself and with the weights above (one per employee, per carrier)."""
    problems = []
    if not len(EMPLOYEES) == len(EMPLOYEE_WEIGHTS) == len(EMPLOYEE_TERRITORY_COUNTS):
        problems.append(f"{len(EMPLOYEES)} employees for {len(EMPLOYEE_WEIGHTS)} order weights")
    if not len(SHIPPERS) == len(SHIPVIA_WEIGHTS) == len(FREIGHT_RATE):
        problems.append(f"{len(SHIPPERS)} shippers for {len(SHIPVIA_WEIGHTS)} carrier weights")
    if sum(EMPLOYEE_TERRITORY_COUNTS) > len(TERRITORIES):
        problems.append(f"{len(TERRITORIES)} territories for {sum(EMPLOYEE_TERRITORY_COUNTS)} assignments")
    for (category, _, count), names in zip(CATEGORIES, PRODUCT_NAMES, strict=True):
        if count > len(names):
            problems.append(f"category {category} draws {count} products from {len(names)} names")
    problems += [f"country {c} has no cities" for c, _ in (*CUSTOMER_COUNTRIES, *SUPPLIER_COUNTRIES)
                 if c not in CITIES]  # fmt: skip
    regional = [c for c, _ in CUSTOMER_COUNTRIES] + [e[EMPLOYEE_FIELDS.index("country")] for e in EMPLOYEES]
    problems += [f"country {c} has no update_region" for c in regional if c not in UPDATE_REGION]
    problems += [f"city {c[0]} speaks '{c[1]}', which has no names" for cs in CITIES.values() for c in cs
                 if c[1] not in LANGS]  # fmt: skip
    if problems:
        raise SourceError(NAMES_FILE, "; ".join(problems), "name lists consistent with the builder")


_check_names()

CLASSIC_START = dt.date(2016, 7, 4)
CLASSIC_END = dt.date(2018, 5, 6)
CLASSIC_SHARE = 830 / 16282
EXTENDED_START = dt.date(2012, 7, 10)
EXTENDED_END = dt.date(2023, 6, 30)
# Orders before this date were priced from the previous list (Northwind's older orders carry older prices).
PRICE_LIST_CHANGE = dt.date(2017, 1, 1)
OLD_PRICE_FACTOR = 0.8
INACTIVE_CUSTOMERS = 4
FIRST_ORDER_ID = 10248


def _check_options(options: Mapping[str, Any]) -> int:
    where = f"{NORTHWIND_SOURCE}.options"
    for key in options:
        if key not in OPTION_NAMES:
            raise SourceError(where, f"unknown option '{key}'", f"one of {list(OPTION_NAMES)}")
    orders = options.get("orders", DEFAULT_ORDERS)
    if isinstance(orders, bool) or not isinstance(orders, int):
        raise SourceError(where, f"option 'orders' is {orders!r}", "an integer")
    if not MIN_ORDERS <= orders <= MAX_ORDERS:
        raise SourceError(
            where, f"option 'orders' is {orders}", f"an integer in [{MIN_ORDERS}, {MAX_ORDERS}]"
        )
    return orders


def _fill(rng: random.Random, shape: str) -> str:
    """Instantiate a postal-code or phone shape: '#' -> digit, 'X' -> capital letter."""
    out = []
    for ch in shape:
        if ch == "#":
            out.append(str(rng.randrange(10)))
        elif ch == "X":
            out.append(chr(ord("A") + rng.randrange(26)))
        else:
            out.append(ch)
    return "".join(out)


# Letters NFKD does not decompose into ASCII (so "København" gives KOB..., not KBE...).
_TRANSLIT = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ß": "ss", "ł": "l", "Ł": "L"})


def _ascii_letters(text: str) -> list[str]:
    folded = (
        unicodedata.normalize("NFKD", text.translate(_TRANSLIT)).encode("ascii", "ignore").decode("ascii")
    )
    return [w.upper() for w in re.findall(r"[A-Za-z]+", folded)]


def _customer_code(name: str, taken: set[str]) -> str:
    """Northwind-style 5-letter CustomerID from the company name, unique among `taken`."""
    words = _ascii_letters(name) or ["CUSTOMER"]
    first, rest = words[0], "".join(words[1:])
    candidates = [
        first[:3] + rest[:2],
        first[:2] + rest[:3],
        first[:4] + rest[:1],
        first[:1] + rest[:4],
        first[:3] + rest[1:3],
        first[:3] + rest[2:4],
    ]
    for cand in candidates:
        cand = (cand + first + rest + "XXXXX")[:5]
        if cand not in taken:
            return cand
    stem = (first + rest + "XXXXX")[:4]
    for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        if stem + letter not in taken:
            return stem + letter
    raise AssertionError("no free customer code")  # 26 fallbacks per stem; never reached with 93 names


def _company(rng: random.Random, lang: str, role: str, city: str, used: set[str]) -> tuple[str, str, str]:
    """A unique company name plus its contact's first and last name."""
    spec = LANGS[lang]
    for _ in range(200):
        last = rng.choice(spec["last"])
        name = str(rng.choice(spec[role])).format(last=last, city=city)
        if name not in used:
            used.add(name)
            contact_last = last if rng.random() < 0.5 else rng.choice(spec["last"])
            return name, str(rng.choice(spec["first"])), str(contact_last)
    raise AssertionError(f"name patterns for {lang}/{role} exhausted")


def _address(rng: random.Random, lang: str) -> str:
    spec = LANGS[lang]
    return str(spec["street_fmt"]).format(s=rng.choice(spec["street"]), n=rng.randint(1, 320))


def _expand(counts: Sequence[tuple[str, int]]) -> list[str]:
    return [country for country, n in counts for _ in range(n)]


def _customers(rng: random.Random) -> list[tuple[Any, ...]]:
    used_names: set[str] = set()
    codes: set[str] = set()
    titles, title_w = zip(*CONTACT_TITLES, strict=True)
    rows = []
    for country in _expand(CUSTOMER_COUNTRIES):
        city, lang, postal, phone, _native = rng.choice(CITIES[country])
        name, first, last = _company(rng, lang, "customer", city, used_names)
        code = _customer_code(name, codes)
        codes.add(code)
        phone_no = _fill(rng, phone)
        fax = _fill(rng, phone) if rng.random() < 0.7 else None
        rows.append((code, name, f"{first} {last}", rng.choices(titles, title_w)[0], _address(rng, lang), city,
                     UPDATE_REGION[country], _fill(rng, postal), country, phone_no, fax))  # fmt: skip
    rows.sort(key=lambda r: r[0])  # the real table is in CustomerID order
    return rows


def _suppliers(rng: random.Random, used_names: set[str]) -> list[tuple[Any, ...]]:
    rows = []
    for sid, country in enumerate(_expand(SUPPLIER_COUNTRIES), start=1):
        city, lang, postal, phone, native = rng.choice(CITIES[country])
        name, first, last = _company(rng, lang, "supplier", city, used_names)
        fax = _fill(rng, phone) if rng.random() < 0.4 else None
        homepage = None
        if rng.random() < 0.15:
            slug = "".join(_ascii_letters(name)).lower()[:12]
            homepage = f"{name} (on the World Wide Web)#http://www.{slug}.example.com/#"
        region = UPDATE_REGION.get(country, native)
        rows.append((sid, name, f"{first} {last}", rng.choice(SUPPLIER_TITLES), _address(rng, lang), city, region,
                     _fill(rng, postal), country, _fill(rng, phone), fax, homepage))  # fmt: skip
    return rows


def _products(rng: random.Random, n_suppliers: int) -> list[tuple[Any, ...]]:
    total = sum(n for _, _, n in CATEGORIES)
    # every supplier delivers at least one product, the rest are spread at random
    suppliers = list(range(1, n_suppliers + 1)) + [
        rng.randint(1, n_suppliers) for _ in range(total - n_suppliers)
    ]
    rng.shuffle(suppliers)
    rows = []
    pid = 0
    for cat_index, (_, _, count) in enumerate(CATEGORIES):
        names = rng.sample(PRODUCT_NAMES[cat_index], count)
        for name in names:
            pid += 1
            price = min(263.5, max(2.5, rng.lognormvariate(math.log(20.0), 0.75)))
            price = round(round(price * 4) / 4, 2)
            discontinued = "1" if rng.random() < 0.1 else "0"
            in_stock = 0 if discontinued == "1" and rng.random() < 0.5 else rng.randint(0, 125)
            on_order = rng.choice((0, 0, 0, 0, 10, 20, 30, 40, 50, 60, 70, 80, 100))
            reorder = rng.choice((0, 5, 10, 15, 20, 25, 30))
            rows.append((pid, name, suppliers[pid - 1], cat_index + 1, rng.choice(PACKAGING[cat_index]), price,
                         in_stock, on_order, reorder, discontinued))  # fmt: skip
    return rows


def _employees() -> list[tuple[Any, ...]]:
    rows = []
    for eid, e in enumerate(EMPLOYEES, start=1):
        last, first, title, courtesy, birth, hire, address, city, postal, country, phone, ext, boss = e
        rows.append((eid, last, first, title, courtesy, birth, hire, address, city, UPDATE_REGION[country], postal,
                     country, phone, ext, None, EMPLOYEE_NOTES[eid - 1], boss,
                     f"http://accweb/employees/{last.lower()}.bmp"))  # fmt: skip
    return rows


def _employee_territories(rng: random.Random) -> list[tuple[int, str]]:
    unassigned = set(rng.sample(range(len(TERRITORIES)), len(TERRITORIES) - sum(EMPLOYEE_TERRITORY_COUNTS)))
    pool = [t[0] for i, t in enumerate(TERRITORIES) if i not in unassigned]
    rows: list[tuple[int, str]] = []
    pos = 0
    for eid, count in enumerate(EMPLOYEE_TERRITORY_COUNTS, start=1):
        rows.extend((eid, tid) for tid in pool[pos : pos + count])
        pos += count
    return rows


def _classic_dates(rng: random.Random, n: int) -> list[dt.date]:
    """Weekday dates whose density rises linearly over the classic period (the business grew)."""
    span = (CLASSIC_END - CLASSIC_START).days
    dates = []
    for _ in range(n):
        x = (-1.0 + math.sqrt(1.0 + 8.0 * rng.random())) / 2.0  # inverse CDF of density (1 + 2x) / 2
        day = CLASSIC_START + dt.timedelta(days=min(span, int(x * (span + 1))))
        while day.weekday() >= 5:  # orders are keyed in on business days
            day -= dt.timedelta(days=1)
        dates.append(max(day, CLASSIC_START))
    dates.sort()
    return dates


def _uniform_date(rng: random.Random, start: dt.date, end: dt.date) -> dt.date:
    return start + dt.timedelta(days=rng.randint(0, (end - start).days))


def _order_plan(
    rng: random.Random, n_orders: int, active: list[str], weights: list[float]
) -> list[tuple[str, dt.date, dt.date]]:
    """(customer, date, snapshot) per order, classic block first, then the extended block."""
    n_classic = max(1, round(n_orders * CLASSIC_SHARE))
    n_extended = n_orders - n_classic
    plan = [(c, d, CLASSIC_END) for c, d in zip(rng.choices(active, weights, k=n_classic),
                                               _classic_dates(rng, n_classic), strict=True)]  # fmt: skip
    # Two early/late orders per ordering customer guarantee everyone buys in at least two years.
    split = dt.date(2018, 1, 1)
    extended = []
    for cust in active:
        extended.append((cust, _uniform_date(rng, EXTENDED_START, split - dt.timedelta(days=1))))
        extended.append((cust, _uniform_date(rng, split, EXTENDED_END)))
    for cust in rng.choices(active, weights, k=n_extended - len(extended)):
        extended.append((cust, _uniform_date(rng, EXTENDED_START, EXTENDED_END)))
    rng.shuffle(extended)
    plan.extend((c, d, EXTENDED_END) for c, d in extended)
    return plan


def _quantity(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.03:
        return rng.choice((70, 80, 90, 100, 120, 130))
    if r < 0.58:
        return 5 * rng.randint(1, 8)
    return rng.randint(1, 60)


def _orders_and_lines(
    rng: random.Random, n_orders: int, customers: list[tuple[Any, ...]], products: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    customer_by_id = {c[0]: c for c in customers}
    ids = [c[0] for c in customers]
    inactive = set(rng.sample(ids, INACTIVE_CUSTOMERS))
    active = [cid for cid in ids if cid not in inactive]
    # skewed accounts (the classic data ranges from 1 to 31 orders per customer), not one giant
    weights = [rng.lognormvariate(0.0, 0.6) for _ in active]
    discount_rate = {cid: (0.0 if rng.random() < 0.35 else rng.uniform(0.2, 0.75)) for cid in active}
    product_ids = [p[0] for p in products]
    price = {p[0]: p[5] for p in products}
    popularity = [rng.lognormvariate(0.0, 0.7) for _ in products]
    cum_pop = []
    acc = 0.0
    for w in popularity:
        acc += w
        cum_pop.append(acc)
    employees = list(range(1, len(EMPLOYEES) + 1))

    orders, lines = [], []
    for index, (cust, order_date, snapshot) in enumerate(_order_plan(rng, n_orders, active, weights)):
        order_id = FIRST_ORDER_ID + index
        n_lines = rng.choices((1, 2, 3, 4, 5), LINE_COUNT_WEIGHTS)[0]
        chosen: list[int] = []
        while len(chosen) < n_lines:
            pid = rng.choices(product_ids, cum_weights=cum_pop)[0]
            if pid not in chosen:
                chosen.append(pid)
        old_prices = order_date < PRICE_LIST_CHANGE
        total_qty = 0
        for pid in sorted(chosen):
            qty = _quantity(rng)
            total_qty += qty
            unit = round(price[pid] * OLD_PRICE_FACTOR, 2) if old_prices else price[pid]
            disc = rng.choice(DISCOUNTS) if rng.random() < discount_rate[cust] else 0.0
            lines.append((order_id, pid, unit, qty, disc))
        ship_via = rng.choices((1, 2, 3), SHIPVIA_WEIGHTS)[0]
        freight = max(0.02, round(total_qty * FREIGHT_RATE[ship_via] * rng.lognormvariate(0.0, 0.55), 2))
        required = order_date + dt.timedelta(days=rng.choices((28, 14, 42), (85, 8, 7))[0])
        shipped = order_date + dt.timedelta(days=min(37, 1 + int(rng.expovariate(1 / 7.5))))
        c = customer_by_id[cust]
        orders.append((order_id, cust, rng.choices(employees, EMPLOYEE_WEIGHTS)[0], order_date.isoformat(),
                       required.isoformat(), shipped.isoformat() if shipped <= snapshot else None, ship_via,
                       freight, c[1], c[4], c[5], c[6], c[7], c[8]))  # fmt: skip
    return orders, lines


def build_embedded(target: Path, *, seed: int, options: Mapping[str, Any]) -> None:
    """Write a synthetic, schema-faithful Northwind to `target`; same seed and options => same bytes."""
    n_orders = _check_options(options)
    rng = random.Random(seed)
    customers = _customers(rng)
    suppliers = _suppliers(rng, {c[1] for c in customers})
    products = _products(rng, len(suppliers))
    territories = _employee_territories(rng)
    orders, lines = _orders_and_lines(rng, n_orders, customers, products)
    with new_database(target) as conn:
        create_schema(conn)
        insert_rows(conn, "Categories", [(i, n, d, None) for i, (n, d, _) in enumerate(CATEGORIES, start=1)])
        insert_rows(conn, "Customers", customers)
        insert_rows(conn, "Employees", _employees())
        insert_rows(conn, "Regions", [(i, r) for i, r in enumerate(NORTHWIND_REGIONS, start=1)])
        insert_rows(conn, "Territories", list(TERRITORIES))
        insert_rows(conn, "EmployeeTerritories", territories)
        insert_rows(conn, "Shippers", [(i, n, p) for i, (n, p) in enumerate(SHIPPERS, start=1)])
        insert_rows(conn, "Suppliers", suppliers)
        insert_rows(conn, "Products", products)
        insert_rows(conn, "Orders", orders)
        insert_rows(conn, "Order Details", lines)
        write_meta(
            conn,
            {
                "kind": "embedded",
                "synthetic": True,
                "source": NORTHWIND_SOURCE,
                "builder_version": NORTHWIND_BUILDER_VERSION,
                "seed": seed,
                "options": {"orders": n_orders},
                "date_format": "YYYY-MM-DD",
            },
        )
