"""Hand-built sessions, one per source, in which every value a turn needs is visible only in the earlier
turns' questions and SQL: a company (a region) named by its name and later needed by its id, a year
pair, a correction ("Actually, I meant …"), an entity switch, "the one we began with", and an unmarked
detour about a third entity (its question names everything its SQL compares) followed by a return cue
("Back to those two years: …") that resumes the conversation's entity, not the detour's. Their wording
and SQL are this file's own, not the benchmark's templates. Values are chosen from the embedded source
databases; the annotated state updates are what the grader (and annotated mode) use."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsql_assets.lib.benchmark.generate import Session, Turn, render

VARIANT = "hand"


@dataclass(frozen=True)
class Step:
    question: str  # its {names} are filled from the values the question states
    sql: str  # its {names} are filled from `stated` and the session's state
    stated: tuple[str, ...] = ()  # names the question states (the rest are referenced)
    binds: dict[str, str] = field(default_factory=dict)  # state key -> name whose value it takes


NW_COUNT = (
    "SELECT strftime('%Y', o.OrderDate) AS order_year, COUNT(*) AS n_orders FROM Orders o "
    "JOIN Customers c ON c.CustomerID = o.CustomerID WHERE c.CompanyName = {name} "
    "AND strftime('%Y', o.OrderDate) IN ({older_year}, {newer_year}) GROUP BY 1 ORDER BY 1"
)
NW_BY_ID = (
    "SELECT strftime('%Y', o.OrderDate) AS order_year, ROUND(SUM(o.Freight), 2) AS freight FROM Orders o "
    "WHERE o.CustomerID = {cid} AND strftime('%Y', o.OrderDate) IN ({older_year}, {newer_year}) GROUP BY 1 ORDER BY 1"
)
NW_ORDERS_BY_ID = (
    "SELECT strftime('%Y', o.OrderDate) AS order_year, COUNT(*) AS n_orders FROM Orders o "
    "WHERE o.CustomerID = {customer_id} AND strftime('%Y', o.OrderDate) IN ({older_year}, {newer_year}) GROUP BY 1 ORDER BY 1"
)
NW_DETOUR = "SELECT {agg} FROM Orders o JOIN Customers c ON c.CustomerID = o.CustomerID WHERE c.CompanyName = {third}"
NW = [
    Step("How many orders did {company} place in {y1} and {y2}?", NW_COUNT.replace("{name}", "{company}")
         .replace("{older_year}", "{y1}").replace("{newer_year}", "{y2}"), ("company", "y1", "y2"),
         {"customer_id": "customer_id", "first_customer": "customer_id", "older_year": "y1", "newer_year": "y2"}),
    Step("And how much freight did its orders carry in those two years?",
         NW_BY_ID.replace("{cid}", "{customer_id}")),
    Step("Actually, I meant {y3}, not the newer year: its freight in the older year and {y3}?",
         NW_BY_ID.replace("{cid}", "{customer_id}").replace("{newer_year}", "{y3}"), ("y3",), {"newer_year": "y3"}),
    Step("Now {other} instead: its orders in those two years.",
         NW_COUNT.replace("{name}", "{other}"), ("other",), {"customer_id": "other_id"}),
    Step("And its freight in those years?", NW_BY_ID.replace("{cid}", "{customer_id}")),
    Step("Back to the company we began with: its freight in those years?",
         NW_BY_ID.replace("{cid}", "{first_customer}"), (), {"customer_id": "first_customer"}),
    Step("And for the current company, the same for those two years once more?",
         NW_BY_ID.replace("{cid}", "{customer_id}")),
    Step("What is {third}'s total order count?", NW_DETOUR.replace("{agg}", "COUNT(*) AS n_orders"), ("third",)),
    Step("Give me the largest freight on any {third} order.",
         NW_DETOUR.replace("{agg}", "ROUND(MAX(o.Freight), 2) AS max_freight"), ("third",)),
    Step("Back to those two years: how many orders did it place in each?", NW_ORDERS_BY_ID),
]  # fmt: skip

SEC_BY_NAME = (
    "SELECT af.fiscal_year, af.value_billions FROM annual_financials af JOIN companies c ON c.ticker = af.ticker "
    "WHERE c.company_name = {name} AND af.metric = 'revenue' AND af.fiscal_year IN ({older_year}, {newer_year}) "
    "ORDER BY af.fiscal_year"
)
SEC_BY_TICKER = (
    "SELECT af.fiscal_year, af.value_billions FROM annual_financials af WHERE af.ticker = {tk} "
    "AND af.metric = 'cash' AND af.fiscal_year IN ({older_year}, {newer_year}) ORDER BY af.fiscal_year"
)
SEC = [
    Step("Show {company}'s revenue for {y1} and {y2}.", SEC_BY_NAME.replace("{name}", "{company}")
         .replace("{older_year}", "{y1}").replace("{newer_year}", "{y2}"), ("company", "y1", "y2"),
         {"ticker": "ticker", "first_ticker": "ticker", "older_year": "y1", "newer_year": "y2"}),
    Step("And its cash in those two years?", SEC_BY_TICKER.replace("{tk}", "{ticker}")),
    Step("Actually, I meant {y3} instead of the newer year: its cash for the older year and {y3}?",
         SEC_BY_TICKER.replace("{tk}", "{ticker}").replace("{newer_year}", "{y3}"), ("y3",), {"newer_year": "y3"}),
    Step("Now {other}: its revenue in those two years.", SEC_BY_NAME.replace("{name}", "{other}"), ("other",),
         {"ticker": "other_ticker"}),
    Step("Back to the company we began with: its cash in those years.",
         SEC_BY_TICKER.replace("{tk}", "{first_ticker}"), (), {"ticker": "first_ticker"}),
    Step("Which fiscal year had {third}'s largest revenue?",
         "SELECT af.fiscal_year FROM annual_financials af JOIN companies c ON c.ticker = af.ticker "
         "WHERE c.company_name = {third} AND af.metric = 'revenue' ORDER BY af.value_billions DESC LIMIT 1", ("third",)),
    Step("Returning to that pair of years, what was its cash?", SEC_BY_TICKER.replace("{tk}", "{ticker}")),
]  # fmt: skip

BIRD_COUNT = (
    "SELECT COUNT(DISTINCT l.loan_id) AS n_loans FROM loan l JOIN account a ON a.account_id = l.account_id "
    "JOIN district di ON di.district_id = a.district_id WHERE di.A3 = {region} AND l.status = {status}"
)
BIRD_AMOUNT = BIRD_COUNT.replace("COUNT(DISTINCT l.loan_id) AS n_loans", "ROUND(SUM(l.amount), 2) AS amount")
BIRD = [
    Step("How many loans with status {s1} are there in {r1}?", BIRD_COUNT.replace("{region}", "{r1}")
         .replace("{status}", "{s1}"), ("r1", "s1"), {"region": "r1", "first_region": "r1", "loan_status": "s1"}),
    Step("And what do they amount to?", BIRD_AMOUNT.replace("{status}", "{loan_status}")),
    Step("Actually, I meant status {s2}: the count there with status {s2}?",
         BIRD_COUNT.replace("{status}", "{s2}"), ("s2",), {"loan_status": "s2"}),
    Step("Now {r2}: the same count.", BIRD_COUNT.replace("{region}", "{r2}").replace("{status}", "{loan_status}"),
         ("r2",), {"region": "r2"}),
    Step("Back to the region we began with: what do those loans amount to?",
         BIRD_AMOUNT.replace("{region}", "{first_region}").replace("{status}", "{loan_status}"), (),
         {"region": "first_region"}),
    Step("Count the clients of {r3}.", "SELECT COUNT(*) AS n_clients FROM client cl JOIN district di "
         "ON di.district_id = cl.district_id WHERE di.A3 = {r3}", ("r3",)),
    Step("Going back to those loans, how many are there?", BIRD_COUNT.replace("{status}", "{loan_status}")),
]  # fmt: skip


def _one(db: Path, sql: str) -> tuple:
    with sqlite3.connect(db) as con:
        return con.execute(sql).fetchone()


def profiles(dbs: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """Each source's values, from its embedded database: two entities with orders (loans) in the years."""
    nw = dbs["northwind"]
    (first, first_id), (other, other_id), (third, _) = (
        _one(nw, f"SELECT CompanyName, CustomerID FROM Customers ORDER BY CustomerID LIMIT 1 OFFSET {i}")
        for i in (3, 7, 11)
    )
    sec = dbs["sec_edgar"]
    (company, ticker), (other_co, other_ticker), (third_co, _) = (
        _one(sec, f"SELECT company_name, ticker FROM companies ORDER BY ticker LIMIT 1 OFFSET {i}") for i in (2, 5, 8)
    )
    return {
        "northwind": {"company": first, "customer_id": first_id, "other": other, "other_id": other_id,
                      "third": third, "y1": "2016", "y2": "2017", "y3": "2019"},
        "sec_edgar": {"company": company, "ticker": ticker, "other": other_co, "other_ticker": other_ticker,
                      "third": third_co, "y1": 2018, "y2": 2019, "y3": 2021},
        "bird_financial": {"r1": "Prague", "r2": "south Bohemia", "r3": "north Moravia", "s1": "A", "s2": "C"},
    }  # fmt: skip


