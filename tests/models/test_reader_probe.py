"""reader-probe: values recovered from the prompt as build_messages assembles it."""

from memsql_assets.lib.agent.prompts import PromptParts, build_messages
from memsql_assets.lib.models.builtins import message_text, parse_resolved_block
from memsql_assets.lib.models.reader_probe import PastTurn, read_prompt, template_regex, turn_values

SEC_T1_SQL = (
    "SELECT af.fiscal_year, ROUND(af.value_billions, 2) AS value_billions FROM annual_financials af "
    "JOIN companies c ON c.ticker = af.ticker WHERE c.company_name = 'O''Neil Corp' AND af.metric = 'cash' "
    "AND af.fiscal_year IN (2021, 2022) ORDER BY af.fiscal_year"
)
NET_INCOME_SQL = (
    "SELECT ROUND(af.value_billions, 2) AS value_billions FROM annual_financials af "
    "WHERE af.ticker = 'ONC' AND af.metric = 'net_income' AND af.fiscal_year = 2022"
)


def _texts(**parts):
    base = dict(source="SEC", schema="t(x)", question="q?", output_requirements="one row")
    return [message_text(m) for m in build_messages(PromptParts(**{**base, **parts}))]


def test_sql_literals_and_unfilled_keys_are_captured():
    rx = template_regex("WHERE a = {a} AND b IN ({b}, {a})", literal=True)
    m = rx.fullmatch("WHERE a = 'x''y' AND   b IN ({b}, 'x''y')")
    assert m and m.group("a") == "'x''y'" and m.group("b") == "{b}"
    assert rx.fullmatch("WHERE a = 'x' AND b IN (1, 'z')") is None  # a repeated name must repeat


def test_binds_rename_and_let_override():
    # "Now focus on the newer year. What was net income?": binds focus_year <- newer_year, metric from let.
    values = turn_values("SEC", PastTurn("Now focus on the newer year. What was net income?", NET_INCOME_SQL))
    assert values == {"focus_year": 2022, "metric": "net_income", "ticker": "ONC", "newer_year": 2022}
    # A first turn binds what its SQL states (the ticker is not in it: its SQL names the company).
    t1 = turn_values("SEC", PastTurn("Show O'Neil Corp cash for 2021 and 2022.", SEC_T1_SQL))
    assert t1 == {"metric": "cash", "older_year": 2021, "newer_year": 2022}
    # "Which year was higher for cash?": the metric is only that turn's `let` override, so it binds
    # nothing; the question tells it apart from "Which year was higher?", whose metric is a ref.
    higher = (
        "SELECT af.fiscal_year, ROUND(af.value_billions, 2) AS value_billions FROM annual_financials af "
        "WHERE af.ticker = 'ONC' AND af.metric = 'cash' "
        "AND af.fiscal_year IN (2021, 2022) ORDER BY af.value_billions DESC, af.fiscal_year DESC LIMIT 1"
    )
    assert "metric" not in turn_values("SEC", PastTurn("Which year was higher for cash?", higher))
    assert turn_values("SEC", PastTurn("Which year was higher?", higher))["metric"] == "cash"


def test_priority_resolved_then_recent_then_similar():
    recent = [  # most recent first, as working memory arrives
        {"question": "Now focus on the newer year. What was net income?", "sql": NET_INCOME_SQL},
        {"question": "Show O'Neil Corp cash for 2021 and 2022.", "sql": SEC_T1_SQL},
    ]
    similar = [{"question": "Show Other Inc cash for 2019 and 2020.", "sql": SEC_T1_SQL.replace("2021", "2019")}]
    texts = _texts(working=recent, episodic=similar, resolved={"ticker": "RES"})
    messages = [{"content": t} for t in texts]
    keys = ["ticker", "metric", "older_year", "focus_year"]
    got = read_prompt("SEC", texts, keys, parse_resolved_block(messages))
    assert got == {"ticker": "RES", "metric": "net_income", "older_year": 2021, "focus_year": 2022}
    only_similar = read_prompt("SEC", _texts(episodic=similar), ["older_year"], {})
    assert only_similar == {"older_year": 2019}
    assert read_prompt("SEC", _texts(), ["older_year"], {}) == {}


def test_a_year_pair_missing_one_year_takes_the_adjacent_one():
    # The window kept only a turn about the newer year: "both years" are that year and the one before.
    recent = [{"question": "Now focus on the newer year. What was net income?", "sql": NET_INCOME_SQL}]
    got = read_prompt("SEC", _texts(working=recent), ["ticker", "older_year", "newer_year"], {})
    assert got == {"ticker": "ONC", "newer_year": 2022, "older_year": 2021}
    # Text years stay text (Northwind's strftime years); a found pair is never overridden.
    assert read_prompt("NW", _texts(), ["older_year", "newer_year"], {"older_year": "1997"}) == {
        "older_year": "1997",
        "newer_year": "1998",
    }
    assert read_prompt("SEC", _texts(), ["older_year", "newer_year"], {"older_year": 2019, "newer_year": 2022}) == {
        "older_year": 2019,
        "newer_year": 2022,
    }
    # Neither year in the prompt: nothing to infer from.
    assert read_prompt("SEC", _texts(), ["older_year", "newer_year"], {}) == {}