def session(source: str, prefix: str, steps: list[Step], profile: dict[str, Any]) -> Session:
    sid = f"{prefix}-1-001"
    state: dict[str, Any] = {}
    turns = []
    for index, step in enumerate(steps, start=1):
        stated = {k: profile[k] for k in step.stated}
        refs = [n for n in _names(step.sql) if n not in stated]
        values = {**state, **stated}
        sql = render(step.sql, values, literal=True)
        updates = {key: values[name] if name in values else profile[name] for key, name in step.binds.items()}
        turns.append(
            Turn(
                session_id=sid, source=prefix, tier=1, turn_index=index,
                question=render(step.question, {**profile, **stated}, literal=False),
                output_requirements="Return exactly the columns of the question, one row per year (or one row).",
                gt_sql=sql, paraphrase_sql=sql, fallback_sql=None, requires_prior_context=bool(refs),
                referenced_context_keys=refs, state_updates=updates, memory_critical=bool(refs),
                sql_template=step.sql, stated_values=stated, variant_id=VARIANT,
                guess_values={k: state[k] for k in refs},
            )
        )  # fmt: skip
        state.update(updates)
    return Session(sid, prefix, source, 1, len(turns), VARIANT, profile, turns)


def _names(template: str) -> list[str]:
    import string

    return list(dict.fromkeys(n for _, n, _, _ in string.Formatter().parse(template) if n))


def hand_sessions(dbs: dict[str, Path]) -> list[Session]:
    p = profiles(dbs)
    return [
        session("northwind", "NW", NW, p["northwind"]),
        session("sec_edgar", "SEC", SEC, p["sec_edgar"]),
        session("bird_financial", "BIRD", BIRD, p["bird_financial"]),
    ]


# What the conversation never shows (observed mode): the entities' ids, and the annotation key names.
def never_shown(sessions: list[Session]) -> set[str]:
    ids = {str(s.profile[k]) for s in sessions for k in ("customer_id", "other_id", "ticker", "other_ticker") if k in s.profile}
    keys = {k for s in sessions for t in s.turns for k in [*t.referenced_context_keys, *t.state_updates] if "_" in k}
    return ids | keys
